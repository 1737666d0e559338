// Linux signal facts triage reports: names, what si_code says, who sent a signal, and whether
// it ends the program. Pure.
#pragma once

#include <string>

#include "tracer/types.hpp"

namespace server::triage {

std::string signal_name(int signo);               // "SIGSEGV"; "SIGRT3"; "signal 99"
std::string si_code_name(int signo, int code);    // "SEGV_MAPERR", "SI_USER", "code 42"
std::string si_code_meaning(int signo, int code); // "address not mapped to object"
// Does the fault carry an address (si_addr)?
bool has_fault_address(int signo, int code);
// The default action of signo terminates the process (with or without a core).
bool default_action_kills(int signo);
// Would delivering signo (kernel-made when `from_fault`) end a process that does `action`
// with it? A fault the process ignores, or cannot take because it is blocked, still kills it.
bool signal_kills(tracer::SignalAction action, int signo, bool from_fault);

// Who sent a signal, by its siginfo: the kernel (a fault, or one of its own: the terminal's
// keys, a timer, a limit), the process itself (raise, abort, kill of its own pid, and what the
// kernel sends on its behalf: SIGPIPE), another process (kill, tgkill, sigqueue: si_pid), or
// nobody the code names (a POSIX timer, asynchronous I/O).
enum class Sender { Unknown, Kernel, Itself, Process };
Sender signal_sender(int si_code, tracer::Pid sender_pid, tracer::Pid own_pid);
// What a signal from the kernel or from the process itself says happened, where the si_code
// does not say it ("the terminal's interrupt key" for SIGINT from the kernel); empty: nothing more.
std::string kernel_reason(int signo);
std::string self_reason(int signo, int code);
// SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS: a crash when the kernel or the program itself sent it.
bool crash_signal(int signo);

}  // namespace server::triage
