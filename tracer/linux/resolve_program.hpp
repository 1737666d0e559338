// The file exec would run for a program name (launch.cpp).
#pragma once

#include <string>

#include "base/result.hpp"

namespace tracer {

// Names with a '/' as they are, others searched in PATH; an error saying why it cannot run.
base::Result<std::string> resolve_program(const std::string& prog);

}  // namespace tracer
