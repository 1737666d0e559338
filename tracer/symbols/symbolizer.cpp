// libdw's view of a live process: modules from /proc/PID/maps, symbols, lines, inlines.
#include "tracer/symbols/symbolizer.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "tracer/symbols/plt_entries.hpp"

namespace tracer {
namespace {

char* g_debuginfo_path = nullptr;  // libdw's default search path
const Dwfl_Callbacks kProcCallbacks = {
    dwfl_linux_proc_find_elf,
    dwfl_standard_find_debuginfo,
    nullptr,
    &g_debuginfo_path,
};

std::string attr_string(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  const char* s = dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
  return s != nullptr ? s : "";
}

// An inlined call's function: its linkage name demangled (qualified, for C++), else its name.
std::string inlined_name(Dwarf_Die* scope) {
  std::string linkage = attr_string(scope, DW_AT_linkage_name);
  return linkage.empty() ? attr_string(scope, DW_AT_name) : demangle(linkage);
}

// A source path from libdw, which has put the line table's directory in front of the name.
// Relative to an absolute compilation directory: made absolute (a file triage can read).
// Relative to a relative one (Debian's glibc: "./nptl"): as the line table names it, as GDB
// shows it ("./nptl/pthread_kill.c", "../sysdeps/posix/raise.c"); where that was is unknown.
std::string absolute_source(const char* file, const char* comp_dir) {
  std::filesystem::path path(file);
  if (path.is_absolute()) {
    return path.lexically_normal().string();
  }
  if (comp_dir != nullptr && std::filesystem::path(comp_dir).is_absolute()) {
    return (std::filesystem::path(comp_dir) / path).lexically_normal().string();
  }
  return path.string();
}

// Where an inlined call was made: DW_AT_call_file / DW_AT_call_line. Leaves file and line as
// they are when the debug info does not say.
void call_site(Dwarf_Die* cu, Dwarf_Die* scope, std::string& file, int& line) {
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  Dwarf_Word call_line = 0;
  Dwarf_Files* files = nullptr;
  std::size_t count = 0;
  if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &call_line) != 0) {
    return;
  }
  line = static_cast<int>(call_line);
  if (dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &index) == 0 &&
      dwarf_getsrcfiles(cu, &files, &count) == 0 && index < count) {
    if (const char* name = dwarf_filesrc(files, index, nullptr, nullptr); name != nullptr) {
      Dwarf_Attribute comp_dir;
      file = absolute_source(name, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &comp_dir)));
    }
  }
}

}  // namespace

namespace {

// __cxa_demangle's reading of a mangled name, "" when it has none.
std::string cxa_demangle(const std::string& mangled) {
  int status = 0;
  char* plain = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (plain == nullptr) {
    return {};
  }
  std::string out = plain;
  std::free(plain);
  return out;
}

}  // namespace

std::string demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) {
    return symbol;
  }
  std::string plain = cxa_demangle(symbol);
  return plain.empty() ? symbol : plain;
}

std::string demangle_type(const std::string& mangled) { return mangled.empty() ? std::string() : cxa_demangle(mangled); }

base::Result<std::unique_ptr<Symbolizer>> Symbolizer::for_process(Pid pid) {
  Dwfl* dwfl = dwfl_begin(&kProcCallbacks);
  if (dwfl == nullptr) {
    return base::make_error(base::Errc::internal, std::string("libdw: ") + dwfl_errmsg(-1));
  }
  dwfl_report_begin(dwfl);
  const int err = dwfl_linux_proc_report(dwfl, pid);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (err != 0) {
    dwfl_end(dwfl);
    return base::sys_error("reading the modules of process " + std::to_string(pid), err > 0 ? err : ESRCH);
  }
  return std::unique_ptr<Symbolizer>(new Symbolizer(dwfl));
}

base::Result<std::unique_ptr<Symbolizer>> Symbolizer::for_maps(const std::string& maps) {
  FILE* text = ::fmemopen(const_cast<char*>(maps.data()), maps.size(), "r");
  if (text == nullptr) {
    return base::sys_error("reading a memory map", errno);
  }
  Dwfl* dwfl = dwfl_begin(&kProcCallbacks);
  if (dwfl == nullptr) {
    std::fclose(text);
    return base::make_error(base::Errc::internal, std::string("libdw: ") + dwfl_errmsg(-1));
  }
  dwfl_report_begin(dwfl);
  const int err = dwfl_linux_proc_maps_report(dwfl, text);
  dwfl_report_end(dwfl, nullptr, nullptr);
  std::fclose(text);
  if (err != 0) {
    dwfl_end(dwfl);
    return base::make_error(base::Errc::invalid, "the modules of a memory map: " +
                                                     std::string(err > 0 ? std::strerror(err) : dwfl_errmsg(-1)));
  }
  return std::unique_ptr<Symbolizer>(new Symbolizer(dwfl));
}

base::Result<std::unique_ptr<Symbolizer>> Symbolizer::for_file(const std::string& path, Addr base) {
  Dwfl* dwfl = dwfl_begin(&kProcCallbacks);
  if (dwfl == nullptr) {
    return base::make_error(base::Errc::internal, std::string("libdw: ") + dwfl_errmsg(-1));
  }
  dwfl_report_begin(dwfl);
  Dwfl_Module* mod = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, base, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (mod == nullptr) {
    const std::string why = dwfl_errmsg(-1);
    dwfl_end(dwfl);
    return base::make_error(base::Errc::invalid, path + ": " + why);
  }
  return std::unique_ptr<Symbolizer>(new Symbolizer(dwfl));
}

