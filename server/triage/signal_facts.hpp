// Linux signal facts triage reports: names, what si_code says, and whether a signal ends the
// program. Pure.
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

}  // namespace server::triage
