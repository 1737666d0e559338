// The file exec would run for a program name, and why it cannot (launch.cpp).
#pragma once

#include <string>

#include "base/result.hpp"

namespace tracer {

// Names with a '/' as they are, others searched in PATH; an error saying why it cannot run.
base::Result<std::string> resolve_program(const std::string& prog);
// In gdbserver's words ("Cannot exec PROG: " and the reason for err): scripts and GDB's
// testsuite look for them.
base::Error cannot_run(const std::string& prog, int err);

}  // namespace tracer
