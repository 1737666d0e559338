#include "tracer/valgrind/dbt_problem.hpp"

#include <filesystem>

#include "tracer/linux/resolve_program.hpp"

namespace tracer {

const char* dbt_recorder_file(arch::x86::Isa isa) {
  return isa == arch::x86::Isa::I386 ? "hsdbt-x86-linux" : "hsdbt-amd64-linux";
}

std::optional<std::string> dbt_problem(const std::string& valgrind_lib, arch::x86::Isa isa) {
  namespace fs = std::filesystem;
  if (valgrind_lib.empty()) {
    return "the dbt recorder is not built (needs Debian's valgrind package; rebuild Hindsight)";
  }
  std::error_code ec;
  const std::string amd64 = valgrind_lib + "/" + dbt_recorder_file(arch::x86::Isa::Amd64);
  if (!fs::exists(amd64, ec)) {
    return "the dbt recorder is not installed (no " + amd64 + "; install the hindsight-dbt package)";
  }
  if (isa == arch::x86::Isa::I386 && !fs::exists(valgrind_lib + "/" + dbt_recorder_file(isa), ec)) {
    return std::string("the dbt recorder for i386 programs is not built (needs gcc-multilib; rebuild Hindsight)");
  }
  // The recorder's folder links Valgrind's core files; the launcher comes from PATH.
  const char* core = isa == arch::x86::Isa::I386 ? "/vgpreload_core-x86-linux.so" : "/vgpreload_core-amd64-linux.so";
  if (!fs::exists(valgrind_lib + core, ec) || !resolve_program("valgrind")) {
    return std::string("Valgrind is not installed: the dbt recorder runs under it (apt-get install valgrind)");
  }
  return std::nullopt;
}

}  // namespace tracer
