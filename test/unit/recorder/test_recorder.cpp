// The in-process recorder (prototype) on small functions of this file: their results equal
// native runs, and the recorded (from, to) pairs agree with facts found independently: calls
// the functions count themselves, the callees' addresses, and the instructions at each `from`
// as arch/x86 decodes them (every sample a branch; every return landing after its call).
#include <catch2/catch.hpp>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <span>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <linux/rseq.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/x86/instruction_length.hpp"
#include "test/progs/rseq_section.h"
#include "test/support/skip.hpp"
#include "tracer/inprocess/recorder/recorder.hpp"

// Called, not inlined nor folded into its caller (GCC's noipa; clang has noinline only).
#if defined(__clang__)
#define OPAQUE __attribute__((noinline))
#else
#define OPAQUE __attribute__((noinline, noipa))
#endif

namespace {

volatile int g_sink;
int g_ticks, g_depth_calls, g_add_calls, g_twice_calls, g_compares;

OPAQUE void tick() {
  ++g_ticks;
}

OPAQUE std::uint64_t loop_calls(void* arg) {
  const int n = *static_cast<int*>(arg);
  for (int i = 0; i < n; ++i) {
    tick();
  }
  return static_cast<std::uint64_t>(g_ticks);
}

OPAQUE int depth(int n) {
  ++g_depth_calls;
  if (n == 0) {
    return 0;
  }
  const int r = depth(n - 1);
  g_sink = r;  // (after the call: no tail recursion to turn into a loop)
  return r + 1;
}
std::uint64_t run_depth(void* arg) {
  return static_cast<std::uint64_t>(depth(*static_cast<int*>(arg)));
}

OPAQUE int add_one(int x) {
  ++g_add_calls;
  return x + 1;
}
OPAQUE int twice(int x) {
  ++g_twice_calls;
  return x * 2;
}
int (*volatile g_ops[2])(int) = {add_one, twice};
OPAQUE std::uint64_t run_pointers(void* arg) {
  const int n = *static_cast<int*>(arg);
  int x = 1;
  for (int i = 0; i < n; ++i) {
    x = g_ops[i % 3 == 0 ? 1 : 0](x) & 0xffff;
  }
  return static_cast<std::uint64_t>(x);
}

// Ten cases that do different things: compiled to a jump table (checked below).
OPAQUE unsigned step(int op, unsigned x) {
  switch (op) {
    case 0: x += 3; break;
    case 1: x *= 7; break;
    case 2: x ^= 0x55; break;
    case 3: x -= static_cast<unsigned>(g_sink); break;
    case 4: x <<= 1; break;
    case 5: x >>= 1; break;
    case 6: x = ~x; break;
    case 7: x += static_cast<unsigned>(g_sink) * 3; break;
    case 8: x = x * x + 1; break;
    case 9: x |= 0x100; break;
    default: x = 0; break;
  }
  return x & 0xfffff;
}
std::uint64_t run_switch(void* arg) {
  const int n = *static_cast<int*>(arg);
  unsigned x = 1;
  for (int i = 0; i < n; ++i) {
    x = step(i % 10, x);
  }
  return static_cast<std::uint64_t>(x);
}

OPAQUE int compare(const void* a, const void* b) {
  ++g_compares;
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}
std::uint64_t run_qsort(void* arg) {
  auto* v = static_cast<std::vector<int>*>(arg);
  qsort(v->data(), v->size(), sizeof(int), compare);
  return 0;
}

struct Formatted {
  char text[128];
  int fd;
  long written;
};
std::uint64_t format_and_write(void* arg) {
  auto* f = static_cast<Formatted*>(arg);
  const int n = std::snprintf(f->text, sizeof f->text, "%d %s %.3f %x", 42, "branches", 2.5, 0xbeefu);
  f->written = write(f->fd, f->text, static_cast<std::size_t>(n));  // a system call in the cache
  return static_cast<std::uint64_t>(n);
}

int g_thrower_calls, g_jumper_calls;
OPAQUE int thrower(int x) {
  ++g_thrower_calls;
  if (x > 2) {
    throw std::runtime_error("thrown in the cache");
  }
  return x;
}
std::uint64_t run_exceptions(void*) {
  std::uint64_t caught = 0;
  for (int i = 0; i < 10; ++i) {
    try {
      thrower(i);
    } catch (const std::runtime_error&) {
      ++caught;
    }
  }
  return caught;
}

std::jmp_buf g_jump;
OPAQUE void jumper(int x) {
  ++g_jumper_calls;
  std::longjmp(g_jump, x);
}
int g_round, g_landed;  // (globals: longjmp keeps them)
std::uint64_t run_longjmps(void*) {
  g_landed = 0;
  for (g_round = 1; g_round < 5; ++g_round) {
    if (setjmp(g_jump) == 0) {
      jumper(g_round);
    } else {
      ++g_landed;
    }
  }
  return static_cast<std::uint64_t>(g_landed);
}

template <class F>
std::uint64_t address_of(F* f) {
  return reinterpret_cast<std::uint64_t>(f);
}

// The samples of the last run, oldest first; the run must have fitted in the ring.
std::vector<hs_recorder_sample> recorded() {
  const hs_recorder_ring& r = recorder::ring();
  REQUIRE(r.head < r.capacity);
  return {r.samples + 1, r.samples + 1 + r.head};  // (sample n at n + 1: recorder_ring.h)
}

std::uint64_t run_recorded(recorder::RecordedFn fn, void* arg) {
  const recorder::Failure failure = recorder::start_thread();
  INFO((failure != nullptr ? failure : ""));
  REQUIRE(failure == nullptr);
  recorder::clear_ring();
  return recorder::run(fn, arg);
}

arch::x86::InstructionInfo instruction_at(std::uint64_t address) {
  auto info = arch::x86::decode_instruction(std::span(reinterpret_cast<const std::uint8_t*>(address), 15));
  REQUIRE(info);
  return *info;
}

bool is_indirect(std::uint64_t address, std::uint8_t modrm_reg) {
  const auto* code = reinterpret_cast<const std::uint8_t*>(address);
  while (*code == 0x3e || *code == 0xf2 || (*code & 0xf0) == 0x40) {  // notrack, bnd, REX
    ++code;
  }
  return code[0] == 0xff && ((code[1] >> 3) & 7) == modrm_reg;
}

// Every sample is a branch (decoded as one by arch/x86) and the last leaves for the exit point.
void check_all_branches(const std::vector<hs_recorder_sample>& samples) {
  REQUIRE(!samples.empty());
  for (const auto& s : samples) {
    INFO("branch at 0x" << std::hex << s.from << " to 0x" << s.to);
    REQUIRE(instruction_at(s.from).kind == arch::x86::InsnKind::Branch);
  }
  REQUIRE(samples.back().to == recorder::exit_point());
}

// Every sample is a branch; every return lands right after the call it matches; the outermost
// return leaves for the recorder's exit point.
void check_calls_and_returns(const std::vector<hs_recorder_sample>& samples) {
  std::vector<std::uint64_t> stack;
  for (const auto& s : samples) {
    const auto info = instruction_at(s.from);
    INFO("branch at 0x" << std::hex << s.from << " to 0x" << s.to);
    REQUIRE(info.kind == arch::x86::InsnKind::Branch);
    if (info.stack == arch::x86::StackEffect::Call) {
      stack.push_back(s.from + info.length);
    } else if (info.stack == arch::x86::StackEffect::Return) {
      if (stack.empty()) {
        REQUIRE(s.to == recorder::exit_point());
      } else {
        REQUIRE(s.to == stack.back());
        stack.pop_back();
      }
    }
  }
  REQUIRE(stack.empty());
  REQUIRE(!samples.empty());
  REQUIRE(samples.back().to == recorder::exit_point());
}

std::size_t count_to(const std::vector<hs_recorder_sample>& samples, std::uint64_t to) {
  return static_cast<std::size_t>(
      std::count_if(samples.begin(), samples.end(), [&](auto& s) { return s.to == to; }));
}

}  // namespace

