// Whether a process's seccomp filters let the in-process recorder in: the filters (read with
// ptrace, seccomp_filters.hpp) run on each system call the server and the recorder make in the
// program. One that would kill the program or send it SIGSYS, or refuse a call the recorder
// cannot do without, refuses the recorder in plain words, before anything is mapped; one that
// refuses a call with a fallback (memfd_create: private rings) lets it in.
#pragma once

#include <optional>
#include <string>

#include "tracer/types.hpp"

namespace tracer {

// Why the filters of stopped thread tid keep the recorder out; nothing when they let it in, or
// when they cannot be read (the kernel shows them to a server with CAP_SYS_ADMIN and no seccomp
// filter of its own: else logged, and the recorder tries).
std::optional<std::string> seccomp_refusal(Tid tid);

}  // namespace tracer
