// btrace.md §12: the tv.S program at 0x401000 and its branches, shared by the ring and the
// BTS-reader tests so that both backends are checked against the same GDB-validated vectors.
#pragma once

#include <vector>

#include "tracer/btrace/branch_tracer.hpp"

namespace test_btrace {

using tracer::BranchSample;
using tracer::BtraceBlock;
using Blocks = std::vector<BtraceBlock>;

inline constexpr tracer::Addr kMain = 0x401000;
inline constexpr tracer::Addr kLoopCall = 0x401004;  // call f
inline constexpr tracer::Addr kLoopJmp = 0x401009;   // jmp loop
inline constexpr tracer::Addr kF = 0x401020;
inline constexpr tracer::Addr kBreak = 0x401024;  // pop %rbp, where the breakpoint sits
inline constexpr tracer::Addr kRet = 0x401025;

inline constexpr BranchSample kCall{kLoopCall, kF};
inline constexpr BranchSample kReturn{kRet, kLoopJmp};
inline constexpr BranchSample kJump{kLoopJmp, kLoopCall};

inline constexpr std::uint64_t kTvRingBytes = 192;  // 8 samples

// TV2: the first call.
inline const Blocks kTv2Delta = {{kF, kBreak}, {0, kLoopCall}};
inline const Blocks kTv2All = {{kF, kBreak}};
// TV3: return, jump, call.
inline const std::vector<BranchSample> kTv3Samples = {kReturn, kJump, kCall};
inline const Blocks kTv3Delta = {{kF, kBreak}, {kLoopCall, kLoopCall}, {kLoopJmp, kLoopJmp}, {0, kRet}};
// TV5: five more loop iterations (15 samples) into a ring of 8; `new`/`all` see the last 8.
inline const Blocks kTv5New = {{kF, kBreak}, {kLoopCall, kLoopCall}, {kLoopJmp, kLoopJmp},
                               {kF, kRet},   {kLoopCall, kLoopCall}, {kLoopJmp, kLoopJmp},
                               {kF, kRet},   {kLoopCall, kLoopCall}};

}  // namespace test_btrace
