// A process's seccomp filters, read with ptrace and run here on system calls the server means to
// make in it: whether the filters would let a call through, refuse it, or kill the program for
// it. The kernel runs every filter of the thread and takes the verdict of highest precedence
// (kill the process, kill the thread, trap, errno, user notification, trace, log, allow); so do we.
// Classic BPF as seccomp admits it (the kernel checked the program when it was installed):
// loads of struct seccomp_data, the scratch memory, ALU, jumps, returns.
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

using SeccompProgram = std::vector<sock_filter>;

// The filters of a stopped, traced thread (PTRACE_SECCOMP_GET_FILTER), the newest first; the
// server needs CAP_SYS_ADMIN for them.
base::Result<std::vector<SeccompProgram>> read_seccomp_filters(Tid tid);

// What one filter returns for `data` (SECCOMP_RET_* with its data).
std::uint32_t run_seccomp_filter(const SeccompProgram& program, const seccomp_data& data);

// What the filters together decide for `data`: the verdict of highest precedence.
std::uint32_t seccomp_verdict(const std::vector<SeccompProgram>& filters, const seccomp_data& data);

// Whether a verdict kills the program or sends it a signal (kill the process or thread, trap).
bool seccomp_verdict_harms(std::uint32_t verdict);

}  // namespace tracer
