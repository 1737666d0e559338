// Registers of a real stopped child: read them, write rax, xmm0, ymm0h (and AVX-512 state),
// then let the child store its registers to memory and check it saw the new values.
#include <catch2/catch.hpp>

#include <cpuid.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

#include "arch/x86/raw_registers.hpp"
#include "arch/x86/target_description.hpp"
#include "test/support/skip.hpp"
#include "tracer/linux/registers.hpp"

namespace {
// These tests trace this 64-bit test program's own children.
const arch::x86::RegisterLayout& kAmd64 = tracer::host_register_layout(arch::x86::Isa::Amd64);
}  // namespace

// Probes: trap, store registers to *rdi, trap again, return.
extern "C" void hs_probe_avx(uint64_t* out);
extern "C" char hs_probe_avx_resume[];
extern "C" void hs_probe_avx512(uint64_t* out);
asm(R"(
  .text
  .globl hs_probe_avx, hs_probe_avx_resume, hs_probe_avx512
  .type hs_probe_avx, @function
hs_probe_avx:
  int3
hs_probe_avx_resume:
  movq %rax, 0(%rdi)
  vmovdqu %ymm0, 8(%rdi)
  int3
  ret
  .size hs_probe_avx, .-hs_probe_avx
  .type hs_probe_avx512, @function
hs_probe_avx512:
  int3
  vmovdqu64 %zmm0, 0(%rdi)
  vmovdqu64 %zmm16, 64(%rdi)
  kmovq %k1, 128(%rdi)
  int3
  ret
  .size hs_probe_avx512, .-hs_probe_avx512
)");

namespace {

alignas(64) uint64_t g_out[24];

// A forked child that stops with SIGSTOP, then runs probe(g_out); killed on scope exit.
class Child {
 public:
  explicit Child(void (*probe)(uint64_t*)) {
    pid_ = fork();
    if (pid_ == 0) {
      ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
      raise(SIGSTOP);
      probe(g_out);
      _exit(0);
    }
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Waits for the next stop; returns its signal (0 if the child did not stop).
  int wait_stop() const {
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_ || !WIFSTOPPED(status)) {
      return 0;
    }
    return WSTOPSIG(status);
  }
  bool cont() const { return ptrace(PTRACE_CONT, pid_, nullptr, nullptr) == 0; }
  uint64_t peek(const void* addr) const {
    return static_cast<uint64_t>(ptrace(PTRACE_PEEKDATA, pid_, const_cast<void*>(addr), nullptr));
  }

 private:
  pid_t pid_ = -1;
};

bool cpu_has_avx512() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) {
    return false;
  }
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned f_bw = (1u << 16) | (1u << 30);  // AVX512F, AVX512BW (kmovq)
  return (b & f_bw) == f_bw && tracer::host_register_layout(arch::x86::Isa::Amd64).features().avx512;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>(seed + i);
  }
  return v;
}

std::vector<uint8_t> le64(uint64_t v) {
  std::vector<uint8_t> out(8);
  std::memcpy(out.data(), &v, 8);
  return out;
}

// What the kernel holds for tid, not what a cache remembers.
std::vector<uint8_t> kernel_g(int tid) {
  tracer::RegisterCache fresh;
  return tracer::read_g_registers(kAmd64, tid, fresh).value();
}
std::vector<uint8_t> kernel_register(int tid, int regno) {
  tracer::RegisterCache fresh;
  return tracer::read_one_register(kAmd64, tid, fresh, regno).value();
}

}  // namespace

TEST_CASE("CPUID geometry and target.xml of this CPU", "[tracer][registers]") {
  const auto& layout = tracer::host_register_layout(arch::x86::Isa::Amd64);
  const auto& geo = layout.geometry();
  INFO("xcr0 " << std::hex << geo.xcr0 << " size " << std::dec << geo.size);
  CHECK(geo.size >= 512);
  CHECK(tracer::target_description_xml(arch::x86::Isa::Amd64) == arch::x86::target_xml(geo.xcr0));
  CHECK(tracer::target_description_xml(arch::x86::Isa::I386) ==
        arch::x86::target_xml(geo.xcr0, arch::x86::Isa::I386));
  if (geo.xcr0 == 0x602e7) {  // the machine rsp-packets.md §7 describes
    CHECK(geo.size == 11008);
    CHECK(layout.g_size() == 2420);
  }
}

