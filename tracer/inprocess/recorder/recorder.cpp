// Entry and exit: the thread's setup, the asm that enters the cache with a return address of
// the recorder's own (the first `ret` that reaches it leaves the cache), and the dispatcher's
// C++ half.
#include "tracer/inprocess/recorder/recorder.hpp"

#include <cpuid.h>
#include <sys/mman.h>
#include <new>

#include "tracer/inprocess/recorder/branch_sequences.hpp"
#include "tracer/inprocess/recorder/thread_state.hpp"

extern "C" std::uint64_t hs_recorder_enter(std::uint64_t cache_fn, void* arg);
extern "C" char hs_recorder_exit_point[];

// hs_recorder_enter(cache_fn, arg): as if fn(arg) were called from hs_recorder_exit_point.
asm(R"(
  .text
  .p2align 4
  .globl hs_recorder_enter
  .hidden hs_recorder_enter
  .type hs_recorder_enter, @function
hs_recorder_enter:
  push %rbx
  mov %rdi, %rax
  mov %rsi, %rdi
  lea hs_recorder_exit_point(%rip), %rcx
  push %rcx
  jmp *%rax
  .globl hs_recorder_exit_point
  .hidden hs_recorder_exit_point
hs_recorder_exit_point:
  pop %rbx
  ret
  .size hs_recorder_enter, .-hs_recorder_enter
)");

namespace recorder {
namespace {

constexpr std::size_t kPrivateStack = 256u << 10;
constexpr std::size_t kDispatcherBytes = 4096;

struct Recorder {
  CodeCache cache;
  BlockMap blocks;
  BlockTranslator translator{cache, blocks};
  bool started = false;
};
Recorder* g_recorder = nullptr;  // prototype: the one recording thread's

std::uint64_t translate_for_dispatcher(std::uint64_t target, std::uint64_t link_slot) {
  const std::uint64_t made = g_recorder->translator.translation_of(target);
  if (link_slot != 0) {
    link_exit(link_slot, made);
  }
  g_recorder->blocks.remember(target, made);
  return made;
}

std::size_t xsave_size() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) {
    return 0;
  }
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  if ((ecx & (1u << 27)) == 0) {  // OSXSAVE
    return 0;
  }
  __cpuid_count(0xd, 0, eax, ebx, ecx, edx);
  return ebx;  // for the components enabled now (XCR0)
}

void* map_rw(std::size_t bytes, int prot = PROT_READ | PROT_WRITE) {
  void* p = mmap(nullptr, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

base::Result<void> start_thread() {
  if (g_recorder != nullptr) {
    return {};
  }
  const std::size_t xsave = xsave_size();
  if (xsave == 0) {
    return base::make_error(base::Errc::unsupported, "this CPU has no XSAVE");
  }
  auto* memory = map_rw(sizeof(Recorder));
  auto* state = static_cast<ThreadState*>(map_rw(sizeof(ThreadState)));
  auto* samples =
      static_cast<hs_recorder_sample*>(map_rw(HS_RECORDER_RING_CAPACITY * sizeof(hs_recorder_sample)));
  auto* stack = static_cast<std::uint8_t*>(map_rw(kPrivateStack));
  auto* area = static_cast<std::uint8_t*>(map_rw((xsave + 4095) & ~std::size_t{4095}));
  auto* dispatcher = static_cast<std::uint8_t*>(map_rw(kDispatcherBytes, PROT_READ | PROT_WRITE | PROT_EXEC));
  if (memory == nullptr || state == nullptr || samples == nullptr || stack == nullptr || area == nullptr ||
      dispatcher == nullptr) {
    return base::sys_error("mmap for the recorder");
  }
  auto* rec = new (memory) Recorder;
  if (!rec->blocks.init()) {
    return base::sys_error("mmap for the recorder's tables");
  }
  rec->translator.leave_at(reinterpret_cast<std::uint64_t>(hs_recorder_exit_point));
  ThreadState& t = *new (state) ThreadState;
  t.ring.head = 0;
  t.ring.samples = samples;
  t.lookup = rec->blocks.lookup_table();
  t.private_stack_top = reinterpret_cast<std::uint64_t>(stack + kPrivateStack);
  t.xsave_area = area;
  Emitter e(dispatcher);
  emit_dispatcher(e, translate_for_dispatcher);
  t.dispatch = reinterpret_cast<std::uint64_t>(dispatcher);
  if (!set_thread_state(&t)) {
    return base::sys_error("arch_prctl(ARCH_SET_GS) for the recorder's thread block");
  }
  g_recorder = rec;
  return {};
}

std::uint64_t run(RecordedFn fn, void* arg) {
  const std::uint64_t start = g_recorder->translator.translation_of(reinterpret_cast<std::uint64_t>(fn));
  return hs_recorder_enter(start, arg);
}

const hs_recorder_ring& ring() {
  return current_thread_state()->ring;
}
void clear_ring() {
  current_thread_state()->ring.head = 0;
}
void set_recording(bool on) {
  g_recorder->translator.set_recording(on);
}
TranslatorStats stats() {
  return g_recorder->translator.stats();
}
std::size_t cache_bytes() {
  return g_recorder->cache.used();
}
std::uint64_t exit_point() {
  return reinterpret_cast<std::uint64_t>(hs_recorder_exit_point);
}

}  // namespace recorder