Symbolizer::~Symbolizer() { dwfl_end(dwfl_); }

const SourceLocation& Symbolizer::locate(Addr pc) {
  auto it = cache_.find(pc);
  if (it == cache_.end()) {
    it = cache_.emplace(pc, lookup(pc)).first;
  }
  return it->second;
}

SourceLocation Symbolizer::lookup(Addr pc) {
  SourceLocation loc;
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, pc);
  if (mod == nullptr) {
    return loc;
  }
  const char* main_file = nullptr;
  const char* name = dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file, nullptr);
  loc.module = main_file != nullptr ? main_file : (name != nullptr ? name : "");
  Dwarf_Addr module_start = 0;
  dwfl_module_info(mod, nullptr, &module_start, nullptr, nullptr, nullptr, nullptr, nullptr);
  loc.module_offset = pc - module_start;
  GElf_Off offset = 0;
  GElf_Sym sym;
  if (const char* symbol = dwfl_module_addrinfo(mod, pc, &offset, &sym, nullptr, nullptr, nullptr); symbol) {
    loc.function = demangle(symbol);
    loc.function_start = pc - offset;
  } else if (auto plt = plt_entry(mod, pc)) {
    loc.function = std::move(plt->name);
    loc.function_start = plt->start;
  } else {
    const auto& functions = functions_of(mod);
    auto after = std::upper_bound(functions.begin(), functions.end(), pc,
                                  [](Addr at, const auto& f) { return at < f.first; });
    if (after != functions.begin()) {
      loc.nearest_symbol = demangle(std::prev(after)->second);
      loc.nearest_offset = pc - std::prev(after)->first;
    }
  }
  if (Dwfl_Line* line = dwfl_module_getsrc(mod, pc); line != nullptr) {
    int lineno = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr); file) {
      loc.file = absolute_source(file, dwfl_line_comp_dir(line));
      loc.line = lineno;
    }
  }
  return loc;
}

const std::vector<std::pair<Addr, std::string>>& Symbolizer::functions_of(Dwfl_Module* mod) {
  auto [it, fresh] = functions_.try_emplace(mod);
  if (fresh) {
    const int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
      const int type = GELF_ST_TYPE(sym.st_info);
      if (name != nullptr && *name != 0 && sym.st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC)) {
        it->second.emplace_back(addr, name);
      }
    }
    std::sort(it->second.begin(), it->second.end());
  }
  return it->second;
}

std::vector<SourceFrame> Symbolizer::frames(Addr pc, bool return_address) {
  const Addr at = return_address && pc > 0 ? pc - 1 : pc;
  SourceFrame outer{pc, locate(at), false};
  std::vector<SourceFrame> out;
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, at);
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = mod != nullptr ? dwfl_module_addrdie(mod, at, &bias) : nullptr;
  Dwarf_Die* scopes = nullptr;
  const int n = cu != nullptr ? dwarf_getscopes(cu, at - bias, &scopes) : 0;
  for (int i = 0; i < n; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram) {
      break;
    }
    if (tag != DW_TAG_inlined_subroutine) {
      continue;
    }
    SourceFrame inlined{pc, outer.where, true};
    inlined.where.function = inlined_name(&scopes[i]);
    out.push_back(inlined);
    // The frame outside this one is at the call the compiler inlined.
    call_site(cu, &scopes[i], outer.where.file, outer.where.line);
  }
  std::free(scopes);
  out.push_back(outer);
  return out;
}

namespace {

// A symbol table's name for `symbol`: the name itself, or its default version ("dlopen@@GLIBC_2.34":
// a debug file's .symtab spells versions into names, where .dynsym keeps them apart).
bool names_symbol(std::string_view name, std::string_view symbol) {
  return name.starts_with(symbol) && (name.size() == symbol.size() || name.substr(symbol.size()).starts_with("@@"));
}

}  // namespace

std::optional<Addr> Symbolizer::find_symbol(const std::string& module_prefix, const std::string& symbol) {
  struct Search {
    const std::string& prefix;
    const std::string& symbol;
    std::optional<Addr> found;
  } search{module_prefix, symbol, std::nullopt};
  auto visit = [](Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, void* arg) -> int {
    auto& s = *static_cast<Search*>(arg);
    if (name == nullptr || std::filesystem::path(name).filename().string().rfind(s.prefix, 0) != 0) {
      return DWARF_CB_OK;
    }
    const int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      const char* sym_name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
      const int type = GELF_ST_TYPE(sym.st_info);
      if (sym_name != nullptr && names_symbol(sym_name, s.symbol) && sym.st_shndx != SHN_UNDEF &&
          (type == STT_FUNC || type == STT_OBJECT)) {
        s.found = addr;
        return DWARF_CB_ABORT;
      }
    }
    return DWARF_CB_OK;
  };
  dwfl_getmodules(dwfl_, visit, &search, 0);
  return search.found;
}

std::optional<UnwindTable> Symbolizer::unwind_table(Addr pc) {
  Dwfl_Module* mod = dwfl_addrmodule(dwfl_, pc);
  if (mod == nullptr) {
    return std::nullopt;
  }
  UnwindTable table;
  dwfl_module_info(mod, nullptr, &table.module_start, &table.module_end, nullptr, nullptr, nullptr, nullptr);
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  std::size_t count = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &count) != 0) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_GNU_EH_FRAME) {
      table.eh_frame_hdr = phdr.p_vaddr + bias;
      return table;
    }
  }
  return std::nullopt;
}

}  // namespace tracer