TEST_CASE("recorder: a loop of calls, each call and return recorded", "[recorder]") {
  int n = 1000;
  g_ticks = 0;
  const std::uint64_t native = loop_calls(&n);
  g_ticks = 0;
  REQUIRE(run_recorded(loop_calls, &n) == native);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(tick)) == static_cast<std::size_t>(g_ticks));
  REQUIRE(g_ticks == n);
  for (const auto& s : samples) {
    if (s.to == address_of(tick)) {
      REQUIRE(instruction_at(s.from).stack == arch::x86::StackEffect::Call);
    }
  }
  check_calls_and_returns(samples);
  REQUIRE(recorder::stats().native_exits == 0);
}

TEST_CASE("recorder: recursion keeps the program's return addresses", "[recorder]") {
  int n = 200;
  g_depth_calls = 0;
  const std::uint64_t native = run_depth(&n);
  g_depth_calls = 0;
  REQUIRE(run_recorded(run_depth, &n) == native);
  REQUIRE(native == 200);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(depth)) == static_cast<std::size_t>(g_depth_calls));
  REQUIRE(g_depth_calls == n + 1);
  check_calls_and_returns(samples);
}

TEST_CASE("recorder: calls through function pointers reach their callees", "[recorder]") {
  int n = 3000;
  g_add_calls = g_twice_calls = 0;
  const std::uint64_t native = run_pointers(&n);
  g_add_calls = g_twice_calls = 0;
  REQUIRE(run_recorded(run_pointers, &n) == native);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(add_one)) == static_cast<std::size_t>(g_add_calls));
  REQUIRE(count_to(samples, address_of(twice)) == static_cast<std::size_t>(g_twice_calls));
  REQUIRE(g_add_calls + g_twice_calls == n);
  for (const auto& s : samples) {
    if (s.to == address_of(add_one) || s.to == address_of(twice)) {
      REQUIRE(is_indirect(s.from, 2));  // call r/m64
    }
  }
  check_calls_and_returns(samples);
}

