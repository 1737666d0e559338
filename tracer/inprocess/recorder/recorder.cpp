// Entry and exit: the thread's setup, the asm that enters the cache with a return address of
// the recorder's own (the first `ret` that reaches it leaves the cache), and the dispatcher's
// C++ half.
#include "tracer/inprocess/recorder/recorder.hpp"

#include <cpuid.h>
#include <fcntl.h>
#include <asm/prctl.h>
#include <atomic>
#include <new>

#include "tracer/inprocess/recorder/branch_sequences.hpp"
#include "tracer/inprocess/recorder/proc_self.hpp"
#include "tracer/inprocess/recorder/program_gs.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/inprocess/recorder/sys.hpp"
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

constexpr std::size_t kPrivateStack = HS_RECORDER_PRIVATE_STACK_BYTES;
constexpr std::size_t kStubBytes = HS_RECORDER_STUB_BYTES;  // the dispatcher and the thread entry
constexpr std::size_t kMaxThreadBlocks = 1024;

struct ThreadBlock {
  ThreadState* state;
  std::size_t xsave_bytes;
  std::size_t shared_bytes;  // the block and its ring, in one piece from `state`
  int shared_fd;  // the memfd they are mapped from, until the thread first runs (-1: closed, none)
  std::uint64_t shared_inode;  // its inode: the descriptor is closed only while it is still that file
};

struct Recorder {
  CodeCache cache;
  BlockMap blocks;
  CodePages pages;
  RseqSections rseq;
  BlockTranslator translator{cache, blocks, pages, rseq};
  std::uint8_t* stubs = nullptr;  // the leave trap, the dispatcher, the thread entry, the maps gate
  std::uint64_t dispatch = 0;
  std::uint64_t exit_dispatch = 0;
  std::uint64_t entry = 0;
  std::uint64_t maps_gate = 0;
  std::uint64_t code_gate = 0;
  std::uint64_t server_gone = 0;
  std::uint64_t computed_miss = 0;
  std::uint64_t computed_gone = 0;
  std::size_t xsave = 0;
  std::uint64_t ring_capacity = 0;  // every ring's (process_ring_capacity); 0 before the first
  ThreadBlock threads[kMaxThreadBlocks]{};
  std::size_t thread_count = 0;
  // In a fork child, the blocks before this one are its parent's (their memory is shared with it,
  // a memfd): never reused here.
  std::size_t first_own_block = 0;
  std::size_t open_fds = 0;  // blocks whose shared_fd is still open
  std::atomic_flag translating;  // one thread translates at a time
  // Three words the server reads or writes (recorder_api.h, translator_slot), in this order.
  struct ServerWords {
    // The block of the thread holding `translating` (0: none): a thread stopped waiting for it
    // cannot step out of the dispatcher until the holder has.
    std::atomic<std::uint64_t> translating_block;
    // Nonzero once a thread left for native code at a system call that made translations stale
    // while other threads could be running them: the server flushes before the next entry.
    std::atomic<std::uint64_t> maps_changed;
    // Set by the server while the threads stop at system calls (catch syscall): a call that
    // may change the mappings runs natively, where its stop shows the program's code.
    std::atomic<std::uint64_t> syscalls_caught;
  } words;
};
Recorder* g_recorder = nullptr;

// A thread pointer for a thread that has none while it translates: Zydis (the distribution's
// build) reads its stack guard at %fs:0x28, and a static program before its libc set TLS up, or a
// thread of a raw clone, has %fs base 0. Zeros, so the guard reads the same at entry and exit.
alignas(64) std::uint8_t g_spare_thread_pointer[256];
// Whether the kernel lets the program read its %fs base itself (rdfsbase: AT_HWCAP2's
// HWCAP2_FSGSBASE), else a system call asks (a stop under catch syscall).
bool g_rdfsbase = false;
// Whether the CPU has BMI2: then the rings have the capacity the server asks for, else the smallest.
bool g_bmi2 = false;

bool has_bmi2() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) {
    return false;
  }
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  return (ebx & (1u << 8)) != 0;
}

