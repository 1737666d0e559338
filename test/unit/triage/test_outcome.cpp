// How a process ended, in words: who sent its signal (siginfo's si_code and si_pid), whether that
// is a crash, and the summary every writer shows.
#include <catch2/catch.hpp>

#include <csignal>

#include "server/triage/report.hpp"

using namespace server::triage;

namespace {

// Died of signo with this siginfo, as the runner fills it (signal_outcome).
Outcome signalled(int signo, int code, tracer::Pid sender, tracer::Pid own_pid, std::string sender_name = {}) {
  Outcome o;
  o.kind = Outcome::Kind::Signal;
  o.signo = signo;
  o.si_code = code;
  o.has_si_code = true;
  o.exit_status = 128 + signo;
  o.sender = signal_sender(code, sender, own_pid);
  o.sender_pid = o.sender == Sender::Itself || o.sender == Sender::Process ? sender : 0;
  o.sender_name = std::move(sender_name);
  return o;
}

}  // namespace

TEST_CASE("signal_sender: the kernel, the process itself, another process, or the code alone", "[triage][outcome]") {
  CHECK(signal_sender(1, 0, 42) == Sender::Kernel);            // SEGV_MAPERR: a fault
  CHECK(signal_sender(SI_KERNEL, 0, 42) == Sender::Kernel);    // the terminal's ^C, an int3
  CHECK(signal_sender(SI_TKILL, 42, 42) == Sender::Itself);    // abort(), raise()
  CHECK(signal_sender(SI_USER, 42, 42) == Sender::Itself);     // kill(getpid()), a write to a closed pipe
  CHECK(signal_sender(SI_USER, 812, 42) == Sender::Process);   // kill(1), timeout(1)
  CHECK(signal_sender(SI_QUEUE, 812, 42) == Sender::Process);  // sigqueue
  CHECK(signal_sender(SI_TKILL, 812, 42) == Sender::Process);  // tgkill from elsewhere
  CHECK(signal_sender(SI_USER, 0, 42) == Sender::Kernel);      // no process sent it
  CHECK(signal_sender(SI_TIMER, 0, 42) == Sender::Unknown);    // the code says what
  CHECK(crash_signal(SIGSEGV));
  CHECK(crash_signal(SIGABRT));
  CHECK(crash_signal(SIGSYS));
  CHECK_FALSE(crash_signal(SIGTERM));
  CHECK_FALSE(crash_signal(SIGKILL));
}

TEST_CASE("Outcome: a fault and the program's own abort are crashes", "[triage][outcome]") {
  Outcome fault = signalled(SIGSEGV, 1, 0, 42);
  fault.has_fault_address = true;
  CHECK(fault.cause() == Outcome::Cause::Crash);
  CHECK(fault.summary() == "died of SIGSEGV (SEGV_MAPERR: address not mapped to object) at address 0x0");
  const Outcome abort = signalled(SIGABRT, SI_TKILL, 42, 42);
  CHECK(abort.cause() == Outcome::Cause::Crash);
  CHECK(abort.summary() == "died of SIGABRT (SI_TKILL: sent by tkill, tgkill or raise)");
  const Outcome general_protection = signalled(SIGSEGV, SI_KERNEL, 0, 42);
  CHECK(general_protection.cause() == Outcome::Cause::Crash);
  CHECK(general_protection.summary() == "died of SIGSEGV (SI_KERNEL: sent by the kernel)");
  CHECK(signalled(SIGSEGV, SI_USER, 42, 42).summary() == "died of SIGSEGV");  // raise(SIGSEGV)
  CHECK(cause_name(abort.cause()) == "crash");
}

