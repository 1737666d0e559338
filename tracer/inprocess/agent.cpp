// libhindsight-agent.so: the in-process agent for fast tracepoints. Preloaded into (or linked
// with) the program, it sets up its control block (tracer/trace/agent_wire.hpp), an executable
// area for jump pads within a rel32 of the program, and a ring of frames. The server writes the
// tracepoints and the pads; a pad calls hindsight_agent_collect, which evaluates the
// tracepoint's condition and actions right here, in the thread that hit it, and leaves a record
// in the ring. When the ring is full, or a pass count or an error ends the run, it calls
// hindsight_agent_notify, where the server keeps an int3: the server takes the frames then.
#include <cpuid.h>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <asm/prctl.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "tracer/agent/bytecode.hpp"
#include "tracer/inprocess/arena.hpp"
#include "tracer/trace/agent_wire.hpp"

namespace trace = tracer::trace;
namespace agent = tracer::agent;

#define EXPORTED extern "C" __attribute__((visibility("default")))

extern "C" {
__attribute__((visibility("default"))) trace::AgentControl hindsight_agent;
}

EXPORTED void hindsight_agent_collect(std::uint64_t index, const std::uint64_t* saved, const std::uint8_t* save_area,
                                      std::uint64_t address);

// The server's int3 stands here; without a server it returns at once.
EXPORTED __attribute__((noinline)) void hindsight_agent_notify() { asm volatile("nop" ::: "memory"); }

namespace hindsight_agent_impl {
namespace {

using agent_memory::ArenaKind;
using agent_memory::ArenaScope;

constexpr std::size_t kPadsSize = 1 << 20;
constexpr std::size_t kDefinitionsSize = 256 * 1024;
constexpr std::size_t kRingSize = 1 << 20;
constexpr std::uint64_t kSavedMask = 0x2e7;  // x87 SSE AVX opmask ZMM_Hi256 Hi16_ZMM PKRU

alignas(64) std::uint8_t definitions[kDefinitionsSize];
alignas(64) std::uint8_t ring[kRingSize];

std::atomic_flag lock_flag = ATOMIC_FLAG_INIT;
__attribute__((tls_model("initial-exec"))) thread_local bool collecting_here = false;
pid_t self = 0;

std::uint64_t parsed_generation = 0;
std::vector<trace::Tracepoint>* tracepoints = nullptr;  // in the Definitions arena
std::vector<std::uint64_t>* hits = nullptr;

class Lock {
 public:
  Lock() {
    while (lock_flag.test_and_set(std::memory_order_acquire)) {
      sched_yield();
    }
  }
  ~Lock() { lock_flag.clear(std::memory_order_release); }
};

// GDB's amd64 register numbers 0..23 as indices in user_regs_struct.
constexpr int kGprIndex[24] = {10, 5, 11, 12, 13, 14, 4, 19, 9, 8, 7, 6, 3, 2, 1, 0, 16, 18, 17, 20, 23, 24, 25, 26};

std::uint16_t selector(int which) {
  std::uint16_t v = 0;
  switch (which) {
    case 0: asm("mov %%cs, %0" : "=r"(v)); break;
    case 1: asm("mov %%ss, %0" : "=r"(v)); break;
    case 2: asm("mov %%ds, %0" : "=r"(v)); break;
    case 3: asm("mov %%es, %0" : "=r"(v)); break;
    case 4: asm("mov %%fs, %0" : "=r"(v)); break;
    default: asm("mov %%gs, %0" : "=r"(v)); break;
  }
  return v;
}

// Memory the agent reads with a plain copy, no syscall (a hit must stay fast, and GDB's own
// tests check that collection makes none): the program's own segments, and the hitting
// thread's stack from its red zone up (see HitThread::stack_end). Anything else is read with
// process_vm_readv, so that an address the program unmapped is unavailable, never a fault.
struct Range {
  std::uint64_t lo = 0, hi = 0;
};
Range program_segments[16];
int program_segment_count = 0;
Range main_stack;  // the [stack] mapping of the main thread
bool has_fsgsbase = false;

std::uint64_t fs_base() {
  std::uint64_t v = 0;
  if (has_fsgsbase) {
    asm volatile("rdfsbase %0" : "=r"(v));
  } else {
    asm volatile("mov %%fs:0, %0" : "=r"(v));  // (the TCB's pointer to itself: the base)
  }
  return v;
}

std::uint64_t gs_base() {
  unsigned long v = 0;
  if (has_fsgsbase) {
    asm volatile("rdgsbase %0" : "=r"(v));
  } else {
    (void)syscall(SYS_arch_prctl, ARCH_GET_GS, &v);
  }
  return v;
}

bool inside(const Range& r, std::uint64_t addr, std::size_t len) {
  return addr >= r.lo && addr < r.hi && len <= r.hi - addr;
}

// Reads the program's memory without faulting on a bad address: what can be read of it.
std::size_t read_self(std::uint64_t addr, std::size_t len, std::uint8_t* out, const Range& stack) {
  bool direct = inside(stack, addr, len);
  for (int i = 0; i < program_segment_count && !direct; ++i) {
    direct = inside(program_segments[i], addr, len);
  }
  if (direct) {
    std::memcpy(out, reinterpret_cast<const void*>(addr), len);
    return len;
  }
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  const ssize_t got = process_vm_readv(self, &local, 1, &remote, 1, 0);
  return got > 0 ? static_cast<std::size_t>(got) : 0;
}

// The thread at its fast tracepoint, as agent expressions see it; what trace ops collect goes
// into the record.
class HitThread final : public agent::Machine {
 public:
  HitThread(const std::uint64_t* saved, std::uint64_t address, trace::AgentRecord& rec)
      : saved_(saved), address_(address), rec_(rec) {
    const std::uint64_t rsp = gpr(19);
    stack_ = Range{rsp - 128, stack_end(rsp)};
  }