std::uint64_t fs_base() {
  std::uint64_t fs = 0;
  if (g_rdfsbase) {
    asm volatile("rdfsbase %0" : "=r"(fs));
  } else if (sys::arch_prctl(ARCH_GET_FS, reinterpret_cast<std::uint64_t>(&fs)) != 0) {
    return 1;  // (unknown: taken as set)
  }
  return fs;
}

class ThreadPointerForTranslation {
 public:
  ThreadPointerForTranslation() {
    if (fs_base() == 0) {
      lent_ = sys::arch_prctl(ARCH_SET_FS, reinterpret_cast<std::uint64_t>(g_spare_thread_pointer)) == 0;
    }
  }
  ~ThreadPointerForTranslation() {
    if (lent_) {
      sys::arch_prctl(ARCH_SET_FS, 0);  // the program's own again
    }
  }
  ThreadPointerForTranslation(const ThreadPointerForTranslation&) = delete;
  ThreadPointerForTranslation& operator=(const ThreadPointerForTranslation&) = delete;

 private:
  bool lent_ = false;
};

void lock_translator(Recorder& rec) {
  while (rec.translating.test_and_set(std::memory_order_acquire)) {
    __builtin_ia32_pause();
  }
  rec.words.translating_block.store(reinterpret_cast<std::uint64_t>(this_thread_block()), std::memory_order_relaxed);
}

void unlock_translator(Recorder& rec) {
  rec.words.translating_block.store(0, std::memory_order_relaxed);
  rec.translating.clear(std::memory_order_release);
}

void forget_translations(Recorder& rec) {
  rec.cache.clear();
  rec.blocks.clear();
  rec.pages.clear();
  rec.rseq.forget_descriptors();
  for (std::size_t i = 0; i < rec.thread_count; ++i) {
    clear_lookup_table(rec.threads[i].state->lookup);
  }
  rec.words.maps_changed.store(0, std::memory_order_relaxed);
  rec.translator.emptied();
}

long raw_syscall(std::uint64_t number, const std::uint64_t a[6]) {
  return sys::call6(static_cast<long>(number), a[0], a[1], a[2], a[3], a[4], a[5]);
}

// The memfd descriptors of blocks, closed in the program (the server has mapped them): all, or
// the one of `only`. Under the translation lock, or with no thread in the cache.
void close_shared_fds(Recorder& rec, const ThreadState* only = nullptr) {
  for (std::size_t i = 0; i < rec.thread_count && rec.open_fds != 0; ++i) {
    ThreadBlock& b = rec.threads[i];
    if (b.shared_fd >= 0 && (only == nullptr || b.state == only)) {
      // (The program may have closed it and opened a file of its own under the same number.)
      struct stat st {};
      if (sys::fstat(b.shared_fd, &st) == 0 && st.st_ino == b.shared_inode) {
        sys::close(b.shared_fd);
      }
      b.shared_fd = -1;
      --rec.open_fds;
    }
  }
}

// `target` translated afresh: the process's only thread (here, in a dispatcher) forgets every
// translation first; with other threads, which may be running translations, the server's flush
// before the next entry is asked for and `target` is left untranslated (it runs natively: a
// gap). Under the translation lock, a thread pointer lent.
std::uint64_t translate_afresh(Recorder& rec, std::uint64_t target) {
  if (thread_count() == 1) {
    forget_translations(rec);
    return rec.translator.translation_of(target);
  }
  rec.words.maps_changed.store(1, std::memory_order_relaxed);
  return target;
}

// The dispatcher's way on: to `to` (a cache address, or the program's own), which stands for the
// program address `app` (the dispatcher goes to the leave trap instead when the server asked).
void go_on(ThreadState& t, std::uint64_t to, std::uint64_t app) {
  t.target_app = app;
  t.target = to;
}

