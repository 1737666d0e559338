#include "tracer/inprocess/recorder/code_pages.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "tracer/inprocess/recorder/proc_self.hpp"

namespace recorder {
namespace {

// "lo-hi perms ..." of one /proc/self/maps line; false if it does not parse.
bool parse_mapping(const char* line, std::size_t length, std::uint64_t& lo, std::uint64_t& hi, bool& r, bool& x,
                   bool& w, bool& shared) {
  std::size_t i = 0;
  auto hex = [&](std::uint64_t& out, char end) {
    out = 0;
    std::size_t digits = 0;
    for (; i < length && line[i] != end; ++i, ++digits) {
      const char c = line[i];
      const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (v < 0) {
        return false;
      }
      out = out << 4 | static_cast<std::uint64_t>(v);
    }
    ++i;
    return digits != 0 && i <= length;
  };
  if (!hex(lo, '-') || !hex(hi, ' ') || i + 4 > length) {
    return false;
  }
  r = line[i] == 'r';
  w = line[i + 1] == 'w';
  x = line[i + 2] == 'x';
  shared = line[i + 3] == 's';
  return true;
}

// Whether a /proc/self/maps line names [vvar], [vvar_vclock], [vdso] or [vsyscall] (no libc
// here: the search by hand).
bool names_special_mapping(const char* line, std::size_t length) {
  for (std::size_t i = 0; i + 3 <= length; ++i) {
    if (line[i] == ' ' && line[i + 1] == '[' && line[i + 2] == 'v') {
      return true;
    }
  }
  return false;
}

std::uint64_t page_end(std::uint64_t lo, std::uint64_t length) {
  const std::uint64_t hi = lo + length;
  return hi < lo ? ~std::uint64_t{0} : (hi + 4095) & ~std::uint64_t{4095};
}

}  // namespace

const CodePages::Range* CodePages::find(std::uint64_t pc) const {
  for (std::size_t i = 0; i < count_; ++i) {
    if (pc >= ranges_[i].lo && pc < ranges_[i].hi) {
      return &ranges_[i];
    }
  }
  return nullptr;
}

void CodePages::read_mappings() {
  count_ = 0;
  readable_count_ = 0;
  for_each_line(
      "/proc/self/maps",
      [](void* self, const char* line, std::size_t length) {
        auto& pages = *static_cast<CodePages*>(self);
        std::uint64_t lo = 0, hi = 0;
        bool r = false, x = false, w = false, shared = false;
        if (!parse_mapping(line, length, lo, hi, r, x, w, shared)) {
          return;
        }
        if (x && !w && pages.count_ < kMaxRanges) {
          pages.ranges_[pages.count_++] = Range{lo, hi, shared};
        }
        // (Data the recorder may read: private, and none of the kernel's special pages, whose
        // reads may fault even where they say r: [vvar]'s clock pages absent on this machine
        // raise SIGBUS. A shared mapping may be truncated under it.)
        if (r && !shared && !names_special_mapping(line, length) && pages.readable_count_ < kMaxRanges) {
          pages.readable_[pages.readable_count_++] = Range{lo, hi, shared};
        }
      },
      this);
}

bool CodePages::readable(std::uint64_t at, std::size_t bytes) {
  auto in = [&] {
    for (std::size_t i = 0; i < readable_count_; ++i) {
      if (at >= readable_[i].lo && at + bytes <= readable_[i].hi) {
        return true;
      }
    }
    return false;
  };
  if (in()) {
    return true;
  }
  read_mappings();
  return in();
}

std::uint64_t CodePages::readonly_end(std::uint64_t pc, bool* shared) {
  const Range* r = find(pc);
  if (r == nullptr) {
    read_mappings();
    r = find(pc);
  }
  if (shared != nullptr) {
    *shared = r != nullptr && r->shared;
  }
  return r != nullptr ? r->hi : 0;
}

void CodePages::note_translated(std::uint64_t pc) {
  const Range* r = find(pc);
  if (r == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < translated_count_; ++i) {
    if (translated_[i].lo == r->lo && translated_[i].hi == r->hi) {  // (shared or not, as found)
      return;
    }
  }
  if (translated_count_ < kMaxRanges) {
    translated_[translated_count_++] = *r;
  }
}

bool CodePages::touches_translated(std::uint64_t lo, std::uint64_t hi) const {
  for (std::size_t i = 0; i < translated_count_; ++i) {
    if (lo < translated_[i].hi && translated_[i].lo < hi) {
      return true;
    }
  }
  return false;
}

ChangedRanges changed_ranges(std::uint64_t number, const std::uint64_t args[6]) {
  ChangedRanges out;
  auto add = [&](std::uint64_t lo, std::uint64_t length) {
    out.lo[out.count] = lo & ~std::uint64_t{4095};
    out.hi[out.count] = page_end(lo, length);
    ++out.count;
  };
  switch (number) {
    case SYS_mmap:
      if ((args[3] & MAP_FIXED) != 0) {
        add(args[0], args[1]);
      }
      break;
    case SYS_mprotect:
    case SYS_munmap:
    case SYS_pkey_mprotect: add(args[0], args[1]); break;
    case SYS_mremap:
      add(args[0], args[1]);
      if ((args[3] & MREMAP_FIXED) != 0) {
        add(args[4], args[2]);
      }
      break;
    default: break;
  }
  return out;
}

}  // namespace recorder
