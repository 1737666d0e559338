// A crash's signature, for grouping crashes across runs (what CI dashboards group by): a short
// hash of the signal and the names of the top frames of the crashed thread, module-relative
// (the module's file name, not its path), with no address and no line number; stripped code
// by the nearest symbol before it, or its offset in the module. So it is the
// same across runs, ASLR and rebuilds that do not touch those functions, and differs when the
// crash is elsewhere. The frames counted are the first ones of the program's own code
// (own_code.hpp: not the C or C++ runtime's, whose abort, raise, std::terminate and __cxa_throw
// are the same for every abort, nor the standard library's templates inlined into it); a crash
// entirely inside the runtime uses those.
#pragma once

#include <string>
#include <vector>

#include "server/triage/report.hpp"

namespace server::triage {

// exception_type: an uncaught C++ exception's type (hashed too, after the signal), or "".
CrashSignature crash_signature(const Outcome& outcome, const std::vector<FrameReport>& backtrace,
                               const std::string& exception_type = {});

}  // namespace server::triage