void translate_for_dispatcher(std::uint64_t target, std::uint64_t link_slot) {
  Recorder& rec = *g_recorder;
  ThreadState& t = *this_thread_block();
  lock_translator(rec);
  if (rec.open_fds != 0) {
    close_shared_fds(rec, &t);  // (its first run in the cache: the server has mapped its block)
  }
  std::uint64_t made = 0;
  {
    ThreadPointerForTranslation thread_pointer;
    made = rec.translator.translation_of(target);
    if (made == target && rec.translator.full()) {
      made = translate_afresh(rec, target);
      link_slot = 0;  // (the exit it came by is gone, or the target runs natively)
    }
  }
  if (made == target) {
    // Left for native code (emit_native_exit's note); not remembered, nor linked: code on a
    // writable page may be translatable once it is not (code_pages.hpp).
    t.exited_at = target;
    made = rec.translator.native_exit(target);
    unlock_translator(rec);
    go_on(t, made, target);
    return;
  }
  if ((link_slot & 1) != 0) {
    fill_computed_site(link_slot - 1, target, made);
  } else if (link_slot != 0) {
    link_exit(link_slot, made, rec.thread_count == 1);
  }
  unlock_translator(rec);
  remember(t.lookup, target, made);
  go_on(t, made, target);
}

// What the dispatcher saved on the thread's private stack (emit_dispatcher: pushfq, then rsi,
// rdi, r8, r9, r10, r11), by its place from the top: 0 the flags, 6 r11.
std::uint64_t& dispatcher_saved(const ThreadState& t, int place) {
  return reinterpret_cast<std::uint64_t*>(t.private_stack_top)[-1 - place];
}
constexpr int kSavedFlags = 0;
constexpr int kSavedR11 = 6;

// The maps gate (emit_maps_syscall_check): the thread's system call may change the mappings.
// It is made here, under the translation lock, and the thread goes on after it in the cache;
// when it unmaps or reprotects translated code, the cache is flushed first if this is the
// process's only thread. With other threads, which may be running the translations it made
// stale, the thread stops at the leave trap right after the call, bound for the program's code
// after it: the server pauses every thread in the cache, drops the translations and lets them
// all go on (a JIT thread's rewrite is never run stale by another). While the server catches
// system calls the call is made natively (the server moves the thread back at its stop there).
// Sets where the thread goes on.
void maps_gate(std::uint64_t syscall_pc, std::uint64_t copy) {
  Recorder& rec = *g_recorder;
  ThreadState* t = this_thread_block();
  lock_translator(rec);
  const bool caught = rec.words.syscalls_caught.load(std::memory_order_relaxed) != 0;
  if (std::uint64_t result = 0;
      t->save_rax == SYS_arch_prctl && !caught && program_gs_call(*t, t->syscall_args[0], t->syscall_args[1], &result)) {
    t->save_rax = result;  // (the program's %gs base: program_gs.hpp)
    dispatcher_saved(*t, kSavedR11) = dispatcher_saved(*t, kSavedFlags);
    unlock_translator(rec);
    go_on(*t, copy + 2, syscall_pc + 2);
    return;
  }
  const ChangedRanges changed = changed_ranges(t->save_rax, t->syscall_args);
  bool stale = false;
  for (std::size_t i = 0; i < changed.count; ++i) {
    stale = stale || rec.pages.touches_translated(changed.lo[i], changed.hi[i]);
  }
  if (stale && (thread_count() != 1 || caught)) {
    rec.words.maps_changed.store(1, std::memory_order_relaxed);
  } else if (caught && changed.count != 0) {
    rec.pages.forget_mappings();
  }
  // (With the server gone there is no one to stop for: the call runs natively, a gap, as the
  // threads leave the cache at their next return.)
  const bool server_died = __atomic_load_n(&t->lifeline, __ATOMIC_RELAXED) == HS_RECORDER_SERVER_DIED;
  if (caught || (stale && thread_count() != 1 && server_died)) {
    t->exited_at = syscall_pc;
    unlock_translator(rec);
    go_on(*t, syscall_pc, syscall_pc);
    return;
  }
  t->save_rax = static_cast<std::uint64_t>(raw_syscall(t->save_rax, t->syscall_args));
  dispatcher_saved(*t, kSavedR11) = dispatcher_saved(*t, kSavedFlags);  // as `syscall` leaves r11 (rcx: after the marker)
  if (stale && thread_count() != 1) {
    t->save_rcx = syscall_pc + 2;  // (as the call left it natively)
    t->leave_request = 1;          // the dispatcher goes to the leave trap
    unlock_translator(rec);
    go_on(*t, syscall_pc + 2, syscall_pc + 2);
    return;
  }
  std::uint64_t next = copy + 2;
  if (stale) {
    forget_translations(rec);
    ThreadPointerForTranslation thread_pointer;
    next = rec.translator.translation_of(syscall_pc + 2);
    if (next == syscall_pc + 2) {
      t->exited_at = next;
    }
  } else if (changed.count != 0) {
    rec.pages.forget_mappings();
  }
  unlock_translator(rec);
  go_on(*t, next, syscall_pc + 2);
}