// A call through each register a `call reg` uses in place in the cache (block_translator.cpp:
// register_target), each to a callee of its own, and a jmp through rcx (loaded into r11 as
// before): 0 when every register still holds its callee's address afterwards.
extern "C" std::uint64_t calls_through_registers(void*);
extern "C" char through_registers_callees[];  // 13 `ret`s, 16 bytes apart
constexpr int kRegisterCallees = 13;
asm(R"(
  .text
  .globl through_registers_callees
through_registers_callees:
  .rept 13
  .p2align 4
  ret
  .endr
  .globl calls_through_registers
  .type calls_through_registers, @function
calls_through_registers:
  .irp reg, rbx, rbp, r12, r13, r14, r15
  push %\reg
  .endr
  .set callee, 0
  .irp reg, rax, rdx, rbx, rbp, rsi, rdi, r8, r9, r10, r12, r13, r14, r15
  lea through_registers_callees+callee(%rip), %\reg
  .set callee, callee + 16
  .endr
  .irp reg, rax, rdx, rbx, rbp, rsi, rdi, r8, r9, r10, r12, r13, r14, r15
  call *%\reg
  .endr
  lea 1f(%rip), %rcx
  jmp *%rcx
  ud2
1:
  xor %r11d, %r11d
  .set callee, 0
  .irp reg, rax, rdx, rbx, rbp, rsi, rdi, r8, r9, r10, r12, r13, r14, r15
  lea through_registers_callees+callee(%rip), %rcx
  sub %rcx, %\reg
  or %\reg, %r11
  .set callee, callee + 16
  .endr
  mov %r11, %rax
  .irp reg, r15, r14, r13, r12, rbp, rbx
  pop %\reg
  .endr
  ret
)");

// Three times: the first run of each call fills its site's entry, the others hit it.
std::uint64_t calls_through_registers_thrice(void*) {
  std::uint64_t wrong = 0;
  for (int i = 0; i < 3; ++i) {
    wrong |= calls_through_registers(nullptr);
  }
  return wrong;
}

TEST_CASE("recorder: calls and a jmp through registers, each recorded with its own target, every register kept",
          "[recorder]") {
  REQUIRE(calls_through_registers_thrice(nullptr) == 0);
  REQUIRE(run_recorded(calls_through_registers_thrice, nullptr) == 0);
  const auto samples = recorded();
  // The calls in order, each from a `call reg` to its register's callee.
  std::vector<std::uint64_t> called;
  for (const auto& s : samples) {
    if (is_indirect(s.from, 2)) {  // call r/m64
      called.push_back(s.to);
    }
  }
  REQUIRE(called.size() == 3 * kRegisterCallees);
  for (std::size_t i = 0; i < called.size(); ++i) {
    CHECK(called[i] == address_of(through_registers_callees) + 16u * (i % kRegisterCallees));
  }
  check_calls_and_returns(samples);
}

