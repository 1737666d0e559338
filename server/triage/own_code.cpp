#include "server/triage/own_code.hpp"

#include <filesystem>
#include <string>

namespace server::triage {
namespace {

bool runtime_module(const std::string& file_name) {
  for (const char* prefix : {"libc.so", "libc-", "ld-linux", "libpthread", "libgcc_s", "libstdc++", "libc++",
                             "libunwind", "libsupc++"}) {
    if (file_name.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

bool system_header(const std::string& file) {
  for (const char* prefix : {"/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm"}) {
    if (file.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

// The opening bracket of the bracketed part that ends at close_at (`close`), or npos.
std::size_t open_of(const std::string& text, std::size_t close_at, char open, char close) {
  int depth = 0;
  for (std::size_t i = close_at + 1; i-- > 0;) {
    if (text[i] == close) {
      ++depth;
    } else if (text[i] == open && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

bool runtime_frame(const FrameReport& frame) {
  return runtime_module(std::filesystem::path(frame.where.module).filename().string()) || system_header(frame.where.file);
}

std::string short_function(const std::string& function) {
  std::string out = function;
  // The parameter list: the last ')' (then only qualifiers such as " const") and its '('.
  if (const auto close = out.rfind(')');
      close != std::string::npos && out.find_first_not_of(" constvolatile&", close + 1) == std::string::npos) {
    if (const auto open = open_of(out, close, '(', ')'); open != std::string::npos && open > 0) {
      out.erase(open);
    }
  }
  // Template arguments, the last first, while too long.
  const std::string elided = "<...>";
  std::size_t before = out.size();
  while (out.size() > 80 && before > 0) {
    const auto close = out.rfind('>', before - 1);
    if (close == std::string::npos) {
      break;
    }
    const auto open = open_of(out, close, '<', '>');
    if (open == std::string::npos) {
      break;
    }
    if (out.compare(open, elided.size(), elided) != 0) {
      out.replace(open, close - open + 1, elided);
    }
    before = open;
  }
  return out;
}

}  // namespace server::triage