// The code gate (code_check.hpp): the bytes a translation of `target` was made from changed. The
// process's only thread forgets every translation and goes on in a fresh one; with other threads
// (which may be running translations of the old bytes, and will meet their own checks) it runs
// the code natively, a gap, and the server flushes before the next entry.
void code_gate(std::uint64_t target, std::uint64_t /*link_slot*/) {
  Recorder& rec = *g_recorder;
  ThreadState& t = *this_thread_block();
  lock_translator(rec);
  std::uint64_t made = target;
  {
    ThreadPointerForTranslation thread_pointer;
    made = translate_afresh(rec, target);
  }
  if (made == target) {
    t.exited_at = target;
    made = rec.translator.native_exit(target);
  }
  unlock_translator(rec);
  go_on(t, made, target);
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

std::size_t page_round(std::size_t bytes) {
  return (bytes + 4095) & ~std::size_t{4095};
}

void* map_rw(std::size_t bytes, int prot = PROT_READ | PROT_WRITE) {
  return sys::map(nullptr, page_round(bytes), prot, MAP_PRIVATE | MAP_ANONYMOUS);
}

void unmap(const void* p, std::size_t bytes) {
  if (p != nullptr) {
    sys::unmap(p, page_round(bytes));
  }
}

// A thread's block and its ring, in one piece the server can map too: from a memfd (its
// descriptor in `fd`), else (memfd refused: a seccomp filter, an old kernel) private memory and
// fd -1.
void* map_shared(std::size_t bytes, int& fd, std::uint64_t& inode) {
  fd = static_cast<int>(sys::memfd_create("hindsight-ring", MFD_CLOEXEC));
  if (fd >= 0) {
    struct stat st {};
    void* p = sys::ftruncate(fd, bytes) == 0 && sys::fstat(fd, &st) == 0
                  ? sys::map(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd)
                  : nullptr;
    if (p != nullptr) {
      inode = st.st_ino;
      return p;
    }
    sys::close(fd);
    fd = -1;
  }
  fd = -1;
  return map_rw(bytes);
}

// The thread entry: the thread's registers are the program's, its block's `resume` the program
// address it goes on from; the dispatcher takes it there (rcx = 0: no exit to link).
void emit_thread_entry(Emitter& e) {
  const ThreadState& ts = slots();
  e.store_gs(&ts.save_rax, kRax);
  e.store_gs(&ts.save_rcx, kRcx);
  e.store_gs(&ts.save_rdx, kRdx);
  e.load_gs(kRax, &ts.resume);
  e.bytes({0xb9, 0, 0, 0, 0});  // mov ecx, 0 (flags untouched)
  e.jmp_gs(&ts.dispatch);
}

}  // namespace

// The computed exits' shared miss routine (branch_sequences.hpp), the stubs' last piece: it
// records, so it is made again for every capacity of the rings.
void emit_stubs_miss_routine(Recorder& rec) {
  Emitter e(reinterpret_cast<std::uint8_t*>(rec.computed_miss));
  emit_computed_miss(e);
  if (e.here() > rec.stubs + kStubBytes) {
    __builtin_trap();  // (the stubs outgrew their page: a bug of this file's)
  }
}