TEST_CASE("read, write and re-read a stopped child's registers", "[tracer][registers]") {
  if (!tracer::host_register_layout(arch::x86::Isa::Amd64).features().avx) {
    HS_SKIP("CPU or kernel without AVX");
  }
  Child child(hs_probe_avx);
  REQUIRE(child.pid() > 0);
  REQUIRE(child.wait_stop() == SIGSTOP);
  const int tid = child.pid();
  tracer::RegisterCache regs;

  auto raw = tracer::read_raw_registers(tid);
  REQUIRE(raw.ok());
  const auto& geo = tracer::host_register_layout(arch::x86::Isa::Amd64).geometry();
  CHECK(raw->xsave.size() == geo.size);
  CHECK(arch::x86::xcr0_from_xsave(raw->xsave) == geo.xcr0);

  REQUIRE(child.cont());
  REQUIRE(child.wait_stop() == SIGTRAP);
  regs.forget();
  auto pc = tracer::read_pc(tid);
  REQUIRE(pc.ok());
  CHECK(*pc == reinterpret_cast<uint64_t>(hs_probe_avx_resume));

  auto g = tracer::read_g_registers(kAmd64, tid, regs);
  REQUIRE(g.ok());
  CHECK(g->size() == tracer::host_register_layout(arch::x86::Isa::Amd64).g_size());
  REQUIRE(tracer::write_g_registers(kAmd64, tid, regs, *g).ok());  // unchanged round trip
  CHECK(kernel_g(tid) == *g);

  const auto rax = le64(0x1122334455667788);
  const auto xmm0 = pattern(16, 0x10);
  const auto ymm0h = pattern(16, 0xa0);
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 0, rax).ok());
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 40, xmm0).ok());
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 60, ymm0h).ok());
  CHECK(kernel_register(tid, 0) == rax);
  CHECK(kernel_register(tid, 40) == xmm0);
  CHECK(kernel_register(tid, 60) == ymm0h);

  // The child stores rax and ymm0 to g_out and traps again.
  REQUIRE(child.cont());
  REQUIRE(child.wait_stop() == SIGTRAP);
  regs.forget();
  CHECK(child.peek(&g_out[0]) == 0x1122334455667788);
  std::vector<uint8_t> ymm0(32);
  for (int i = 0; i < 4; ++i) {
    const uint64_t w = child.peek(&g_out[1 + i]);
    std::memcpy(&ymm0[8 * static_cast<size_t>(i)], &w, 8);
  }
  CHECK(std::vector<uint8_t>(ymm0.begin(), ymm0.begin() + 16) == xmm0);
  CHECK(std::vector<uint8_t>(ymm0.begin() + 16, ymm0.end()) == ymm0h);

  // A G write of rax plus write_pc: run the stores once more.
  auto g2 = tracer::read_g_registers(kAmd64, tid, regs);
  REQUIRE(g2.ok());
  const uint64_t rax2 = 0xfeedfacecafebeef;
  std::memcpy(g2->data(), &rax2, 8);
  REQUIRE(tracer::write_g_registers(kAmd64, tid, regs, *g2).ok());
  REQUIRE(tracer::write_pc(tid, reinterpret_cast<uint64_t>(hs_probe_avx_resume)).ok());
  REQUIRE(child.cont());
  REQUIRE(child.wait_stop() == SIGTRAP);
  regs.forget();
  CHECK(child.peek(&g_out[0]) == rax2);
  uint64_t ymm0h_low = 0;
  std::memcpy(&ymm0h_low, ymm0h.data(), 8);
  CHECK(child.peek(&g_out[3]) == ymm0h_low);  // vector state survived the G write
}

TEST_CASE("AVX-512 registers reach the child", "[tracer][registers]") {
  if (!cpu_has_avx512()) {
    HS_SKIP("CPU or kernel without AVX-512");
  }
  Child child(hs_probe_avx512);
  REQUIRE(child.pid() > 0);
  REQUIRE(child.wait_stop() == SIGSTOP);
  REQUIRE(child.cont());
  REQUIRE(child.wait_stop() == SIGTRAP);
  const int tid = child.pid();
  tracer::RegisterCache regs;

  const auto zmm0h = pattern(32, 0x30);  // regnum 116
  const auto xmm16 = pattern(16, 0x60);  // regnum 76
  const auto ymm16h = pattern(16, 0x70); // regnum 92
  const auto k1 = le64(0x0f0f0f0f0f0f0f0f);  // regnum 109
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 116, zmm0h).ok());
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 76, xmm16).ok());
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 92, ymm16h).ok());
  REQUIRE(tracer::write_one_register(kAmd64, tid, regs, 109, k1).ok());
  CHECK(kernel_register(tid, 116) == zmm0h);

  REQUIRE(child.cont());
  REQUIRE(child.wait_stop() == SIGTRAP);
  regs.forget();
  std::vector<uint8_t> mem(136);
  for (size_t i = 0; i < 17; ++i) {
    const uint64_t w = child.peek(&g_out[i]);
    std::memcpy(&mem[8 * i], &w, 8);
  }
  CHECK(std::vector<uint8_t>(mem.begin() + 32, mem.begin() + 64) == zmm0h);
  CHECK(std::vector<uint8_t>(mem.begin() + 64, mem.begin() + 80) == xmm16);
  CHECK(std::vector<uint8_t>(mem.begin() + 80, mem.begin() + 96) == ymm16h);
  CHECK(std::vector<uint8_t>(mem.begin() + 128, mem.end()) == k1);
}

TEST_CASE("register errors", "[tracer][registers]") {
  Child child(hs_probe_avx);
  REQUIRE(child.pid() > 0);
  REQUIRE(child.wait_stop() == SIGSTOP);
  const int tid = child.pid();
  tracer::RegisterCache regs;
  CHECK(tracer::read_one_register(kAmd64, tid, regs, 100000).error().code == base::Errc::invalid);
  CHECK(tracer::write_one_register(kAmd64, tid, regs, 0, {1, 2}).error().code == base::Errc::invalid);
  CHECK(tracer::write_g_registers(kAmd64, tid, regs, std::vector<uint8_t>(100000)).error().code ==
        base::Errc::invalid);

  // A pid we do not trace (our own parent) is "no thread", like one that has gone.
  const int stranger = static_cast<int>(getppid());
  tracer::RegisterCache strangers;
  CHECK(tracer::read_g_registers(kAmd64, stranger, strangers).error().code == base::Errc::no_thread);
  CHECK(tracer::read_pc(stranger).error().code == base::Errc::no_thread);
  CHECK(tracer::write_pc(stranger, 0).error().code == base::Errc::no_thread);
}
