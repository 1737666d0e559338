// Tail-call frames: a function that ended with a jump to another (`return f(x)` compiled to
// `jmp f`) leaves no return address, so an unwinder goes from the callee straight to whoever
// called the function that jumped. DWARF call sites (DW_TAG_call_site, GCC's DW_TAG_GNU_call_site)
// name each call's target and whether it is a tail call; from the caller's call to the
// callee's function there is then one way through tail calls, or none can be told. As GDB's
// tail-call frames (dwarf2/frame-tailcall.c), read here for facts only.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <cstdlib>
#include <functional>
#include <set>
#include <vector>

#include "tracer/symbols/symbolizer.hpp"

namespace tracer {
namespace {

constexpr int kLongestChain = 4;  // tail calls in a row followed, at most

bool is_call_site(Dwarf_Die* die) {
  const int tag = dwarf_tag(die);
  return tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site;
}

bool is_tail_call(Dwarf_Die* site) {
  return dwarf_hasattr(site, DW_AT_call_tail_call) != 0 || dwarf_hasattr(site, DW_AT_GNU_tail_call) != 0;
}

// Where the call returns to (a tail call: the address after its jump), unbiased.
std::optional<Dwarf_Addr> return_pc(Dwarf_Die* site) {
  Dwarf_Attribute attr;
  Dwarf_Addr addr = 0;
  if (dwarf_formaddr(dwarf_attr(site, DW_AT_call_return_pc, &attr), &addr) == 0 ||
      dwarf_formaddr(dwarf_attr(site, DW_AT_low_pc, &attr), &addr) == 0) {
    return addr;
  }
  return std::nullopt;
}

// Every call site inside die (lexical blocks and inlined calls included).
void each_call_site(Dwarf_Die* die, const std::function<void(Dwarf_Die*)>& visit) {
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) {
    return;
  }
  do {
    if (is_call_site(&child)) {
      visit(&child);
    } else if (dwarf_haschildren(&child) != 0) {
      each_call_site(&child, visit);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The module's function symbol of that name, relocated.
std::optional<Addr> function_symbol(Dwfl_Module* mod, const char* name) {
  const int count = dwfl_module_getsymtab(mod);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    const char* sym_name = dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
    if (sym_name != nullptr && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
        std::string_view(sym_name) == name) {
      return addr;
    }
  }
  return std::nullopt;
}

// The entry of the function a call site calls (its definition here, or its symbol by name).
std::optional<Addr> call_target(Dwfl_Module* mod, Dwarf_Addr bias, Dwarf_Die* site) {
  Dwarf_Attribute attr;
  Dwarf_Die origin;
  if (dwarf_formref_die(dwarf_attr(site, DW_AT_call_origin, &attr), &origin) == nullptr &&
      dwarf_formref_die(dwarf_attr(site, DW_AT_abstract_origin, &attr), &origin) == nullptr) {
    return std::nullopt;  // an indirect call: its target is not in the debug info
  }
  Dwarf_Addr low = 0;
  if (dwarf_lowpc(&origin, &low) == 0) {
    return low + bias;
  }
  Dwarf_Attribute name_attr;
  const char* name = dwarf_formstring(dwarf_attr_integrate(&origin, DW_AT_linkage_name, &name_attr));
  if (name == nullptr) {
    name = dwarf_formstring(dwarf_attr_integrate(&origin, DW_AT_name, &name_attr));
  }
  return name != nullptr ? function_symbol(mod, name) : std::nullopt;
}

// The function (DW_TAG_subprogram) holding pc, with its module and bias.
struct Function {
  Dwfl_Module* mod = nullptr;
  Dwarf_Addr bias = 0;
  Dwarf_Die die{};
};

// The subprogram among die's children (namespaces entered) whose code holds pc (unbiased).
// Not dwarf_getscopes: inside an inlined call it continues with the inlined function's own
// definition, not the function it was inlined into.
bool find_subprogram(Dwarf_Die* die, Dwarf_Addr pc, Dwarf_Die* out) {
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) {
    return false;
  }
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram && dwarf_haspc(&child, pc) > 0) {
      *out = child;
      return true;
    }
    if (tag == DW_TAG_namespace && find_subprogram(&child, pc, out)) {
      return true;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

std::optional<Function> function_at(Dwfl* dwfl, Addr pc) {
  Function f;
  f.mod = dwfl_addrmodule(dwfl, pc);
  Dwarf_Die* cu = f.mod != nullptr ? dwfl_module_addrdie(f.mod, pc, &f.bias) : nullptr;
  if (cu == nullptr || !find_subprogram(cu, pc - f.bias, &f.die)) {
    return std::nullopt;
  }
  return f;
}

// Each way from the function at entry to callee through tail calls: the return pcs of the
// tail calls taken, outermost first.
void tail_paths(Dwfl* dwfl, Addr entry, Addr callee, std::vector<Addr>& path, std::set<Addr>& on_path,
                std::vector<std::vector<Addr>>& found) {
  auto f = function_at(dwfl, entry);
  if (!f || found.size() > 1 || static_cast<int>(path.size()) >= kLongestChain) {
    return;
  }
  each_call_site(&f->die, [&](Dwarf_Die* site) {
    const auto pc = return_pc(site);
    const auto target = is_tail_call(site) && pc ? call_target(f->mod, f->bias, site) : std::nullopt;
    if (!target || on_path.count(*target) != 0) {
      return;
    }
    path.push_back(*pc + f->bias);
    if (*target == callee) {
      found.push_back(path);
    } else {
      on_path.insert(*target);
      tail_paths(dwfl, *target, callee, path, on_path, found);
      on_path.erase(*target);
    }
    path.pop_back();
  });
}

}  // namespace

std::vector<SourceFrame> Symbolizer::tail_calls(Addr callee_entry, Addr caller_return_address) {
  if (callee_entry == 0 || caller_return_address == 0) {
    return {};
  }
  // What the caller's call called.
  auto caller = function_at(dwfl_, caller_return_address - 1);
  if (!caller) {
    return {};
  }
  std::optional<Addr> called;
  each_call_site(&caller->die, [&](Dwarf_Die* site) {
    if (const auto pc = return_pc(site); pc && *pc + caller->bias == caller_return_address) {
      called = call_target(caller->mod, caller->bias, site);
    }
  });
  if (!called || *called == callee_entry) {
    return {};  // straight there, or not known
  }
  std::vector<Addr> path;
  std::set<Addr> on_path{*called};
  std::vector<std::vector<Addr>> found;
  tail_paths(dwfl_, *called, callee_entry, path, on_path, found);
  if (found.size() != 1) {
    return {};  // no way, or more than one: which was taken cannot be told
  }
  std::vector<SourceFrame> out;
  for (auto it = found.front().rbegin(); it != found.front().rend(); ++it) {
    for (auto frame : frames(*it, /*return_address=*/true)) {
      frame.tail_call = !frame.inlined;
      out.push_back(std::move(frame));
    }
  }
  return out;
}

}  // namespace tracer