Failure init() {
  if (g_recorder != nullptr) {
    return nullptr;
  }
  const std::size_t xsave = xsave_size();
  if (xsave == 0) {
    return "this CPU has no XSAVE";
  }
  auto* memory = map_rw(sizeof(Recorder));
  auto* stubs = static_cast<std::uint8_t*>(map_rw(kStubBytes, PROT_READ | PROT_WRITE | PROT_EXEC));
  if (memory == nullptr || stubs == nullptr) {
    unmap(memory, sizeof(Recorder));
    unmap(stubs, kStubBytes);
    return "mmap for the recorder failed";
  }
  auto* rec = new (memory) Recorder;
  if (!rec->blocks.init()) {
    return "mmap for the recorder's tables failed";
  }
  (void)rec->rseq.init();  // (refused: rseq sections run as plain code, as before)
  rec->translator.leave_at(reinterpret_cast<std::uint64_t>(hs_recorder_exit_point));
  rec->xsave = xsave;
  rec->stubs = stubs;
  constexpr unsigned long kHwcap2 = 26, kFsgsbase = 1ul << 1;  // AT_HWCAP2, HWCAP2_FSGSBASE
  g_rdfsbase = (auxv_value(kHwcap2) & kFsgsbase) != 0;
  rec->translator.set_fsgsbase(g_rdfsbase);
  g_bmi2 = has_bmi2();
  Emitter e(stubs);
  static_assert(HS_RECORDER_LEAVE_TRAP_OFFSET == 0);
  e.bytes({0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,  // the leave trap (then padding)
           0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc});
  rec->exit_dispatch = e.address();
  emit_exit_dispatch(e);  // (into the dispatcher, right after it)
  rec->dispatch = e.address();
  emit_dispatcher(e, translate_for_dispatcher, reinterpret_cast<std::uint64_t>(stubs) + HS_RECORDER_LEAVE_TRAP_OFFSET);
  rec->entry = e.address();
  emit_thread_entry(e);
  rec->translator.set_thread_entry(rec->entry);
  rec->maps_gate = e.address();
  emit_dispatcher(e, maps_gate, reinterpret_cast<std::uint64_t>(stubs) + HS_RECORDER_LEAVE_TRAP_OFFSET);
  rec->code_gate = e.address();
  emit_dispatcher(e, code_gate, reinterpret_cast<std::uint64_t>(stubs) + HS_RECORDER_LEAVE_TRAP_OFFSET);
  rec->server_gone = e.address();
  emit_server_gone(e, g_rdfsbase);
  rec->computed_gone = e.address();
  emit_computed_gone(e);
  rec->computed_miss = e.address();  // (last: made again when the rings' capacity changes)
  emit_stubs_miss_routine(*rec);
  g_recorder = rec;
  return nullptr;
}

// The stubs' entries a thread's block names for its translated code (thread_state.hpp).
void give_stub_entries(const Recorder& rec, ThreadState& t) {
  t.dispatch = rec.dispatch;
  t.exit_dispatch = rec.exit_dispatch;
  t.maps_gate = rec.maps_gate;
  t.code_gate = rec.code_gate;
  t.server_gone = rec.server_gone;
  t.computed_miss = rec.computed_miss;
  t.computed_gone = rec.computed_gone;
}

// A block the server retired (its thread gone), made anew for the next thread: its ring empty,
// its lookup table cleared, its memory and the server's mapping of it kept.
ThreadState* reuse_retired_block(Recorder& rec, std::uint64_t capacity) {
  for (std::size_t i = rec.first_own_block; i < rec.thread_count; ++i) {
    ThreadState& t = *rec.threads[i].state;
    if (t.info.retired != 1 || t.ring.capacity != capacity) {
      continue;
    }
    const ThreadState kept = t;
    new (&t) ThreadState;
    t.self = &t;
    t.ring.samples = kept.ring.samples;
    t.ring.capacity = kept.ring.capacity;
    t.lookup = kept.lookup;
    t.private_stack_top = kept.private_stack_top;
    t.xsave_area = kept.xsave_area;
    give_stub_entries(rec, t);
    t.lifeline_link = kept.lifeline_link;  // (the server's, kept as it is)
    t.lifeline = kept.lifeline;
    t.info = kept.info;
    t.info.shared_fd = -1;
    t.info.retired = 0;
    clear_lookup_table(t.lookup);
    return &t;
  }
  return nullptr;
}