  // Where the thread's stack ends above rsp: the main thread's [stack] mapping, or a pthread's
  // thread block, which glibc puts at the top of the thread's stack (0: not known).
  static std::uint64_t stack_end(std::uint64_t rsp) {
    if (rsp >= main_stack.lo && rsp < main_stack.hi) {
      return main_stack.hi;
    }
    const std::uint64_t tcb = fs_base();
    return tcb > rsp && tcb - rsp < (std::uint64_t{256} << 20) ? tcb : 0;
  }
  std::size_t read_memory(std::uint64_t addr, std::size_t len, std::uint8_t* out) const {
    return read_self(addr, len, out, stack_);
  }

  std::uint64_t gpr(int index) const {
    if (index < 15) {
      return saved_[index];
    }
    switch (index) {
      case 15: return ~std::uint64_t{0};  // orig_rax: not in a syscall
      case 16: return address_;
      case 17: return selector(0);
      case 18: return saved_[15];
      case 19: return reinterpret_cast<std::uint64_t>(saved_ + 16) + 128;
      case 20: return selector(1);
      case 21: return fs_base();
      case 22: return gs_base();
      default: return selector(index - 21);  // ds es fs gs
    }
  }
  base::Result<std::uint64_t> reg(int regno) override {
    if (regno < 0 || regno >= 24) {
      return base::make_error(base::Errc::invalid, "register not saved by the jump pad");
    }
    return gpr(kGprIndex[regno]);
  }
  base::Result<std::uint64_t> read(tracer::Addr addr, std::size_t len) override {
    std::uint64_t v = 0;
    if (len > sizeof v || read_memory(addr, len, reinterpret_cast<std::uint8_t*>(&v)) != len) {
      return base::make_error(base::Errc::invalid, "cannot read memory");
    }
    return v;
  }
  void print(std::string_view) override {}
  base::Result<void> collect(tracer::Addr addr, std::size_t len) override {
    while (len > 0) {
      const std::size_t piece = std::min(len, trace::kMaxMemoryBlock);
      trace::MemoryBlock b{addr, tracer::Bytes(piece)};
      const std::size_t got = read_memory(addr, piece, b.bytes.data());
      if (got == 0) {
        break;  // unreadable: unavailable in the frame
      }
      b.bytes.resize(got);
      rec_.memory.push_back(std::move(b));
      if (got < piece) {
        break;
      }
      addr += got;
      len -= got;
    }
    return base::success();
  }
  base::Result<void> collect_string(tracer::Addr addr, std::size_t limit) override {
    trace::MemoryBlock b{addr, tracer::Bytes(std::min(limit, trace::kMaxMemoryBlock))};
    b.bytes.resize(read_memory(addr, b.bytes.size(), b.bytes.data()));
    if (auto nul = std::find(b.bytes.begin(), b.bytes.end(), 0); nul != b.bytes.end()) {
      b.bytes.erase(nul + 1, b.bytes.end());
    }
    if (!b.bytes.empty()) {
      rec_.memory.push_back(std::move(b));
    }
    return base::success();
  }