TEST_CASE("recorder: a switch through a jump table", "[recorder]") {
  int n = 2000;
  const std::uint64_t native = run_switch(&n);
  REQUIRE(run_recorded(run_switch, &n) == native);
  const auto samples = recorded();
  std::size_t table_jumps = 0;
  std::set<std::uint64_t> cases;
  for (const auto& s : samples) {
    if (s.from >= address_of(step) && s.from < address_of(step) + 512 && is_indirect(s.from, 4)) {
      ++table_jumps;
      cases.insert(s.to);
      REQUIRE(s.to > address_of(step));
      REQUIRE(s.to < address_of(step) + 512);
    }
  }
  INFO("the compiler must have made a jump table of step()'s switch");
  // Each case runs n/10 times. A case that starts right after the jmp (some builds place one
  // there) is no branch, as SoftStep sees it: its jumps are not recorded.
  REQUIRE(cases.size() >= 8);
  REQUIRE(table_jumps == cases.size() * static_cast<std::size_t>(n / 10));
  REQUIRE(table_jumps >= static_cast<std::size_t>(n - n / 10));
  check_calls_and_returns(samples);
}

TEST_CASE("recorder: qsort in libc calling back into the program", "[recorder]") {
  std::vector<int> data(300);
  unsigned seed = 7;
  for (auto& x : data) {
    seed = seed * 1103515245u + 12345u;
    x = static_cast<int>(seed >> 8);
  }
  auto native = data;
  g_compares = 0;
  run_qsort(&native);
  const int native_compares = g_compares;
  g_compares = 0;
  REQUIRE(run_recorded(run_qsort, &data) == 0);
  REQUIRE(data == native);
  REQUIRE(g_compares == native_compares);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(compare)) == static_cast<std::size_t>(g_compares));
  check_calls_and_returns(samples);
  REQUIRE(recorder::stats().native_exits == 0);
}

TEST_CASE("recorder: snprintf and a system call run in the cache", "[recorder]") {
  Formatted native{};
  native.fd = open("/dev/null", O_WRONLY);
  REQUIRE(native.fd >= 0);
  const std::uint64_t native_n = format_and_write(&native);
  Formatted f{};
  f.fd = native.fd;
  REQUIRE(run_recorded(format_and_write, &f) == native_n);
  close(native.fd);
  REQUIRE(std::strcmp(f.text, native.text) == 0);
  REQUIRE(f.written == static_cast<long>(native_n));
  const auto samples = recorded();
  REQUIRE(samples.size() > 100);  // libc's formatting recorded, not run natively
  check_calls_and_returns(samples);
  REQUIRE(recorder::stats().native_exits == 0);
}

namespace {

// What a `syscall` instruction leaves the program: rcx the address after it, r11 the flags it
// ran with, and the flags themselves unchanged. number: getpid (run in place by the cache) or
// mmap, then munmap (through the recorder's maps gate).
struct SyscallRegs {
  std::uint64_t number = 0;
  std::uint64_t flags_before = 0, flags_after = 0, rcx = 0, r11 = 0, after = 0;
};

__attribute__((noinline)) std::uint64_t syscall_regs(void* arg) {
  auto* r = static_cast<SyscallRegs*>(arg);
  std::uint64_t rax = r->number;
  register std::uint64_t r10 asm("r10") = MAP_PRIVATE | MAP_ANONYMOUS;
  register std::uint64_t r8 asm("r8") = static_cast<std::uint64_t>(-1);
  register std::uint64_t r9 asm("r9") = 0;
  asm volatile(
      "leaq -128(%%rsp), %%rsp\n\t"  // (past the red zone: the pushes below are the test's own)
      "stc\n\t"
      "pushfq\n\t"
      "popq %[before]\n\t"
      "leaq 1f(%%rip), %[after]\n\t"
      "stc\n\t"  // (the pop left CF as it was, but say it again: the flags the syscall runs with)
      "syscall\n"
      "1:\n\t"
      "movq %%rcx, %[rcx]\n\t"
      "movq %%r11, %[r11]\n\t"
      "pushfq\n\t"
      "popq %[flags_after]\n\t"
      "leaq 128(%%rsp), %%rsp\n\t"
      : "+a"(rax), [before] "=&r"(r->flags_before), [after] "=&r"(r->after), [rcx] "=&r"(r->rcx),
        [r11] "=&r"(r->r11), [flags_after] "=&r"(r->flags_after), "+r"(r10), "+r"(r8), "+r"(r9)
      : "D"(0), "S"(4096), "d"(PROT_READ | PROT_WRITE)
      : "rcx", "r11", "memory", "cc");
  if (r->number == SYS_mmap && static_cast<std::int64_t>(rax) > 0) {
    munmap(reinterpret_cast<void*>(rax), 4096);
  }
  return rax;
}

}  // namespace

