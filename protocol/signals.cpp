// GDB signal numbers (gdb/signals.def) <-> Linux x86-64 signal numbers. Plain tables, no
// <csignal>, so the mapping is the same whatever host builds it.
#include "protocol/signals.hpp"

#include <array>

namespace protocol {

namespace {

constexpr int kGdbUnknown = 143;
constexpr int kGdbRealtime32 = 77;
constexpr int kGdbRealtime33 = 45;  // ..REALTIME_63 = 75
constexpr int kGdbRealtime64 = 78;
constexpr int kLinuxRtMin = 32;
constexpr int kLinuxRtMax = 64;

// Linux 0..31 -> GDB. SIGSTKFLT (16) has no GDB equivalent; SIGPOLL is SIGIO (29).
constexpr std::array<int, 32> kLinuxToGdb = {
    0,    // 0
    1,    // SIGHUP
    2,    // SIGINT
    3,    // SIGQUIT
    4,    // SIGILL
    5,    // SIGTRAP
    6,    // SIGABRT
    10,   // SIGBUS
    8,    // SIGFPE
    9,    // SIGKILL
    30,   // SIGUSR1
    11,   // SIGSEGV
    31,   // SIGUSR2
    13,   // SIGPIPE
    14,   // SIGALRM
    15,   // SIGTERM
    kGdbUnknown,  // SIGSTKFLT
    20,   // SIGCHLD
    19,   // SIGCONT
    17,   // SIGSTOP
    18,   // SIGTSTP
    21,   // SIGTTIN
    22,   // SIGTTOU
    16,   // SIGURG
    24,   // SIGXCPU
    25,   // SIGXFSZ
    26,   // SIGVTALRM
    27,   // SIGPROF
    28,   // SIGWINCH
    23,   // SIGIO
    32,   // SIGPWR
    12,   // SIGSYS
};

constexpr int kGdbPoll = 33;
constexpr int kLinuxIo = 29;

// GDB signals 0..33 by name (signals.def).
constexpr std::array<const char*, 34> kGdbNames = {
    "0",       "SIGHUP",  "SIGINT",  "SIGQUIT", "SIGILL",  "SIGTRAP", "SIGABRT",  "SIGEMT",   "SIGFPE",
    "SIGKILL", "SIGBUS",  "SIGSEGV", "SIGSYS",  "SIGPIPE", "SIGALRM", "SIGTERM",  "SIGURG",   "SIGSTOP",
    "SIGTSTP", "SIGCONT", "SIGCHLD", "SIGTTIN", "SIGTTOU", "SIGIO",   "SIGXCPU",  "SIGXFSZ",  "SIGVTALRM",
    "SIGPROF", "SIGWINCH", "SIGLOST", "SIGUSR1", "SIGUSR2", "SIGPWR",  "SIGPOLL",
};

}  // namespace

int gdb_signal_from_host(int linux_signal) {
  if (linux_signal >= 0 && linux_signal < static_cast<int>(kLinuxToGdb.size())) {
    return kLinuxToGdb[static_cast<std::size_t>(linux_signal)];
  }
  if (linux_signal == kLinuxRtMin) {
    return kGdbRealtime32;
  }
  if (linux_signal > kLinuxRtMin && linux_signal < kLinuxRtMax) {
    return kGdbRealtime33 + (linux_signal - 33);
  }
  if (linux_signal == kLinuxRtMax) {
    return kGdbRealtime64;
  }
  return kGdbUnknown;
}

std::string gdb_signal_name(int gdb_signal) {
  if (gdb_signal >= 0 && gdb_signal < static_cast<int>(kGdbNames.size())) {
    return kGdbNames[static_cast<std::size_t>(gdb_signal)];
  }
  const int host = host_signal_from_gdb(gdb_signal);
  return host >= kLinuxRtMin ? "SIG" + std::to_string(host) : "?";  // real-time: GDB's "SIG34"
}

int host_signal_from_gdb(int gdb_signal) {
  if (gdb_signal == kGdbUnknown) {
    return 0;
  }
  if (gdb_signal == kGdbPoll) {
    return kLinuxIo;
  }
  for (std::size_t i = 0; i < kLinuxToGdb.size(); ++i) {
    if (kLinuxToGdb[i] == gdb_signal) {
      return static_cast<int>(i);
    }
  }
  if (gdb_signal == kGdbRealtime32) {
    return kLinuxRtMin;
  }
  if (gdb_signal >= kGdbRealtime33 && gdb_signal < kGdbRealtime33 + 31) {
    return 33 + (gdb_signal - kGdbRealtime33);
  }
  if (gdb_signal == kGdbRealtime64) {
    return kLinuxRtMax;
  }
  return 0;
}

}  // namespace protocol