 private:
  const std::uint64_t* saved_;
  std::uint64_t address_;
  trace::AgentRecord& rec_;
  Range stack_;
};

void end_run(trace::AgentEnd why, std::uint32_t number, std::string_view error) {
  hindsight_agent.collecting = 0;
  hindsight_agent.ended_by = static_cast<std::uint32_t>(why);
  hindsight_agent.ended_tracepoint = number;
  const std::size_t n = std::min(error.size(), sizeof hindsight_agent.error - 1);
  std::memcpy(hindsight_agent.error, error.data(), n);
  hindsight_agent.error[n] = 0;
}

// The server's tracepoints, read again when it wrote new ones.
bool refresh_definitions() {
  const std::uint64_t generation = __atomic_load_n(&hindsight_agent.generation, __ATOMIC_ACQUIRE);
  if (tracepoints != nullptr && generation == parsed_generation) {
    return true;
  }
  ArenaScope scope(ArenaKind::Definitions);
  tracepoints = nullptr;
  auto decoded = trace::decode_agent_tracepoints(
      std::span<const std::uint8_t>(definitions, std::min<std::uint64_t>(hindsight_agent.definitions_size, kDefinitionsSize)));
  if (!decoded) {
    end_run(trace::AgentEnd::Error, 0, "the server's tracepoints are not well formed");
    return false;
  }
  tracepoints = new std::vector<trace::Tracepoint>(std::move(*decoded));
  hits = new std::vector<std::uint64_t>(tracepoints->size(), 0);
  parsed_generation = generation;
  return true;
}

// Room for n bytes at the ring's head (a skip record fills an end too short); false when full.
std::uint8_t* reserve(std::size_t n) {
  const std::uint64_t tail = __atomic_load_n(&hindsight_agent.tail, __ATOMIC_ACQUIRE);
  std::uint64_t head = hindsight_agent.head;
  const std::size_t to_end = kRingSize - head % kRingSize;
  const std::size_t skip = to_end < n ? to_end : 0;
  if (kRingSize - (head - tail) < skip + n) {
    return nullptr;
  }
  if (skip != 0) {
    const auto len = static_cast<std::uint32_t>(skip);
    std::memcpy(ring + head % kRingSize, &len, 4);
    std::memcpy(ring + head % kRingSize + 4, &trace::kRingSkip, 4);
    head += skip;
    __atomic_store_n(&hindsight_agent.head, head, __ATOMIC_RELEASE);
  }
  return ring + head % kRingSize;
}

enum class Outcome { Done, Full, Notify };

Outcome collect_locked(std::uint64_t index, const std::uint64_t* saved, const std::uint8_t* save_area,
                       std::uint64_t address) {
  if (hindsight_agent.collecting == 0 || !refresh_definitions() || index >= tracepoints->size()) {
    return Outcome::Done;
  }
  ArenaScope scope(ArenaKind::Scratch);
  trace::Tracepoint& tp = (*tracepoints)[index];
  trace::AgentRecord rec;
  rec.index = static_cast<std::uint32_t>(index);
  rec.generation = static_cast<std::uint32_t>(parsed_generation);
  rec.pc = address;
  HitThread thread(saved, address, rec);
  if (tp.condition) {
    auto value = agent::evaluate(*tp.condition, thread);
    if (!value) {
      end_run(trace::AgentEnd::Error, tp.number, value.error().message());
      return Outcome::Notify;
    }
    if (*value == 0) {
      return Outcome::Done;
    }
  }
  auto done = trace::run_actions(tp.actions, thread, [&] {
    rec.gpr.resize(trace::kGprWords);
    for (int i = 0; i < static_cast<int>(trace::kGprWords); ++i) {
      rec.gpr[static_cast<std::size_t>(i)] = thread.gpr(i);
    }
    rec.save_area.assign(save_area, save_area + (hindsight_agent.save_area != 0 ? hindsight_agent.save_area : 512));
  });
  if (!done) {
    end_run(trace::AgentEnd::Error, tp.number, done.error().message());
    return Outcome::Notify;
  }
  std::vector<std::size_t> lengths;
  for (const auto& b : rec.memory) {
    lengths.push_back(b.bytes.size());
  }
  const std::size_t size = trace::record_size(!rec.gpr.empty(), rec.save_area.size(), lengths);
  if (size > kRingSize / 2) {
    // (Never fits with a skip: half the ring at most, and an empty ring takes any record.)
    __atomic_add_fetch(&hindsight_agent.lost, 1, __ATOMIC_RELAXED);
    return Outcome::Done;
  }
  std::uint8_t* at = reserve(size);
  if (at == nullptr) {
    return Outcome::Full;
  }
  trace::write_record(rec, std::span<std::uint8_t>(at, size));
  __atomic_store_n(&hindsight_agent.head, hindsight_agent.head + size, __ATOMIC_RELEASE);
  const std::uint64_t n = ++(*hits)[index];
  if (tp.pass_count != 0 && n >= tp.pass_count) {
    end_run(trace::AgentEnd::PassCount, tp.number, "");
    return Outcome::Notify;
  }
  return Outcome::Done;
}

Outcome collect_once(std::uint64_t index, const std::uint64_t* saved, const std::uint8_t* save_area,
                     std::uint64_t address) {
  Lock lock;
  try {
    return collect_locked(index, saved, save_area, address);
  } catch (...) {  // (an arena ran out: this hit is lost)
    __atomic_add_fetch(&hindsight_agent.lost, 1, __ATOMIC_RELAXED);
    return Outcome::Done;
  }
}

// Where the pads go: a free area below the program, within a rel32 of all of it.
std::uint64_t map_pads() {
  const std::uint64_t program = getauxval(AT_PHDR) & ~std::uint64_t{0xfffff};
  for (std::uint64_t step = 1; step < 1024 && program > step * kPadsSize + 0x10000; ++step) {
    void* want = reinterpret_cast<void*>(program - step * kPadsSize);
    void* got = mmap(want, kPadsSize, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == want) {
      return reinterpret_cast<std::uint64_t>(got);
    }
    if (got != MAP_FAILED) {
      munmap(got, kPadsSize);  // (a kernel without MAP_FIXED_NOREPLACE took it as a hint)
    }
  }
  return 0;
}

// How much of the XSAVE area the pads save: up to the last component of kSavedMask enabled.
void probe_save_area() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) {
    return;
  }
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  if ((ecx & (1u << 27)) == 0) {  // OSXSAVE
    return;
  }
  std::uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const std::uint64_t mask = ((std::uint64_t{hi} << 32) | lo) & kSavedMask;
  std::uint32_t end = 512 + 64;  // legacy area and header
  for (int c = 2; c < 10; ++c) {
    if (((mask >> c) & 1) != 0) {
      __cpuid_count(0xd, c, eax, ebx, ecx, edx);
      end = std::max(end, ebx + eax);
    }
  }
  __cpuid_count(0xd, 1, eax, ebx, ecx, edx);
  if ((eax & 1) != 0) {
    hindsight_agent.flags |= trace::kAgentXsaveopt;
  }
  hindsight_agent.save_mask = mask;
  hindsight_agent.save_area = (end + 63) & ~63u;
}