// The ring capacity `samples` asks for: a power of two within recorder_ring.h's bounds, the
// smallest without BMI2 (whose rorx wraps a larger ring's head: branch_sequences.hpp).
std::uint64_t ring_capacity(std::uint64_t samples) {
  std::uint64_t capacity = HS_RECORDER_RING_MIN_CAPACITY;
  while (g_bmi2 && capacity < samples && capacity < HS_RECORDER_RING_MAX_CAPACITY) {
    capacity <<= 1;
  }
  return capacity;
}

// Every ring of the process has one capacity, which the translations wrap heads by: the first
// block's ask, changed for a later ask only while no block is in use (every translation
// forgotten then; none can be running). A thread that asks otherwise meanwhile gets the
// process's.
std::uint64_t process_ring_capacity(Recorder& rec, std::uint64_t samples) {
  const std::uint64_t asked = ring_capacity(samples);
  if (asked == rec.ring_capacity) {
    return asked;
  }
  for (std::size_t i = rec.first_own_block; i < rec.thread_count; ++i) {
    if (rec.threads[i].state->info.retired != 1) {
      return rec.ring_capacity;
    }
  }
  if (rec.ring_capacity != 0) {
    forget_translations(rec);
  }
  rec.ring_capacity = asked;
  set_ring_bits(static_cast<unsigned>(__builtin_ctzll(asked)));
  emit_stubs_miss_routine(rec);
  return asked;
}

ThreadState* new_thread_block(std::uint64_t samples) {
  Recorder* rec = g_recorder;
  if (rec == nullptr) {
    return nullptr;
  }
  const std::uint64_t capacity = process_ring_capacity(*rec, samples);
  if (ThreadState* reused = reuse_retired_block(*rec, capacity)) {
    return reused;
  }
  if (rec->thread_count == kMaxThreadBlocks) {
    return nullptr;
  }
  const std::size_t shared_bytes = kSamplesOffset + capacity * sizeof(hs_recorder_sample);
  int fd = -1;
  std::uint64_t inode = 0;
  auto* shared = static_cast<std::uint8_t*>(map_shared(shared_bytes, fd, inode));
  auto* stack = static_cast<std::uint8_t*>(map_rw(kPrivateStack));
  auto* area = static_cast<std::uint8_t*>(map_rw(rec->xsave));
  LookupEntry* lookup = map_lookup_table();
  if (shared == nullptr || stack == nullptr || area == nullptr || lookup == nullptr) {
    unmap_lookup_table(lookup);
    unmap(shared, shared_bytes);
    if (fd >= 0) {
      sys::close(fd);
    }
    unmap(stack, kPrivateStack);
    unmap(area, rec->xsave);
    return nullptr;
  }
  ThreadState& t = *new (shared) ThreadState;
  t.self = &t;
  t.ring.samples = reinterpret_cast<hs_recorder_sample*>(shared + kSamplesOffset);  // (where the code stores)
  t.ring.capacity = capacity;
  t.lookup = lookup;
  t.private_stack_top = reinterpret_cast<std::uint64_t>(stack + kPrivateStack);
  t.xsave_area = area;
  give_stub_entries(*rec, t);
  auto address = [](const void* p) { return reinterpret_cast<std::uint64_t>(p); };
  t.info = {.block = address(&t),
            .resume_slot = address(&t.resume),
            .exit_slot = address(&t.exited_at),
            .ring = address(&t.ring),
            .private_stack_top = t.private_stack_top,
            .leave_slots = address(&t.target),
            .shared_fd = fd,
            .shared_bytes = shared_bytes,
            .retired = 0,
            .app_gs_slot = address(&t.app_gs),
            .rseq_cs_kept_slot = address(&t.rseq_cs_kept),
            .lifeline_slot = address(&t.lifeline_link)};
  rec->threads[rec->thread_count++] = ThreadBlock{&t, rec->xsave, shared_bytes, fd, inode};
  rec->open_fds += fd >= 0 ? 1 : 0;
  return &t;
}