TEST_CASE("Outcome: a signal from another process terminates, it is no crash, even a SIGSEGV", "[triage][outcome]") {
  const Outcome term = signalled(SIGTERM, SI_USER, 812, 42, "timeout");
  CHECK(term.cause() == Outcome::Cause::Terminated);
  CHECK(term.summary() == "terminated by SIGTERM from timeout (pid 812)");
  CHECK(cause_name(term.cause()) == "terminated");
  const Outcome segv = signalled(SIGSEGV, SI_USER, 900, 42, "bash");
  CHECK(segv.cause() == Outcome::Cause::Terminated);
  CHECK(segv.summary() == "terminated by SIGSEGV from bash (pid 900)");
  // The sender was gone before its name could be read: its pid alone.
  CHECK(signalled(SIGINT, SI_USER, 812, 42).summary() == "terminated by SIGINT from pid 812");
  CHECK(signalled(SIGHUP, SI_QUEUE, 812, 42, "py").summary() == "terminated by SIGHUP from py (pid 812)");
}

TEST_CASE("Outcome: terminated by the kernel or by itself, with what that means", "[triage][outcome]") {
  CHECK(signalled(SIGINT, SI_KERNEL, 0, 42).summary() ==
        "terminated by SIGINT from the kernel (the terminal's interrupt key)");
  CHECK(signalled(SIGXCPU, SI_KERNEL, 0, 42).summary() == "terminated by SIGXCPU from the kernel (its CPU time limit)");
  CHECK(signalled(SIGUSR1, SI_KERNEL, 0, 42).summary() == "terminated by SIGUSR1 from the kernel");
  const Outcome pipe = signalled(SIGPIPE, SI_USER, 42, 42);
  CHECK(pipe.cause() == Outcome::Cause::Terminated);
  CHECK(pipe.summary() == "terminated by SIGPIPE from itself (SI_USER: a write to a pipe or socket nobody reads, or kill)");
  CHECK(signalled(SIGTERM, SI_TKILL, 42, 42).summary() ==
        "terminated by SIGTERM from itself (SI_TKILL: sent by tkill, tgkill or raise)");
  CHECK(signalled(SIGALRM, SI_TIMER, 0, 42).summary() == "terminated by SIGALRM (SI_TIMER: a POSIX timer expired)");
  CHECK(signalled(SIGSEGV, SI_TIMER, 0, 42).cause() == Outcome::Cause::Terminated);  // nobody's fault
}

TEST_CASE("Outcome: killed with no siginfo, an exit, a timeout", "[triage][outcome]") {
  Outcome killed;
  killed.kind = Outcome::Kind::Signal;
  killed.signo = SIGKILL;
  killed.exit_status = 137;
  CHECK(killed.cause() == Outcome::Cause::Killed);
  CHECK(killed.summary() == "killed by SIGKILL");  // nothing says who: no sender is made up
  Outcome exited;
  exited.exit_status = 1;
  CHECK(exited.cause() == Outcome::Cause::Exit);
  CHECK(exited.summary() == "exited with status 1, no crash");
  CHECK(cause_name(exited.cause()) == "exit");
  Outcome timeout;
  timeout.kind = Outcome::Kind::Timeout;
  timeout.exit_status = 124;
  CHECK(timeout.cause() == Outcome::Cause::Timeout);
  CHECK(cause_name(timeout.cause()) == "timeout");
}

TEST_CASE("Outcome: triage itself interrupted; a process killed at the timeout or the interruption", "[triage][outcome]") {
  Outcome interrupted;
  interrupted.kind = Outcome::Kind::Interrupted;
  interrupted.signo = SIGTERM;
  interrupted.exit_status = 128 + SIGTERM;
  CHECK(interrupted.cause() == Outcome::Cause::Interrupted);
  CHECK(cause_name(interrupted.cause()) == "interrupted");
  CHECK(interrupted.summary() == "interrupted by SIGTERM: stopped");
  interrupted.killed = true;  // a descendant under dbt: nothing to stop it through
  CHECK(interrupted.summary() == "interrupted by SIGTERM: killed");
  Outcome timeout;
  timeout.kind = Outcome::Kind::Timeout;
  CHECK(timeout.summary() == "was still running at --timeout: stopped");
  timeout.killed = true;
  CHECK(timeout.summary() == "was still running at --timeout: killed");
}
