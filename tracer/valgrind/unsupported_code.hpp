// What the dbt recorder cannot run, found before the program starts: Valgrind 3.19 translates
// no AVX-512, so an executable built with it would die of SIGILL under the recorder.
#pragma once

#include <optional>
#include <string>

namespace tracer {

// Why the recorder cannot run the executable at path, or nothing (also when it cannot tell).
std::optional<std::string> code_the_recorder_cannot_run(const std::string& path);

}  // namespace tracer