std::uint64_t thread_entry() {
  return g_recorder != nullptr ? g_recorder->entry : 0;
}

std::uint64_t translator_slot() {
  return g_recorder != nullptr ? reinterpret_cast<std::uint64_t>(&g_recorder->words) : 0;
}

std::uint64_t stubs() {
  return g_recorder != nullptr ? reinterpret_cast<std::uint64_t>(g_recorder->stubs) : 0;
}

void describe_cache(hs_recorder_process_info& info) {
  Recorder* rec = g_recorder;
  if (rec == nullptr) {
    return;
  }
  info.cache_regions = rec->cache.regions_address();
  info.cache_region_count = rec->cache.count_address();
  info.rseq_config = reinterpret_cast<std::uint64_t>(&rec->rseq.config());
  info.rseq_descriptors = rec->rseq.descriptors();
  info.rseq_descriptor_bytes = info.rseq_descriptors != 0 ? RseqSections::kDescriptorBytes : 0;
}

void flush() {
  Recorder* rec = g_recorder;
  if (rec == nullptr) {
    return;
  }
  forget_translations(*rec);
}

void settle_fork_child() {
  Recorder* rec = g_recorder;
  if (rec == nullptr) {
    return;
  }
  rec->words.translating_block.store(0, std::memory_order_relaxed);
  rec->translating.clear(std::memory_order_release);
  close_shared_fds(*rec);  // (copies of the parent's: this process maps nothing of them itself)
  rec->first_own_block = rec->thread_count;
  forget_translations(*rec);
}

void shutdown() {
  Recorder* rec = g_recorder;
  if (rec == nullptr) {
    return;
  }
  close_shared_fds(*rec);  // (of threads that never ran in the cache)
  for (std::size_t i = 0; i < rec->thread_count; ++i) {
    ThreadState* t = rec->threads[i].state;
    unmap(reinterpret_cast<void*>(t->private_stack_top - kPrivateStack), kPrivateStack);
    unmap(t->xsave_area, rec->threads[i].xsave_bytes);
    unmap_lookup_table(t->lookup);
    unmap(t, rec->threads[i].shared_bytes);
  }
  rec->cache.release();
  rec->blocks.release();
  rec->rseq.unmap();
  unmap(rec->stubs, kStubBytes);
  rec->~Recorder();
  unmap(rec, sizeof(Recorder));
  g_recorder = nullptr;
}

Failure start_thread() {
  if (current_thread_state() != nullptr) {
    return nullptr;
  }
  if (const Failure failure = init(); failure != nullptr) {
    return failure;
  }
  ThreadState* block = new_thread_block(HS_RECORDER_RING_MIN_CAPACITY);
  if (block == nullptr) {
    return "mmap for the recorder's thread block failed";
  }
  if (!set_thread_state(block)) {
    return "arch_prctl(ARCH_SET_GS) for the recorder's thread block failed";
  }
  block->app_gs = reinterpret_cast<std::uint64_t>(block);  // (this program's own code reads its block natively)
  lock_translator(*g_recorder);
  close_shared_fds(*g_recorder, block);  // (no server maps it: this process records itself)
  unlock_translator(*g_recorder);
  return nullptr;
}

std::uint64_t run(RecordedFn fn, void* arg) {
  const std::uint64_t start = g_recorder->translator.translation_of(reinterpret_cast<std::uint64_t>(fn));
  return hs_recorder_enter(start, arg);
}

void set_rseq(std::int64_t cs_offset, std::uint32_t signature) {
  g_recorder->rseq.config() = {cs_offset, signature};
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
