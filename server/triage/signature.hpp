// A crash's signature, for grouping crashes across runs (what CI dashboards group by): a short
// hash of the signal and the names of the top frames of the crashed thread, module-relative
// (the module's file name, not its path), with no address and no line number; stripped code
// by the nearest symbol before it, or its offset in the module. So it is the
// same across runs, ASLR and rebuilds that do not touch those functions, and differs when the
// crash is elsewhere. The frames counted are the first ones outside the C runtime's own
// (libc, ld.so, libgcc_s: abort, raise, __assert_fail and the like are the same for every
// abort); a crash entirely inside them uses those.
#pragma once

#include <string>
#include <vector>

#include "server/triage/report.hpp"

namespace server::triage {

CrashSignature crash_signature(const Outcome& outcome, const std::vector<FrameReport>& backtrace);

}  // namespace server::triage
