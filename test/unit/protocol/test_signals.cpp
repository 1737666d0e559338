// GDB <-> Linux signal numbering.
#include <catch2/catch.hpp>

#include <csignal>

#include "protocol/signals.hpp"

using protocol::gdb_signal_from_host;
using protocol::host_signal_from_gdb;

TEST_CASE("common signals match reference section 14", "[signals]") {
  struct Pair {
    int linux_sig;
    int gdb_sig;
  };
  const Pair pairs[] = {
      {0, 0},           {SIGHUP, 1},     {SIGINT, 2},     {SIGQUIT, 3},   {SIGILL, 4},     {SIGTRAP, 5},
      {SIGABRT, 6},     {SIGFPE, 8},     {SIGKILL, 9},    {SIGBUS, 0xa},  {SIGSEGV, 0xb},  {SIGSYS, 0xc},
      {SIGPIPE, 0xd},   {SIGALRM, 0xe},  {SIGTERM, 0xf},  {SIGURG, 0x10}, {SIGSTOP, 0x11}, {SIGTSTP, 0x12},
      {SIGCONT, 0x13},  {SIGCHLD, 0x14}, {SIGTTIN, 0x15}, {SIGTTOU, 0x16}, {SIGIO, 0x17},  {SIGXCPU, 0x18},
      {SIGXFSZ, 0x19},  {SIGVTALRM, 0x1a}, {SIGPROF, 0x1b}, {SIGWINCH, 0x1c}, {SIGUSR1, 0x1e},
      {SIGUSR2, 0x1f},  {SIGPWR, 0x20},  {32, 0x4d},      {33, 0x2d},     {34, 0x2e},      {63, 0x4b},
      {64, 0x4e},
  };
  for (const auto& p : pairs) {
    INFO("linux " << p.linux_sig << " gdb " << p.gdb_sig);
    CHECK(gdb_signal_from_host(p.linux_sig) == p.gdb_sig);
    CHECK(host_signal_from_gdb(p.gdb_sig) == p.linux_sig);
  }
}

TEST_CASE("signals without an equivalent", "[signals]") {
  CHECK(gdb_signal_from_host(16) == 143);  // SIGSTKFLT
  CHECK(gdb_signal_from_host(65) == 143);
  CHECK(gdb_signal_from_host(-1) == 143);
  CHECK(host_signal_from_gdb(143) == 0);   // UNKNOWN
  CHECK(host_signal_from_gdb(7) == 0);     // EMT
  CHECK(host_signal_from_gdb(29) == 0);    // LOST
  CHECK(host_signal_from_gdb(33) == SIGIO);  // POLL
  CHECK(host_signal_from_gdb(0x4c) == 0);  // CANCEL
  CHECK(host_signal_from_gdb(0x4f) == 0);  // REALTIME_65
  CHECK(host_signal_from_gdb(-1) == 0);
  CHECK(host_signal_from_gdb(1000) == 0);
}

TEST_CASE("every Linux signal round trips", "[signals]") {
  for (int s = 1; s <= 64; ++s) {
    if (s == 16) {
      continue;
    }
    INFO("linux " << s);
    int g = gdb_signal_from_host(s);
    CHECK(g != 143);
    CHECK(host_signal_from_gdb(g) == s);
  }
}

TEST_CASE("GDB's signal names, as gdbserver prints them", "[signals]") {
  using protocol::gdb_signal_name;
  CHECK(gdb_signal_name(gdb_signal_from_host(SIGABRT)) == "SIGABRT");
  CHECK(gdb_signal_name(gdb_signal_from_host(SIGSEGV)) == "SIGSEGV");
  CHECK(gdb_signal_name(gdb_signal_from_host(SIGIO)) == "SIGIO");
  CHECK(gdb_signal_name(gdb_signal_from_host(SIGPWR)) == "SIGPWR");
  CHECK(gdb_signal_name(gdb_signal_from_host(32)) == "SIG32");
  CHECK(gdb_signal_name(gdb_signal_from_host(34)) == "SIG34");
  CHECK(gdb_signal_name(gdb_signal_from_host(64)) == "SIG64");
  CHECK(gdb_signal_name(gdb_signal_from_host(16)) == "?");  // SIGSTKFLT: GDB has none
  CHECK(gdb_signal_name(0) == "0");
}