TEST_CASE("recorder: after a syscall run in the cache, rcx, r11 and the flags are the program's", "[recorder]") {
  const long number = GENERATE(long{SYS_getpid}, long{SYS_mmap});
  INFO("syscall " << number);
  SyscallRegs native{static_cast<std::uint64_t>(number)};
  syscall_regs(&native);
  REQUIRE(native.rcx == native.after);  // (what the instruction does, natively)
  REQUIRE(native.r11 == native.flags_before);
  SyscallRegs r{static_cast<std::uint64_t>(number)};
  run_recorded(syscall_regs, &r);
  CHECK(r.rcx == r.after);
  CHECK(r.r11 == r.flags_before);
  CHECK(r.flags_after == r.flags_before);
  CHECK((r.flags_before & 1) == 1);  // CF, as stc set it
}

TEST_CASE("recorder: C++ exceptions thrown and caught in the cache", "[recorder]") {
  g_thrower_calls = 0;
  const std::uint64_t native = run_exceptions(nullptr);
  REQUIRE(native == 7);
  g_thrower_calls = 0;
  REQUIRE(run_recorded(run_exceptions, nullptr) == native);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(thrower)) == static_cast<std::size_t>(g_thrower_calls));
  REQUIRE(g_thrower_calls == 10);
  check_all_branches(samples);  // (unwinding returns elsewhere than after the calls)
  REQUIRE(recorder::stats().native_exits == 0);
}

TEST_CASE("recorder: longjmp out of a callee in the cache", "[recorder]") {
  g_jumper_calls = 0;
  const std::uint64_t native = run_longjmps(nullptr);
  REQUIRE(native == 4);
  g_jumper_calls = 0;
  REQUIRE(run_recorded(run_longjmps, nullptr) == native);
  const auto samples = recorded();
  REQUIRE(count_to(samples, address_of(jumper)) == static_cast<std::size_t>(g_jumper_calls));
  REQUIRE(g_jumper_calls == 4);
  check_all_branches(samples);
  REQUIRE(recorder::stats().native_exits == 0);
}

namespace {

// Reads the word at its %gs base, and its base by rdgsbase.
OPAQUE std::uint64_t read_gs_word(void*) {
  std::uint64_t word = 0;
  asm volatile("mov %%gs:0, %0" : "=r"(word));
  return word;
}
OPAQUE std::uint64_t read_gs_base(void*) {
  std::uint64_t base = 0;
  asm volatile("rdgsbase %0" : "=r"(base));
  return base;
}
// Sets its %gs base to arg by wrgsbase, and gives back the word there by %gs.
OPAQUE std::uint64_t write_gs_base(void* arg) {
  asm volatile("wrgsbase %0" ::"r"(arg) : "memory");
  return read_gs_word(nullptr);
}

bool fsgsbase() {
  return (getauxval(AT_HWCAP2) & 2) != 0;  // HWCAP2_FSGSBASE
}

}  // namespace

TEST_CASE("recorder: the program's own %gs (its operands, rdgsbase, wrgsbase) is its base kept in the block, "
          "translated and recorded",
          "[recorder]") {
  if (!fsgsbase()) {
    HS_SKIP("the kernel does not let programs use FSGSBASE");
  }
  REQUIRE(recorder::start_thread() == nullptr);
  recorder::ThreadState* t = recorder::current_thread_state();
  REQUIRE(t != nullptr);
  std::uint64_t own[2] = {0x1234, 0x5678};
  const std::uint64_t kept = t->app_gs;
  const auto exits = recorder::stats().native_exits;
  t->app_gs = reinterpret_cast<std::uint64_t>(&own[0]);
  const std::uint64_t word = run_recorded(read_gs_word, nullptr);
  const std::uint64_t base = run_recorded(read_gs_base, nullptr);
  const std::uint64_t written = run_recorded(write_gs_base, &own[1]);
  const std::uint64_t base_after = t->app_gs;
  t->app_gs = kept;
  CHECK(word == 0x1234);
  CHECK(base == reinterpret_cast<std::uint64_t>(&own[0]));
  CHECK(written == 0x5678);
  CHECK(base_after == reinterpret_cast<std::uint64_t>(&own[1]));
  CHECK(recorder::this_thread_block() == t);  // (the real base is the block's again)
  CHECK(recorder::stats().native_exits == exits);
  const auto samples = recorded();
  CHECK(count_to(samples, recorder::exit_point()) == 1);  // its return recorded
}

