// A C++ exception nobody caught (std::terminate, then abort): its type and where it was thrown.
// A core dump shows terminate's frames; the throw site is what the user needs.
#pragma once

#include <optional>
#include <string>

#include "server/triage/report.hpp"
#include "tracer/target.hpp"

namespace server::triage {

// From the crashed thread's backtrace: terminate called from inside __cxa_throw or
// __cxa_rethrow (no handler: the thrower's frames are still on the stack), the thrower the
// first frame of the program's own code above it. Else from its history: the last call of
// __cxa_throw, from the function that made it (no line). The type: the type_info passed to
// __cxa_throw, found by the instruction before the call that loads rsi (a rip-relative lea, or a
// mov from the GOT), read from the stopped process (target; nullptr: none).
std::optional<UncaughtException> uncaught_exception(tracer::Target* target, const ThreadReport& thread);

}  // namespace server::triage
