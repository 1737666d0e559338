// /proc readers: task lists, thread names, cores, whole files.
#include "tracer/linux/procfs.hpp"

#include <array>
#include <charconv>
#include <utility>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace tracer::procfs {

base::Result<Bytes> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return base::sys_error("open " + path);
  }
  Bytes out;
  std::uint8_t buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return base::sys_error("read " + path, err);
    }
    if (n == 0) {
      break;
    }
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

std::vector<Tid> task_ids(Pid pid) {
  std::vector<Tid> tids;
  const std::string path = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    return tids;
  }
  while (dirent* ent = ::readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(ent->d_name, &end, 10);
    if (end != ent->d_name && *end == '\0' && tid > 0) {
      tids.push_back(static_cast<Tid>(tid));
    }
  }
  ::closedir(dir);
  return tids;
}

std::string thread_name(Pid pid, Tid tid) {
  auto data = read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (!data) {
    return {};
  }
  std::string name(data->begin(), data->end());
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) {
    name.pop_back();
  }
  return name;
}

std::optional<TaskStat> parse_stat(const std::string& text) {
  // "pid (comm) S ppid ...": comm may contain ") ", so split at the last ')'.
  auto open = text.find('(');
  auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return std::nullopt;
  }
  std::istringstream in(text.substr(close + 1));
  TaskStat st;
  st.name = text.substr(open + 1, close - open - 1);
  std::string field;
  // Field 3 is the state, 4 the parent; field 39 the processor.
  for (int index = 3; in >> field; ++index) {
    if (index == 3) {
      st.state = field[0];
    } else if (index == 4) {
      st.parent = std::atoi(field.c_str());
    } else if (index == 39) {
      st.core = std::atoi(field.c_str());
      break;
    }
  }
  if (st.state == '?') {
    return std::nullopt;
  }
  return st;
}

std::optional<TaskStat> task_stat(Pid pid, Tid tid) {
  auto data = read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  if (!data) {
    return std::nullopt;
  }
  return parse_stat(std::string(data->begin(), data->end()));
}

bool descends_from(Pid pid, Pid ancestor) {
  for (int depth = 0; depth < 256 && pid > 1; ++depth) {
    auto st = task_stat(pid, pid);
    if (!st) {
      return false;
    }
    if (st->parent == ancestor) {
      return true;
    }
    pid = st->parent;
  }
  return false;
}

namespace {

// The number after `field` (e.g. "\nTgid:") in /proc/TID/status, in the given base.
template <class T>
std::optional<T> status_field(Tid tid, std::string_view field, int base) {
  auto text = read_file("/proc/" + std::to_string(tid) + "/status");
  if (!text) {
    return std::nullopt;
  }
  std::string_view view(reinterpret_cast<const char*>(text->data()), text->size());
  auto at = view.find(field);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  view.remove_prefix(at + field.size());
  while (!view.empty() && (view.front() == ' ' || view.front() == '\t')) {
    view.remove_prefix(1);
  }
  T value = 0;
  auto [ptr, ec] = std::from_chars(view.data(), view.data() + view.size(), value, base);
  if (ec != std::errc() || ptr == view.data()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<Pid> thread_group_of(Tid tid) { return status_field<Pid>(tid, "\nTgid:", 10); }

Pid tracer_pid(Tid tid) { return status_field<Pid>(tid, "\nTracerPid:", 10).value_or(0); }

int seccomp_mode(Tid tid) { return status_field<int>(tid, "\nSeccomp:", 10).value_or(0); }

std::optional<std::uint64_t> address_space_room(Pid pid) {
  struct rlimit limit {};
  if (::prlimit(pid, RLIMIT_AS, nullptr, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return std::nullopt;
  }
  const auto size_kb = status_field<std::uint64_t>(pid, "\nVmSize:", 10);
  if (!size_kb) {
    return std::nullopt;
  }
  const std::uint64_t used = *size_kb * 1024;
  return limit.rlim_cur > used ? limit.rlim_cur - used : 0;
}

SignalAction signal_action(Tid tid, int sig) {
  auto caught = status_field<std::uint64_t>(tid, "\nSigCgt:", 16);
  auto ignored = status_field<std::uint64_t>(tid, "\nSigIgn:", 16);
  if (!caught || !ignored || sig < 1 || sig > 64) {
    return SignalAction::Unknown;
  }
  const std::uint64_t bit = std::uint64_t{1} << (sig - 1);
  return (*caught & bit) != 0 ? SignalAction::Handler : (*ignored & bit) != 0 ? SignalAction::Ignore : SignalAction::Default;
}

std::vector<MappedObject> parse_maps(std::string_view maps) {
  std::vector<MappedObject> out;
  std::istringstream in{std::string(maps)};
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode [path]
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    const auto dash = range.find('-');
    if (!fields || dash == std::string::npos) {
      continue;
    }
    const Addr start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
    const Addr end = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16);
    std::getline(fields >> std::ws, path);
    out.push_back(MappedObject{start, end, path, std::strtoull(offset.c_str(), nullptr, 16)});
  }
  return out;
}

std::optional<MappedObject> find_mapping(std::string_view maps, Addr addr) {
  for (auto& m : parse_maps(maps)) {
    if (addr >= m.start && addr < m.end) {
      return m;
    }
  }
  return std::nullopt;
}

std::vector<MappedObject> mappings(Pid pid) {
  auto maps = read_file("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) {
    return {};
  }
  return parse_maps(std::string_view(reinterpret_cast<const char*>(maps->data()), maps->size()));
}

std::string executable(Pid pid) {
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return buf;
}

std::optional<arch::x86::Isa> file_isa(const std::string& path) {
  std::array<std::uint8_t, 20> header{};  // e_ident, e_type, e_machine
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  const ssize_t n = ::pread(fd, header.data(), header.size(), 0);
  ::close(fd);
  return n == static_cast<ssize_t>(header.size()) ? arch::x86::isa_of_elf_header(header) : std::nullopt;
}

arch::x86::Isa executable_isa(Pid pid) {
  return file_isa("/proc/" + std::to_string(pid) + "/exe").value_or(arch::x86::Isa::Amd64);
}

std::vector<std::string> command_line(Pid pid) {
  std::vector<std::string> out;
  auto bytes = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  if (!bytes) {
    return out;
  }
  std::string arg;
  for (const std::uint8_t c : *bytes) {
    if (c == 0) {
      out.push_back(std::exchange(arg, {}));
    } else {
      arg.push_back(static_cast<char>(c));
    }
  }
  if (!arg.empty()) {
    out.push_back(arg);
  }
  return out;
}

base::Result<MappedObject> mapping_at(Pid pid, Addr addr) {
  auto maps = read_file("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) {
    return std::move(maps).error();
  }
  auto m = find_mapping(std::string_view(reinterpret_cast<const char*>(maps->data()), maps->size()), addr);
  if (!m) {
    return base::make_error(base::Errc::invalid, "nothing mapped there");
  }
  return *m;
}

}  // namespace tracer::procfs