namespace {

// mov eax, value; ret
void write_returner(std::uint8_t* at, std::uint32_t value) {
  at[0] = 0xb8;
  std::memcpy(at + 1, &value, 4);
  at[5] = 0xc3;
}

using Generated = std::uint32_t (*)();

struct GeneratedCode {
  std::uint8_t* page = nullptr;
  std::uint32_t results[2] = {};
};

// Code on a page that is writable and executable: written, called, rewritten, called.
OPAQUE std::uint64_t run_rwx(void* arg) {
  auto& g = *static_cast<GeneratedCode*>(arg);
  write_returner(g.page, 1);
  g.results[0] = reinterpret_cast<Generated>(g.page)();
  write_returner(g.page, 2);
  g.results[1] = reinterpret_cast<Generated>(g.page)();
  return g.results[0] + g.results[1];
}

// A JIT's W^X discipline: written while writable, run while executable, then rewritten.
OPAQUE std::uint64_t run_w_xor_x(void* arg) {
  auto& g = *static_cast<GeneratedCode*>(arg);
  for (std::uint32_t round = 0; round < 2; ++round) {
    mprotect(g.page, 4096, PROT_READ | PROT_WRITE);
    write_returner(g.page, round + 1);
    mprotect(g.page, 4096, PROT_READ | PROT_EXEC);
    g.results[round] = reinterpret_cast<Generated>(g.page)();
  }
  return g.results[0] + g.results[1];
}

// Code unmapped, and other code mapped at the same address (dlclose, then another library).
OPAQUE std::uint64_t run_remapped(void* arg) {
  auto& g = *static_cast<GeneratedCode*>(arg);
  for (std::uint32_t round = 0; round < 2; ++round) {
    void* at = mmap(g.page, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (round ? MAP_FIXED : 0), -1, 0);
    if (at != g.page) {
      return 0;
    }
    write_returner(g.page, round + 1);
    mprotect(g.page, 4096, PROT_READ | PROT_EXEC);
    g.results[round] = reinterpret_cast<Generated>(g.page)();
    if (round == 0) {
      munmap(g.page, 4096);
    }
  }
  return g.results[0] + g.results[1];
}

std::uint8_t* map_page(int prot) {
  void* p = mmap(nullptr, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return static_cast<std::uint8_t*>(p);
}

}  // namespace

TEST_CASE("recorder: code on a writable page runs natively, rewritten or not (a gap, no stale copy)", "[recorder]") {
  GeneratedCode g{map_page(PROT_READ | PROT_WRITE | PROT_EXEC)};
  const auto exits = recorder::stats().native_exits;
  REQUIRE(run_recorded(run_rwx, &g) == 3);
  CHECK(g.results[0] == 1);
  CHECK(g.results[1] == 2);
  CHECK(recorder::stats().native_exits > exits);
  const auto samples = recorded();
  CHECK(count_to(samples, reinterpret_cast<std::uint64_t>(g.page)) == 1);  // the call, then native
  for (const auto& s : samples) {
    CHECK(s.from != reinterpret_cast<std::uint64_t>(g.page) + 5);  // its ret was never in the cache
  }
  munmap(g.page, 4096);
}

TEST_CASE("recorder: code rewritten under W^X runs as rewritten, both versions recorded", "[recorder]") {
  GeneratedCode g{map_page(PROT_READ | PROT_WRITE)};
  REQUIRE(run_recorded(run_w_xor_x, &g) == 3);
  CHECK(g.results[0] == 1);
  CHECK(g.results[1] == 2);  // not the first version's translation
  const auto samples = recorded();
  // Each version called and returned in the cache (this process has one thread: the recorder
  // flushed its cache at the mprotect that made the first version writable again).
  CHECK(count_to(samples, reinterpret_cast<std::uint64_t>(g.page)) == 2);
  CHECK(std::count_if(samples.begin(), samples.end(), [&](auto& s) {
          return s.from == reinterpret_cast<std::uint64_t>(g.page) + 5;
        }) == 2);
  check_all_branches(samples);
  munmap(g.page, 4096);
}

TEST_CASE("recorder: code unmapped and other code mapped at its address runs as mapped", "[recorder]") {
  GeneratedCode g{map_page(PROT_NONE)};
  munmap(g.page, 4096);
  REQUIRE(run_recorded(run_remapped, &g) == 3);
  CHECK(g.results[0] == 1);
  CHECK(g.results[1] == 2);
  const auto samples = recorded();
  CHECK(count_to(samples, reinterpret_cast<std::uint64_t>(g.page)) == 2);
  check_all_branches(samples);
  munmap(g.page, 4096);
}

namespace {

// 200,000 blocks of generated code, each `add eax, 1` then a jump over 8 bytes of padding to the
// next (a taken branch each), the last one `ret`: more blocks than the recorder's tables hold.
constexpr std::uint32_t kGeneratedBlocks = 200000;
constexpr std::size_t kGeneratedBlockBytes = 16;

struct ManyBlocks {
  std::uint8_t* code = nullptr;
  std::uint64_t result = 0;
};

OPAQUE std::uint64_t run_many_blocks(void* arg) {
  auto& m = *static_cast<ManyBlocks*>(arg);
  m.result = reinterpret_cast<std::uint64_t (*)()>(m.code)();
  return m.result;
}

std::uint8_t* generate_many_blocks() {
  const std::size_t bytes = kGeneratedBlocks * kGeneratedBlockBytes;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  auto* code = static_cast<std::uint8_t*>(p);
  for (std::uint32_t i = 0; i < kGeneratedBlocks; ++i) {
    std::uint8_t* b = code + i * kGeneratedBlockBytes;
    std::memset(b, 0x90, kGeneratedBlockBytes);
    if (i == 0) {
      b[0] = 0x31, b[1] = 0xc0;  // xor eax, eax (then a jmp: block 0 counts too)
      b[2] = 0x83, b[3] = 0xc0, b[4] = 0x01;  // add eax, 1
      b[5] = 0xe9;
    } else {
      b[0] = 0x83, b[1] = 0xc0, b[2] = 0x01;  // add eax, 1
      b[3] = i + 1 == kGeneratedBlocks ? 0xc3 : 0xe9;  // ret, or jmp rel32
    }
    std::uint8_t* jmp = b + (i == 0 ? 5 : 3);
    if (*jmp == 0xe9) {
      const auto rel = static_cast<std::int32_t>(kGeneratedBlockBytes - (jmp + 5 - b));
      std::memcpy(jmp + 1, &rel, 4);
    }
  }
  REQUIRE(mprotect(code, bytes, PROT_READ | PROT_EXEC) == 0);
  return code;
}

}  // namespace

TEST_CASE("recorder: generated code of 200,000 blocks is recorded to its end: a full cache is forgotten and "
          "translated afresh",
          "[recorder]") {
  ManyBlocks m{generate_many_blocks()};
  const auto before = recorder::stats();
  REQUIRE(run_recorded(run_many_blocks, &m) == kGeneratedBlocks);
  const auto after = recorder::stats();
  CHECK(after.blocks - before.blocks >= kGeneratedBlocks);
  CHECK(after.native_exits == before.native_exits);
  CHECK(after.refused_full > before.refused_full);  // (it did fill up, and went on)
  // The ring went round; its last samples are the generated code's last jumps, then its return.
  const hs_recorder_ring& ring = recorder::ring();
  REQUIRE(ring.head > 16);
  const auto last_jump = reinterpret_cast<std::uint64_t>(m.code) + (kGeneratedBlocks - 2) * kGeneratedBlockBytes + 3;
  bool found = false;
  for (std::uint64_t n = ring.head - 16; n < ring.head; ++n) {
    const hs_recorder_sample& sample = ring.samples[HS_RECORDER_RING_SLOT(n, ring.capacity)];
    found = found || (sample.from == last_jump && sample.to == last_jump + kGeneratedBlockBytes - 3);
  }
  CHECK(found);
  munmap(m.code, kGeneratedBlocks * kGeneratedBlockBytes);
}

TEST_CASE("recorder: code in a shared mapping, rewritten through another view of it, runs as rewritten: its "
          "translation's check sees the change and the code is translated afresh",
          "[recorder]") {
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "code", 0));
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, 4096) == 0);
  auto* rw = static_cast<std::uint8_t*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  void* rx = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
  REQUIRE(rw != MAP_FAILED);
  REQUIRE(rx != MAP_FAILED);
  const auto fn = reinterpret_cast<recorder::RecordedFn>(rx);
  const auto exits = recorder::stats().native_exits;
  for (std::uint32_t value = 1; value <= 3; ++value) {
    write_returner(rw, value);
    CHECK(run_recorded(fn, nullptr) == value);
    CHECK(run_recorded(fn, nullptr) == value);  // (the fresh translation, checked and run)
  }
  CHECK(recorder::stats().native_exits == exits);
  recorder::flush();  // (its translations go with its pages)
  munmap(rw, 4096);
  munmap(rx, 4096);
  close(fd);
}

