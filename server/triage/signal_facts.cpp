#include "server/triage/signal_facts.hpp"

#include <signal.h>
#include <string.h>

#include <array>
#include <string_view>

namespace server::triage {
namespace {

struct CodeName {
  int signo;  // 0: any signal
  int code;
  std::string_view name;
  std::string_view meaning;
};

// si_code values, from <asm-generic/siginfo.h>.
constexpr std::array<CodeName, 40> kCodes{{
    {SIGSEGV, 1, "SEGV_MAPERR", "address not mapped to object"},
    {SIGSEGV, 2, "SEGV_ACCERR", "invalid permissions for mapped object"},
    {SIGSEGV, 3, "SEGV_BNDERR", "failed address bound checks"},
    {SIGSEGV, 4, "SEGV_PKUERR", "access was denied by memory protection keys"},
    {SIGBUS, 1, "BUS_ADRALN", "invalid address alignment"},
    {SIGBUS, 2, "BUS_ADRERR", "nonexistent physical address"},
    {SIGBUS, 3, "BUS_OBJERR", "object-specific hardware error"},
    {SIGBUS, 4, "BUS_MCEERR_AR", "hardware memory error consumed on a machine check"},
    {SIGBUS, 5, "BUS_MCEERR_AO", "hardware memory error detected in process but not consumed"},
    {SIGILL, 1, "ILL_ILLOPC", "illegal opcode"},
    {SIGILL, 2, "ILL_ILLOPN", "illegal operand"},
    {SIGILL, 3, "ILL_ILLADR", "illegal addressing mode"},
    {SIGILL, 4, "ILL_ILLTRP", "illegal trap"},
    {SIGILL, 5, "ILL_PRVOPC", "privileged opcode"},
    {SIGILL, 6, "ILL_PRVREG", "privileged register"},
    {SIGILL, 7, "ILL_COPROC", "coprocessor error"},
    {SIGILL, 8, "ILL_BADSTK", "internal stack error"},
    {SIGFPE, 1, "FPE_INTDIV", "integer divide by zero"},
    {SIGFPE, 2, "FPE_INTOVF", "integer overflow"},
    {SIGFPE, 3, "FPE_FLTDIV", "floating-point divide by zero"},
    {SIGFPE, 4, "FPE_FLTOVF", "floating-point overflow"},
    {SIGFPE, 5, "FPE_FLTUND", "floating-point underflow"},
    {SIGFPE, 6, "FPE_FLTRES", "floating-point inexact result"},
    {SIGFPE, 7, "FPE_FLTINV", "floating-point invalid operation"},
    {SIGFPE, 8, "FPE_FLTSUB", "subscript out of range"},
    {SIGTRAP, 1, "TRAP_BRKPT", "process breakpoint"},
    {SIGTRAP, 2, "TRAP_TRACE", "process trace trap"},
    {SIGTRAP, 3, "TRAP_BRANCH", "process taken branch trap"},
    {SIGTRAP, 4, "TRAP_HWBKPT", "hardware breakpoint or watchpoint"},
    {SIGSYS, 1, "SYS_SECCOMP", "seccomp filter denied a system call"},
    {0, 0, "SI_USER", "sent by kill or raise"},
    {0, 0x80, "SI_KERNEL", "sent by the kernel"},
    {0, -1, "SI_QUEUE", "sent by sigqueue"},
    {0, -2, "SI_TIMER", "a POSIX timer expired"},
    {0, -3, "SI_MESGQ", "a message queue changed state"},
    {0, -4, "SI_ASYNCIO", "asynchronous I/O completed"},
    {0, -5, "SI_SIGIO", "queued SIGIO"},
    {0, -6, "SI_TKILL", "sent by tkill, tgkill or raise"},
    {0, -7, "SI_DETHREAD", "sent by execve killing subsidiary threads"},
    {0, -60, "SI_ASYNCNL", "asynchronous name lookup completed"},
}};

const CodeName* find_code(int signo, int code) {
  for (const auto& c : kCodes) {
    if (c.code == code && (c.signo == signo || (c.signo == 0 && (code <= 0 || code == 0x80)))) {
      return &c;
    }
  }
  return nullptr;
}

}  // namespace

std::string signal_name(int signo) {
  if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
    return "SIGRT" + std::to_string(signo - SIGRTMIN);
  }
  if (const char* abbrev = sigabbrev_np(signo); abbrev != nullptr) {
    return std::string("SIG") + abbrev;
  }
  return "signal " + std::to_string(signo);
}

std::string si_code_name(int signo, int code) {
  const CodeName* c = find_code(signo, code);
  return c != nullptr ? std::string(c->name) : "code " + std::to_string(code);
}

std::string si_code_meaning(int signo, int code) {
  const CodeName* c = find_code(signo, code);
  return c != nullptr ? std::string(c->meaning) : std::string();
}

bool has_fault_address(int signo, int code) {
  const bool fault = signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE;
  return fault && code > 0 && code != 0x80;
}

bool default_action_kills(int signo) {
  switch (signo) {
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
    case SIGCONT:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;  // ignored, or the process stops and can go on
    default:
      return signo > 0 && signo < 65;
  }
}

bool signal_kills(tracer::SignalAction action, int signo, bool from_fault) {
  switch (action) {
    case tracer::SignalAction::Handler:
      return false;
    case tracer::SignalAction::Ignore:
      return from_fault;  // the kernel will not let a fault be ignored
    case tracer::SignalAction::Default:
    case tracer::SignalAction::Unknown:
      break;
  }
  return default_action_kills(signo);
}

Sender signal_sender(int si_code, tracer::Pid sender_pid, tracer::Pid own_pid) {
  if (si_code > 0 || si_code == SI_KERNEL) {
    return Sender::Kernel;  // a fault's code, or the kernel's own
  }
  if (si_code != SI_USER && si_code != SI_TKILL && si_code != SI_QUEUE) {
    return Sender::Unknown;  // a timer, a message queue, asynchronous I/O: the code says it
  }
  if (sender_pid == 0) {
    return Sender::Kernel;  // sent from no process (interrupt context), or from outside our pid namespace
  }
  return sender_pid == own_pid ? Sender::Itself : Sender::Process;
}

std::string kernel_reason(int signo) {
  switch (signo) {
    case SIGINT: return "the terminal's interrupt key";
    case SIGQUIT: return "the terminal's quit key";
    case SIGHUP: return "the terminal hung up";
    case SIGALRM: return "alarm or a real-time interval timer";
    case SIGVTALRM:
    case SIGPROF: return "an interval timer";
    case SIGXCPU: return "its CPU time limit";
    default: return {};
  }
}

std::string self_reason(int signo, int code) {
  if (code == SI_USER && signo == SIGPIPE) {
    return "a write to a pipe or socket nobody reads, or kill";
  }
  if (code == SI_USER && signo == SIGXFSZ) {
    return "a write past its file size limit, or kill";
  }
  return si_code_meaning(signo, code);
}

bool crash_signal(int signo) {
  switch (signo) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGABRT:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;
  }
}

}  // namespace server::triage
