// How the server starts a program (command line, vRun, R): the settings GDB sent and the
// command line's, and gdbserver's path rule; and the stop an attach (--attach, vAttach) reports.
#pragma once

#include <string>
#include <vector>

#include "server/handlers/context.hpp"

namespace server {

// PROG ARGS... as the next program starts. A PROG without '/' that names a file in the
// server's directory is that file (gdbserver's rule: `gdbserver :1234 prog` in prog's
// directory), else the shell or PATH finds it. With args_are_line, `program` is {PROG, LINE}:
// the shell reads LINE (expanding it), or, without the shell, it is split as GDB splits it.
tracer::LaunchSpec launch_spec(const ServerOptions& options, const ServerState& server,
                               const std::vector<std::string>& program, bool args_are_line = false);

// All-stop, just attached to pid: the signal a thread stopped with instead of the attach's
// SIGSTOP, as gdbserver reports it; else the leader with signal 0.
tracer::StopEvent attach_stop(tracer::Target& target, tracer::Pid pid);

}  // namespace server