namespace {

// What an rseq critical section sees of its thread's rseq_cs word: inside the section (where the
// kernel looks when it preempts the thread) and after it; its own descriptor; whether the kernel
// aborted it.
struct RseqSeen {
  std::uint64_t inside = 0, after = 0, descriptor = 0;
  std::uint32_t aborted = 0;
};

OPAQUE std::uint64_t rseq_section(void* arg) {
  auto* seen = static_cast<RseqSeen*>(arg);
  asm volatile(
      HS_RSEQ_START("area")
      "  movq %%fs:8(%[area]), %%rax\n"
      "  movq %%rax, %[inside]\n"
      "2:\n"
      "  movq %%fs:8(%[area]), %%rax\n"
      "  movq %%rax, %[after]\n"
      "  leaq 3b(%%rip), %%rax\n"
      "  movq %%rax, %[descriptor]\n"
      "  movl $0, %[aborted]\n"
      "  jmp 5f\n"
      HS_RSEQ_SIGNATURE
      "4:\n"
      "  movl $1, %[aborted]\n"
      "5:\n"
      : [inside] "=m"(seen->inside), [after] "=m"(seen->after), [descriptor] "=m"(seen->descriptor),
        [aborted] "=m"(seen->aborted)
      : [area] "r"(__rseq_offset)
      : "rax", "memory");
  return 0;
}

}  // namespace

