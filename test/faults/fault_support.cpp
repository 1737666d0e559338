#include "test/faults/fault_support.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace std::chrono_literals;

namespace faults {

pid_t started_pid(e2e::Child& server) {
  REQUIRE(server.wait_for_text("created; pid = ", e2e::Clock::now() + 5s));
  const std::string& err = server.err();
  return static_cast<pid_t>(std::stol(err.substr(err.find("created; pid = ") + 15)));
}

int open_fds(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

std::optional<Code> program_code(pid_t pid) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (!ec && std::getline(maps, line)) {
    std::istringstream is(line);
    std::string range, perms, offset, dev, inode, path;
    is >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x' || path != exe.string()) {
      continue;
    }
    const auto dash = range.find('-');
    Code code;
    code.start = std::stoul(range.substr(0, dash), nullptr, 16);
    const unsigned long end = std::stoul(range.substr(dash + 1), nullptr, 16);
    auto bytes = e2e::read_proc_mem(pid, code.start, end - code.start);
    if (!bytes) {
      return std::nullopt;
    }
    code.bytes = std::move(*bytes);
    return code;
  }
  return std::nullopt;
}

bool sanitized(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libasan") != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 || e2e::proc_state(pid) == 'Z'; }

}  // namespace faults
