#include <catch2/catch.hpp>

#include <csignal>

#include "server/triage/signal_facts.hpp"

using namespace server::triage;
using tracer::SignalAction;

TEST_CASE("signal names and si_code meanings", "[triage]") {
  CHECK(signal_name(SIGSEGV) == "SIGSEGV");
  CHECK(signal_name(SIGABRT) == "SIGABRT");
  CHECK(signal_name(SIGRTMIN + 2) == "SIGRT2");
  CHECK(si_code_name(SIGSEGV, 1) == "SEGV_MAPERR");
  CHECK(si_code_name(SIGBUS, 2) == "BUS_ADRERR");
  CHECK(si_code_name(SIGFPE, 1) == "FPE_INTDIV");
  CHECK(si_code_name(SIGABRT, -6) == "SI_TKILL");
  CHECK(si_code_name(SIGSEGV, 0x80) == "SI_KERNEL");
  CHECK(si_code_name(SIGSEGV, 77) == "code 77");
  CHECK(si_code_meaning(SIGSEGV, 2) == "invalid permissions for mapped object");
  CHECK(has_fault_address(SIGSEGV, 1));
  CHECK_FALSE(has_fault_address(SIGSEGV, 0x80));  // a general protection fault: no address
  CHECK_FALSE(has_fault_address(SIGABRT, -6));
}

TEST_CASE("which signals end the program", "[triage]") {
  CHECK(signal_kills(SignalAction::Default, SIGSEGV, true));
  CHECK(signal_kills(SignalAction::Default, SIGABRT, false));
  CHECK(signal_kills(SignalAction::Default, SIGTERM, false));
  CHECK(signal_kills(SignalAction::Unknown, SIGUSR1, false));
  CHECK_FALSE(signal_kills(SignalAction::Default, SIGCHLD, false));
  CHECK_FALSE(signal_kills(SignalAction::Default, SIGWINCH, false));
  CHECK_FALSE(signal_kills(SignalAction::Handler, SIGSEGV, true));
  CHECK_FALSE(signal_kills(SignalAction::Ignore, SIGPIPE, false));
  CHECK(signal_kills(SignalAction::Ignore, SIGSEGV, true));  // a fault cannot be ignored
}