TEST_CASE("recorder: an rseq critical section runs as a copy that the kernel's rseq_cs word names while it runs, "
          "and the program's word is back after it",
          "[recorder]") {
  if (__rseq_size == 0) {
    HS_SKIP("glibc registered no rseq area here: no critical section to run");
  }
  RseqSeen native;
  do {
    rseq_section(&native);
  } while (native.aborted != 0);
  REQUIRE(native.inside == native.descriptor);  // (natively: the program's own descriptor)
  REQUIRE(recorder::start_thread() == nullptr);
  recorder::set_rseq(__rseq_offset + 8, HS_RSEQ_SIG_VALUE);  // (what the server tells)
  const auto native_exits = recorder::stats().native_exits;
  RseqSeen seen;
  for (int tries = 0; tries < 100; ++tries) {
    run_recorded(rseq_section, &seen);
    if (seen.aborted == 0) {
      break;
    }
  }
  REQUIRE(seen.aborted == 0);
  INFO("inside 0x" << std::hex << seen.inside << ", the program's descriptor 0x" << seen.descriptor);
  // Inside, the word names the recorder's descriptor (under 2 GiB), whose range is the copy that
  // ran: not the program's section.
  REQUIRE(seen.inside != seen.descriptor);
  REQUIRE(seen.inside != 0);
  REQUIRE(seen.inside < (1ull << 31));
  const auto& copy = *reinterpret_cast<const rseq_cs*>(seen.inside);
  const auto& program = *reinterpret_cast<const rseq_cs*>(seen.descriptor);
  CHECK(copy.version == 0);
  CHECK(copy.post_commit_offset == program.post_commit_offset);  // (two moves, copied as they are)
  CHECK(copy.start_ip != program.start_ip);
  CHECK(copy.abort_ip - copy.start_ip >= copy.post_commit_offset);
  std::uint32_t signature = 0;
  std::memcpy(&signature, reinterpret_cast<const void*>(copy.abort_ip - 4), 4);
  CHECK(signature == HS_RSEQ_SIG_VALUE);
  // After it, the program's own word again (or 0: the kernel clears it when it preempts a thread
  // outside its section, natively too).
  CHECK((seen.after == seen.descriptor || seen.after == 0));
  CHECK(recorder::stats().native_exits == native_exits);  // (the section ran in the cache)
}
