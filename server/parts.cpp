#include "server/parts.hpp"

#include <cstdlib>
#include <filesystem>

#include "server/install_paths.h"

namespace server {
namespace {

// installed: a path under the install prefix; the same path relative to the binary's folder,
// as installed/BINDIR lie to each other.
std::string beside(const std::filesystem::path& exe, const char* installed) {
  const auto relative = std::filesystem::path(installed).lexically_relative(HINDSIGHT_INSTALL_BINDIR);
  return (exe.parent_path() / relative).lexically_normal().string();
}

}  // namespace

Parts parts_for(const std::string& exe) {
  Parts parts;
  std::error_code ec;
  const bool in_build_tree = exe == HINDSIGHT_BUILD_EXE || std::filesystem::equivalent(exe, HINDSIGHT_BUILD_EXE, ec);
  if (in_build_tree) {
    parts.dbt_lib = HINDSIGHT_BUILD_DBT_LIB;
    parts.agent = HINDSIGHT_BUILD_AGENT;
    parts.recorder = HINDSIGHT_BUILD_RECORDER;
  } else {
    parts.dbt_lib = HINDSIGHT_DBT_BUILT ? beside(exe, HINDSIGHT_INSTALL_DBT_LIB) : "";
    parts.agent = beside(exe, HINDSIGHT_INSTALL_AGENT);
    parts.recorder = beside(exe, HINDSIGHT_INSTALL_RECORDER);
  }
  if (const char* dbt_lib = std::getenv("HINDSIGHT_DBT_LIB"); dbt_lib != nullptr) {
    parts.dbt_lib = dbt_lib;
  }
  if (const char* recorder = std::getenv("HINDSIGHT_RECORDER_LIB"); recorder != nullptr) {
    parts.recorder = recorder;
  }
  return parts;
}

Parts this_binary_parts() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return parts_for(ec ? std::string() : exe.string());
}

}  // namespace server
