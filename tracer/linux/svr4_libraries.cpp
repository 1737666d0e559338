// Walks r_debug -> link_map like the dynamic linker's debugger interface intends.
#include "tracer/linux/svr4_libraries.hpp"

#include <elf.h>

#include <cstring>
#include <set>
#include <string>

namespace tracer::svr4 {
namespace {

std::uint64_t load_u64(const Bytes& data, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, data.data() + offset, sizeof v);
  return v;
}

std::uint32_t load_u32(const Bytes& data, std::size_t offset) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + offset, sizeof v);
  return v;
}

constexpr std::size_t kMaxLibraries = 10000;
constexpr std::size_t kMaxNamespaces = 64;
constexpr std::size_t kMaxName = 4096;

std::string read_c_string(const MemoryReader& read, Addr addr) {
  if (addr == 0) {
    return {};
  }
  auto data = read(addr, kMaxName);
  if (!data) {
    return {};
  }
  std::string s(data->begin(), data->end());
  auto nul = s.find('\0');
  if (nul != std::string::npos) {
    s.resize(nul);
  }
  return s;
}

// The r_debug address: DT_DEBUG of the main program's dynamic section, 0 before the loader ran.
base::Result<Addr> find_r_debug(const MemoryReader& read, const Bytes& auxv) {
  auto program = read_main_program(read, auxv);
  if (!program) {
    return std::move(program).error();
  }
  if (!*program) {
    return Addr{0};
  }
  const ProgramHeaders& ph = (*program)->headers;
  if (!ph.dynamic_vaddr) {
    return Addr{0};  // static program: no loader, no list
  }
  const Addr bias = (*program)->bias;
  const std::size_t size = ph.dynamic_size != 0 ? ph.dynamic_size : 0x1000;
  auto dynamic = read(bias + *ph.dynamic_vaddr, size);
  if (!dynamic) {
    return std::move(dynamic).error();
  }
  return find_dt_debug(*dynamic);
}

}  // namespace

base::Result<std::optional<MainProgram>> read_main_program(const MemoryReader& read, const Bytes& auxv) {
  AuxvInfo info = parse_auxv(auxv);
  if (info.phdr == 0 || info.phnum == 0) {
    return std::optional<MainProgram>{};
  }
  const std::size_t phent = info.phent != 0 ? info.phent : sizeof(Elf64_Phdr);
  auto phdrs = read(info.phdr, phent * info.phnum);
  if (!phdrs) {
    return std::move(phdrs).error();
  }
  MainProgram program{parse_program_headers(*phdrs, info.phnum, phent), 0};
  // Without PT_PHDR assume an unrelocated (non-PIE) executable.
  program.bias = program.headers.phdr_vaddr ? info.phdr - *program.headers.phdr_vaddr : 0;
  return std::optional<MainProgram>(program);
}

AuxvInfo parse_auxv(const Bytes& auxv) {
  AuxvInfo info;
  for (std::size_t off = 0; off + 16 <= auxv.size(); off += 16) {
    std::uint64_t type = load_u64(auxv, off);
    std::uint64_t value = load_u64(auxv, off + 8);
    if (type == AT_NULL) {
      break;
    }
    if (type == AT_PHDR) {
      info.phdr = value;
    } else if (type == AT_PHNUM) {
      info.phnum = value;
    } else if (type == AT_PHENT) {
      info.phent = value;
    }
  }
  return info;
}

ProgramHeaders parse_program_headers(const Bytes& phdrs, std::size_t phnum, std::size_t phent) {
  ProgramHeaders out;
  if (phent < sizeof(Elf64_Phdr)) {
    return out;
  }
  for (std::size_t i = 0; i < phnum && (i + 1) * phent <= phdrs.size(); ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, phdrs.data() + i * phent, sizeof ph);
    if (ph.p_type == PT_PHDR) {
      out.phdr_vaddr = ph.p_vaddr;
    } else if (ph.p_type == PT_DYNAMIC) {
      out.dynamic_vaddr = ph.p_vaddr;
      out.dynamic_size = ph.p_memsz;
    } else if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0 && ph.p_vaddr + ph.p_memsz > out.code_end) {
      out.code_end = ph.p_vaddr + ph.p_memsz;
    }
  }
  return out;
}

Addr find_dt_debug(const Bytes& dynamic) {
  for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= dynamic.size(); off += sizeof(Elf64_Dyn)) {
    std::uint64_t tag = load_u64(dynamic, off);
    if (tag == DT_NULL) {
      break;
    }
    if (tag == DT_DEBUG) {
      return load_u64(dynamic, off + 8);
    }
  }
  return 0;
}

std::optional<RDebug> parse_r_debug(const Bytes& data) {
  if (data.size() < 16) {
    return std::nullopt;
  }
  RDebug r;
  r.version = static_cast<int>(load_u32(data, 0));
  r.map = load_u64(data, 8);
  if (r.version >= 2 && data.size() >= kRDebugSize) {
    r.next = load_u64(data, 40);
  }
  return r;
}

std::optional<LinkMap> parse_link_map(const Bytes& data) {
  if (data.size() < kLinkMapSize) {
    return std::nullopt;
  }
  return LinkMap{load_u64(data, 0), load_u64(data, 8), load_u64(data, 16), load_u64(data, 24),
                 load_u64(data, 32)};
}

base::Result<LibraryList> read_libraries(const MemoryReader& read, const Bytes& auxv) {
  LibraryList list;
  auto r_debug_addr = find_r_debug(read, auxv);
  if (!r_debug_addr) {
    return std::move(r_debug_addr).error();
  }
  std::set<Addr> seen;
  Addr ns = *r_debug_addr;
  for (std::size_t n = 0; ns != 0 && n < kMaxNamespaces; ++n) {
    auto rd_bytes = read(ns, kRDebugSize);
    if (!rd_bytes) {
      break;
    }
    auto rd = parse_r_debug(*rd_bytes);
    if (!rd || rd->version == 0) {
      break;  // the loader has not filled it in yet
    }
    Addr prev = 0;
    for (Addr lm = rd->map; lm != 0 && seen.size() < kMaxLibraries; ) {
      if (!seen.insert(lm).second) {
        break;  // a cycle: the list is being updated or corrupt
      }
      auto lm_bytes = read(lm, kLinkMapSize);
      if (!lm_bytes) {
        break;
      }
      auto entry = parse_link_map(*lm_bytes);
      if (!entry || entry->l_prev != prev) {
        break;  // inconsistent, as gdbserver: stop here
      }
      if (n == 0 && prev == 0) {
        list.main_lm = lm;
      } else {
        std::string name = read_c_string(read, entry->l_name);
        if (!name.empty()) {
          list.libraries.push_back(LoadedLibrary{name, lm, entry->l_addr, entry->l_ld, ns});
        }
      }
      prev = lm;
      lm = entry->l_next;
    }
    ns = rd->next;
  }
  return list;
}

}  // namespace tracer::svr4
