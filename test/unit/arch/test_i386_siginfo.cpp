// siginfo of an i386 program (arch/x86/i386_siginfo): the kernel's 64-bit layout to the one the
// program (and GDB's $_siginfo for i386) uses, and back, for each union member.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstring>

#include "arch/x86/i386_siginfo.hpp"

using namespace arch::x86;

namespace {

template <class T>
void put(SiginfoBytes& b, std::size_t off, T v) {
  std::memcpy(&b[off], &v, sizeof v);
}
template <class T>
T get(const SiginfoBytes& b, std::size_t off) {
  T v{};
  std::memcpy(&v, &b[off], sizeof v);
  return v;
}

SiginfoBytes native(int signo, int code) {
  SiginfoBytes b{};
  put<int32_t>(b, 0, signo);
  put<int32_t>(b, 4, 0);
  put<int32_t>(b, 8, code);
  return b;
}

}  // namespace

TEST_CASE("i386 siginfo: a fault's address moves to offset 12", "[arch][siginfo][i386]") {
  SiginfoBytes n = native(SIGSEGV, SEGV_MAPERR);
  put<uint64_t>(n, 16, 0x8);
  const SiginfoBytes i = i386_siginfo_from_native(n);
  CHECK(get<int32_t>(i, 0) == SIGSEGV);
  CHECK(get<int32_t>(i, 8) == SEGV_MAPERR);
  CHECK(get<uint32_t>(i, 12) == 0x8);
  CHECK(get<uint32_t>(i, 16) == 0);
  CHECK(native_siginfo_from_i386(i) == n);
}

TEST_CASE("i386 siginfo: kill, queue, child and timer members", "[arch][siginfo][i386]") {
  SiginfoBytes kill = native(SIGUSR1, SI_TKILL);  // < 0: pid, uid, sigval
  put<int32_t>(kill, 16, 4242);
  put<uint32_t>(kill, 20, 1000);
  put<uint64_t>(kill, 24, 0xabcd);
  SiginfoBytes i = i386_siginfo_from_native(kill);
  CHECK(get<int32_t>(i, 12) == 4242);
  CHECK(get<uint32_t>(i, 16) == 1000);
  CHECK(get<uint32_t>(i, 20) == 0xabcd);
  CHECK(native_siginfo_from_i386(i) == kill);

  SiginfoBytes child = native(SIGCHLD, CLD_EXITED);
  put<int32_t>(child, 16, 77);
  put<int32_t>(child, 24, 7);
  put<int64_t>(child, 32, -3);  // utime: a long, sign-extended on the way back
  put<int64_t>(child, 40, 9);
  i = i386_siginfo_from_native(child);
  CHECK(get<int32_t>(i, 20) == 7);
  CHECK(get<int32_t>(i, 24) == -3);
  CHECK(get<int32_t>(i, 28) == 9);
  CHECK(native_siginfo_from_i386(i) == child);

  SiginfoBytes timer = native(SIGALRM, SI_TIMER);
  put<int32_t>(timer, 16, 3);
  put<int32_t>(timer, 20, 2);
  put<uint64_t>(timer, 24, 0x1234);
  i = i386_siginfo_from_native(timer);
  CHECK(get<int32_t>(i, 12) == 3);
  CHECK(get<int32_t>(i, 16) == 2);
  CHECK(get<uint32_t>(i, 20) == 0x1234);

  SiginfoBytes user = native(SIGTERM, SI_USER);  // pid and uid only
  put<int32_t>(user, 16, 99);
  put<uint32_t>(user, 20, 5);
  put<uint64_t>(user, 24, 0xffff);  // not part of this member: dropped
  i = i386_siginfo_from_native(user);
  CHECK(get<int32_t>(i, 12) == 99);
  CHECK(get<uint32_t>(i, 20) == 0);
}

TEST_CASE("i386 siginfo: bounds and protection-key faults, poll and sys", "[arch][siginfo][i386]") {
  SiginfoBytes pkey = native(SIGSEGV, SEGV_PKUERR);
  put<uint64_t>(pkey, 16, 0x5000);
  put<uint32_t>(pkey, 32, 3);
  SiginfoBytes i = i386_siginfo_from_native(pkey);
  CHECK(get<uint32_t>(i, 12) == 0x5000);
  CHECK(get<uint32_t>(i, 20) == 3);
  CHECK(native_siginfo_from_i386(i) == pkey);

  SiginfoBytes poll = native(SIGPOLL, POLL_IN);
  put<int64_t>(poll, 16, -1);
  put<int32_t>(poll, 24, 5);
  i = i386_siginfo_from_native(poll);
  CHECK(get<int32_t>(i, 12) == -1);
  CHECK(get<int32_t>(i, 16) == 5);
  CHECK(native_siginfo_from_i386(i) == poll);

  SiginfoBytes sys = native(SIGSYS, 1 /* SYS_SECCOMP */);
  put<uint64_t>(sys, 16, 0xf7fc75e9);
  put<int32_t>(sys, 24, 4);
  put<uint32_t>(sys, 28, 0x40000003);  // AUDIT_ARCH_I386
  i = i386_siginfo_from_native(sys);
  CHECK(get<uint32_t>(i, 12) == 0xf7fc75e9);
  CHECK(get<int32_t>(i, 16) == 4);
  CHECK(get<uint32_t>(i, 20) == 0x40000003);
  CHECK(native_siginfo_from_i386(i) == sys);
}
