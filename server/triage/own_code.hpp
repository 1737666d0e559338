// Which frames are the program's own code and which the runtime's, for grouping crashes and
// pointing at them (Sentry's rule): the C and C++ runtimes, the dynamic linker and the unwinder
// (abort, raise, std::terminate, __cxa_throw: the same in every crash that passes through
// them), and the standard library's templates inlined into the program (a source file under
// /usr/include, say std::map::at's throw). A frame of any other library is the program's.
#pragma once

#include <string>

#include "server/triage/report.hpp"

namespace server::triage {

bool runtime_frame(const FrameReport& frame);

// A function's name as a headline shows it: no parameter list, and template arguments left out
// ("<...>") while it is longer than 80 characters. The reports keep the whole name.
std::string short_function(const std::string& function);

}  // namespace server::triage