void refresh_pid() { self = getpid(); }

// The program's PT_LOAD segments (page-rounded), from its program headers in memory.
void find_program_segments() {
  const auto* phdr = reinterpret_cast<const Elf64_Phdr*>(getauxval(AT_PHDR));
  const std::size_t count = getauxval(AT_PHNUM);
  if (phdr == nullptr) {
    return;
  }
  std::uint64_t bias = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (phdr[i].p_type == PT_PHDR) {
      bias = reinterpret_cast<std::uint64_t>(phdr) - phdr[i].p_vaddr;
    }
  }
  constexpr std::uint64_t kPage = 4096;
  for (std::size_t i = 0; i < count && program_segment_count < 16; ++i) {
    if (phdr[i].p_type == PT_LOAD && (phdr[i].p_flags & PF_R) != 0) {
      const std::uint64_t lo = (bias + phdr[i].p_vaddr) & ~(kPage - 1);
      const std::uint64_t hi = (bias + phdr[i].p_vaddr + phdr[i].p_memsz + kPage - 1) & ~(kPage - 1);
      program_segments[program_segment_count++] = Range{lo, hi};
    }
  }
}

// The main thread's [stack] mapping, from /proc/self/maps (read with plain syscalls: the
// program's malloc is not the agent's to use).
void find_main_stack() {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  static char text[1 << 16];
  std::size_t used = 0;
  for (;;) {
    const ssize_t got = read(fd, text + used, sizeof text - 1 - used);
    if (got <= 0) {
      break;
    }
    used += static_cast<std::size_t>(got);
    text[used] = 0;
    char* line_end = nullptr;
    for (char* line = text; (line_end = std::strchr(line, '\n')) != nullptr; line = line_end + 1) {
      *line_end = 0;
      if (std::strstr(line, "[stack]") != nullptr) {
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
          main_stack = Range{lo, hi};
        }
      }
      *line_end = '\n';
    }
    // Keep the unfinished last line for the next read.
    char* last = std::strrchr(text, '\n');
    const std::size_t keep = last == nullptr ? 0 : used - static_cast<std::size_t>(last + 1 - text);
    if (last != nullptr) {
      std::memmove(text, last + 1, keep);
    }
    used = keep;
    if (used >= sizeof text - 1) {
      used = 0;  // (a line longer than the buffer: dropped)
    }
  }
  close(fd);
}

