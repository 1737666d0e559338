// How a process ended, in words: what the text, JSON, HTML and annotations all say of it.
#include <fmt/format.h>

#include "server/triage/report.hpp"
#include "server/triage/writers.hpp"

namespace server::triage {

Outcome::Cause Outcome::cause() const {
  switch (kind) {
    case Kind::Exit:
      return Cause::Exit;
    case Kind::Timeout:
      return Cause::Timeout;
    case Kind::Interrupted:
      return Cause::Interrupted;
    case Kind::Signal:
      break;
  }
  if (!has_si_code) {
    return Cause::Killed;  // no stop came first: nothing says who sent it
  }
  // A fault, or the program's own abort(): a crash. The same signal from another process
  // (kill -SEGV) is that process's doing.
  if (crash_signal(signo) && (sender == Sender::Kernel || sender == Sender::Itself)) {
    return Cause::Crash;
  }
  return Cause::Terminated;
}

std::string_view cause_name(Outcome::Cause cause) {
  switch (cause) {
    case Outcome::Cause::Exit: return "exit";
    case Outcome::Cause::Crash: return "crash";
    case Outcome::Cause::Terminated: return "terminated";
    case Outcome::Cause::Killed: return "killed";
    case Outcome::Cause::Timeout: return "timeout";
    case Outcome::Cause::Interrupted: return "interrupted";
  }
  return "exit";
}

std::string Outcome::summary() const {
  const std::string signal = signal_name(signo);
  // "SI_TKILL: sent by tkill, tgkill or raise"; the name alone where it means nothing known.
  auto code = [&](const std::string& meaning) {
    const std::string name = si_code_name(signo, si_code);
    return meaning.empty() ? name : name + ": " + meaning;
  };
  const char* const then = killed ? "killed" : "stopped";
  switch (cause()) {
    case Cause::Exit:
      return fmt::format("exited with status {}, no crash", exit_status);
    case Cause::Timeout:
      return fmt::format("was still running at --timeout: {}", then);
    case Cause::Interrupted:
      return fmt::format("interrupted by {}: {}", signal, then);  // triage got it, not the program
    case Cause::Killed:
      return "killed by " + signal;  // no siginfo: no sender to name
    case Cause::Terminated:
      switch (sender) {
        case Sender::Process:
          return sender_name.empty() ? fmt::format("terminated by {} from pid {}", signal, sender_pid)
                                     : fmt::format("terminated by {} from {} (pid {})", signal, sender_name, sender_pid);
        case Sender::Itself:
          return "terminated by " + signal + " from itself (" + code(self_reason(signo, si_code)) + ")";
        case Sender::Kernel: {
          const std::string why = kernel_reason(signo);
          return "terminated by " + signal + " from the kernel" + (why.empty() ? "" : " (" + why + ")");
        }
        case Sender::Unknown:
          break;
      }
      return "terminated by " + signal + " (" + code(si_code_meaning(signo, si_code)) + ")";
    case Cause::Crash:
      break;
  }
  std::string text = "died of " + signal;
  if (si_code != 0 || has_fault_address) {
    text += " (" + code(si_code_meaning(signo, si_code)) + ")";
  }
  if (has_fault_address) {
    text += " at address " + hex(fault_address);
  }
  return text;
}

}  // namespace server::triage
