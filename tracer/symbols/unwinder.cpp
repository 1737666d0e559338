// libunwind over the Target: remote unwinding with accessors of our own. Unwind tables come
// from .eh_frame_hdr in the process's memory (a binary search table of FDEs that libunwind's
// DWARF code walks itself); a frame without one falls back to libunwind's frame-chain guess.
#include "tracer/symbols/unwinder.hpp"

#include <libunwind.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

// Exported by libunwind and not declared in its headers: the .eh_frame_hdr table search that
// its own ptrace accessors use.
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t* di,
                                                   unw_proc_info_t* pi, int need_unwind_info, void* arg);

namespace tracer {
namespace {

constexpr int kRegisters = 17;  // rax rbx rcx rdx rsi rdi rbp rsp r8-r15 rip, as in `g`

struct UnwindContext {
  MemoryCache* memory;
  Symbolizer* symbols;
  std::array<unw_word_t, kRegisters> regs{};
};

UnwindContext& unwind_context(void* arg) { return *static_cast<UnwindContext*>(arg); }

// libunwind's x86-64 register number to its slot in `g`.
int g_slot(unw_regnum_t reg) {
  switch (reg) {
    case UNW_X86_64_RAX: return 0;
    case UNW_X86_64_RBX: return 1;
    case UNW_X86_64_RCX: return 2;
    case UNW_X86_64_RDX: return 3;
    case UNW_X86_64_RSI: return 4;
    case UNW_X86_64_RDI: return 5;
    case UNW_X86_64_RBP: return 6;
    case UNW_X86_64_RSP: return 7;
    case UNW_X86_64_RIP: return 16;
    default:
      return reg >= UNW_X86_64_R8 && reg <= UNW_X86_64_R15 ? 8 + (reg - UNW_X86_64_R8) : -1;
  }
}

// .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count and the table.
constexpr std::uint8_t kEhUdata4 = 0x03;
constexpr std::uint8_t kEhSdata4 = 0x0b;
constexpr std::uint8_t kEhDatarelSdata4 = 0x3b;
constexpr std::size_t kEhHeaderBytes = 12;  // 4 bytes of version/encodings, 2 x 4-byte fields

int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need_unwind_info, void* arg) {
  UnwindContext& cx = unwind_context(arg);
  auto table = cx.symbols->unwind_table(ip);
  std::array<std::uint8_t, kEhHeaderBytes> hdr{};
  if (!table || !cx.memory->read(table->eh_frame_hdr, hdr.data(), hdr.size())) {
    return -UNW_ENOINFO;
  }
  const bool four_byte_ptr = (hdr[1] & 0x0f) == kEhUdata4 || (hdr[1] & 0x0f) == kEhSdata4;
  if (hdr[0] != 1 || !four_byte_ptr || hdr[2] != kEhUdata4 || hdr[3] != kEhDatarelSdata4) {
    return -UNW_ENOINFO;  // a layout other than the linkers' usual one: no table search
  }
  std::uint32_t fde_count = 0;
  std::memcpy(&fde_count, hdr.data() + 8, sizeof fde_count);
  unw_dyn_info_t di{};
  di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
  di.start_ip = table->module_start;
  di.end_ip = table->module_end;
  di.u.rti.segbase = table->eh_frame_hdr;
  di.u.rti.table_data = table->eh_frame_hdr + kEhHeaderBytes;
  di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);  // entries of two 4-byte fields
  return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

// The unwind info libunwind's table search hands out lives in libunwind's own pool.
void put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) {}

int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

int access_mem(unw_addr_space_t, unw_word_t addr, unw_word_t* value, int write, void* arg) {
  if (write != 0) {
    return -UNW_EINVAL;  // the unwinder never changes the process
  }
  return unwind_context(arg).memory->read(addr, value, sizeof *value) ? 0 : -UNW_EINVAL;
}

int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void* arg) {
  const int slot = g_slot(reg);
  if (write != 0 || slot < 0) {
    return -UNW_EBADREG;
  }
  *value = unwind_context(arg).regs[static_cast<std::size_t>(slot)];
  return 0;
}

int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) { return -UNW_EBADREG; }

int resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }

int get_proc_name(unw_addr_space_t, unw_word_t ip, char* buf, std::size_t len, unw_word_t* offset, void* arg) {
  const SourceLocation& where = unwind_context(arg).symbols->locate(ip);
  if (where.function.empty() || len == 0) {
    return -UNW_ENOINFO;
  }
  std::snprintf(buf, len, "%s", where.function.c_str());
  *offset = ip - where.function_start;
  return 0;
}

unw_accessors_t accessors() {
  unw_accessors_t a{};
  a.find_proc_info = find_proc_info;
  a.put_unwind_info = put_unwind_info;
  a.get_dyn_info_list_addr = get_dyn_info_list_addr;
  a.access_mem = access_mem;
  a.access_reg = access_reg;
  a.access_fpreg = access_fpreg;
  a.resume = resume;
  a.get_proc_name = get_proc_name;
  return a;
}

}  // namespace

std::vector<StackFrame> unwind_stack(MemoryCache& memory, Symbolizer& symbols, const Bytes& g_registers,
                                     std::size_t max_frames) {
  std::vector<StackFrame> frames;
  UnwindContext cx{&memory, &symbols, {}};
  if (g_registers.size() < kRegisters * sizeof(unw_word_t)) {
    return frames;
  }
  std::memcpy(cx.regs.data(), g_registers.data(), kRegisters * sizeof(unw_word_t));
  unw_accessors_t a = accessors();
  unw_addr_space_t as = unw_create_addr_space(&a, 0);
  if (as == nullptr) {
    return frames;
  }
  unw_cursor_t cursor;
  std::set<std::pair<unw_word_t, unw_word_t>> seen;  // (pc, sp): a corrupt stack may loop
  bool after_signal_frame = true;  // frame 0's pc is exact, as after a signal frame
  if (unw_init_remote(&cursor, as, &cx) == 0) {
    do {
      unw_word_t pc = 0;
      unw_word_t sp = 0;
      if (unw_get_reg(&cursor, UNW_REG_IP, &pc) != 0 || pc == 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0 ||
          !seen.emplace(pc, sp).second) {
        break;
      }
      const bool signal_frame = unw_is_signal_frame(&cursor) > 0;
      frames.push_back(StackFrame{pc, !after_signal_frame, signal_frame});
      after_signal_frame = signal_frame;
    } while (frames.size() < max_frames && unw_step(&cursor) > 0);
  }
  unw_destroy_addr_space(as);
  return frames;
}

}  // namespace tracer