__attribute__((constructor)) void start_agent() {
  refresh_pid();
  pthread_atfork(nullptr, nullptr, refresh_pid);
  has_fsgsbase = (getauxval(AT_HWCAP2) & 2) != 0;  // HWCAP2_FSGSBASE: rdfsbase in user mode
  find_program_segments();
  find_main_stack();
  probe_save_area();
  hindsight_agent.collector = reinterpret_cast<std::uint64_t>(&hindsight_agent_collect);
  hindsight_agent.notify = reinterpret_cast<std::uint64_t>(&hindsight_agent_notify);
  hindsight_agent.definitions = reinterpret_cast<std::uint64_t>(definitions);
  hindsight_agent.definitions_size = kDefinitionsSize;
  hindsight_agent.ring = reinterpret_cast<std::uint64_t>(ring);
  hindsight_agent.ring_size = kRingSize;
  hindsight_agent.pads = map_pads();
  hindsight_agent.pads_size = hindsight_agent.pads != 0 ? kPadsSize : 0;
}

// At the program's exit (from main or exit()), the frames still in the ring go to the server
// while the process is still there to be read.
__attribute__((destructor)) void end_agent() {
  if (__atomic_load_n(&hindsight_agent.head, __ATOMIC_ACQUIRE) != __atomic_load_n(&hindsight_agent.tail, __ATOMIC_ACQUIRE)) {
    hindsight_agent_notify();
  }
}

}  // namespace
}  // namespace hindsight_agent_impl

void hindsight_agent_collect(std::uint64_t index, const std::uint64_t* saved, const std::uint8_t* save_area,
                             std::uint64_t address) {
  using namespace hindsight_agent_impl;
  if (__atomic_load_n(&hindsight_agent.collecting, __ATOMIC_ACQUIRE) == 0) {
    return;
  }
  if (collecting_here) {  // a tracepoint in what the agent itself runs, or in a signal handler
    __atomic_add_fetch(&hindsight_agent.lost, 1, __ATOMIC_RELAXED);
    return;
  }
  collecting_here = true;
  Outcome out = collect_once(index, saved, save_area, address);
  while (out == Outcome::Full) {
    // The server takes the frames; other threads may fill the ring again before this one
    // is back, so it asks again as long as the server takes some. With nobody taking
    // (no server at the int3), the hit is lost.
    const std::uint64_t tail = __atomic_load_n(&hindsight_agent.tail, __ATOMIC_ACQUIRE);
    hindsight_agent_notify();
    if (__atomic_load_n(&hindsight_agent.tail, __ATOMIC_ACQUIRE) == tail) {
      __atomic_add_fetch(&hindsight_agent.lost, 1, __ATOMIC_RELAXED);
      break;
    }
    out = collect_once(index, saved, save_area, address);
  }
  if (out == Outcome::Notify) {
    hindsight_agent_notify();
  }
  collecting_here = false;
}
