#include "tracer/linux/osdata.hpp"

#include <arpa/inet.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tracer/linux/procfs.hpp"

namespace tracer::osdata {
namespace {

// A number in the given base; 0 when the text is not one (a /proc format we do not know).
unsigned long number(const std::string& text, int base = 10) {
  unsigned long value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value, base);
  return value;
}


std::string read_text(const std::string& path) {
  auto bytes = procfs::read_file(path);
  return bytes ? std::string(bytes->begin(), bytes->end()) : std::string();
}

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\n");
  const auto last = text.find_last_not_of(" \t\n");
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

bool is_number(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Numeric entries of a /proc directory, in numeric order.
std::vector<long> numeric_entries(const std::string& dir) {
  std::vector<long> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_number(name)) {
      out.push_back(static_cast<long>(number(name)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string proc(long pid) { return "/proc/" + std::to_string(pid); }

std::string comm(long pid) { return trim(read_text(proc(pid) + "/comm")); }

// The command line, arguments separated by spaces; "[comm]" for a kernel thread.
std::string command_line(long pid) {
  std::string text = read_text(proc(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  text = trim(text);
  return text.empty() ? "[" + comm(pid) + "]" : text;
}

std::string user_name(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return pw != nullptr ? pw->pw_name : std::to_string(uid);
}

std::string group_name(gid_t gid) {
  const group* gr = ::getgrgid(gid);
  return gr != nullptr ? gr->gr_name : std::to_string(gid);
}

std::string owner(long pid) {
  struct stat st {};
  return ::stat(proc(pid).c_str(), &st) == 0 ? user_name(st.st_uid) : std::string();
}

// The process group: field 5 of /proc/PID/stat, after the parenthesised comm.
long process_group(long pid) {
  const std::string stat = read_text(proc(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) {
    return -1;
  }
  std::istringstream fields(stat.substr(close + 1));
  std::string state;
  long ppid = 0;
  long pgrp = -1;
  fields >> state >> ppid >> pgrp;
  return pgrp;
}

std::string join(const std::set<int>& values) {
  std::string out;
  for (int v : values) {
    out += (out.empty() ? "" : ",") + std::to_string(v);
  }
  return out;
}

std::string ipc_time(const std::string& seconds) {
  const auto t = static_cast<std::time_t>(number(seconds));
  if (t == 0) {
    return "";
  }
  char buf[64];
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string uid_column(const std::string& value) { return user_name(static_cast<uid_t>(number(value))); }
std::string gid_column(const std::string& value) { return group_name(static_cast<gid_t>(number(value))); }
std::string pid_command(const std::string& value) {
  return is_number(value) ? comm(static_cast<long>(number(value))) : "";
}

std::vector<OsRow> sysvipc(const std::string& file,
                           const std::vector<std::pair<std::string, std::string (*)(const std::string&)>>& columns,
                           const std::vector<std::string>& names) {
  std::vector<OsRow> rows;
  for (const auto& line : parse_table(read_text("/proc/sysvipc/" + file))) {
    std::map<std::string, std::string> field(line.begin(), line.end());
    OsRow row;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& value = field[columns[i].first];
      row.emplace_back(names[i], columns[i].second != nullptr ? columns[i].second(value) : value);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

const char* tcp_state(int st) {
  static const char* const kStates[] = {"",          "ESTABLISHED", "SYN_SENT", "SYN_RECV",   "FIN_WAIT1", "FIN_WAIT2",
                                        "TIME_WAIT", "CLOSE",       "CLOSE_WAIT", "LAST_ACK", "LISTEN",    "CLOSING"};
  return st > 0 && st < 12 ? kStates[st] : "UNKNOWN";
}

void read_sockets(const std::string& file, const char* family, const char* protocol, std::vector<OsRow>& rows) {
  std::istringstream in(read_text("/proc/net/" + file));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid)) {
      continue;
    }
    const auto lcolon = local.find(':');
    const auto rcolon = remote.find(':');
    if (lcolon == std::string::npos || rcolon == std::string::npos) {
      continue;
    }
    rows.push_back({{"local address", socket_address(local.substr(0, lcolon))},
                    {"local port", std::to_string(number(local.substr(lcolon + 1), 16))},
                    {"remote address", socket_address(remote.substr(0, rcolon))},
                    {"remote port", std::to_string(number(remote.substr(rcolon + 1), 16))},
                    {"state", tcp_state(static_cast<int>(number(state, 16)))},
                    {"user", uid_column(uid)},
                    {"family", family},
                    {"protocol", protocol}});
  }
}

}  // namespace

std::vector<std::vector<std::pair<std::string, std::string>>> parse_table(const std::string& text) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) {
    return out;
  }
  std::vector<std::string> header;
  std::istringstream names(line);
  for (std::string name; names >> name;) {
    header.push_back(name);
  }
  while (std::getline(in, line)) {
    std::istringstream values(line);
    std::vector<std::pair<std::string, std::string>> row;
    std::string value;
    for (std::size_t i = 0; i < header.size() && values >> value; ++i) {
      row.emplace_back(header[i], value);
    }
    if (!row.empty()) {
      out.push_back(std::move(row));
    }
  }
  return out;
}

std::string socket_address(const std::string& hex) {
  // The kernel prints each 32-bit word of the address in host (little-endian) order.
  unsigned char bytes[16] = {};
  const std::size_t words = hex.size() / 8;
  if ((words != 1 && words != 4) || hex.size() % 8 != 0) {
    return hex;
  }
  for (std::size_t w = 0; w < words; ++w) {
    const auto word = static_cast<std::uint32_t>(number(hex.substr(w * 8, 8), 16));
    std::memcpy(bytes + w * 4, &word, 4);
  }
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(words == 1 ? AF_INET : AF_INET6, bytes, text, sizeof text);
  return text;
}

std::vector<OsRow> processes() {
  std::vector<OsRow> rows;
  for (long pid : numeric_entries("/proc")) {
    std::set<int> cores;
    for (long tid : numeric_entries(proc(pid) + "/task")) {
      if (auto st = procfs::task_stat(static_cast<Pid>(pid), static_cast<Tid>(tid)); st && st->core >= 0) {
        cores.insert(st->core);
      }
    }
    rows.push_back({{"pid", std::to_string(pid)}, {"user", owner(pid)}, {"command", command_line(pid)},
                    {"cores", join(cores)}});
  }
  return rows;
}

std::vector<OsRow> process_groups() {
  std::vector<std::pair<long, long>> members;  // (pgid, pid)
  for (long pid : numeric_entries("/proc")) {
    if (long pgid = process_group(pid); pgid >= 0) {
      members.emplace_back(pgid, pid);
    }
  }
  std::sort(members.begin(), members.end());
  std::vector<OsRow> rows;
  for (const auto& [pgid, pid] : members) {
    rows.push_back({{"pgid", std::to_string(pgid)}, {"leader command", comm(pgid)}, {"pid", std::to_string(pid)},
                    {"command line", command_line(pid)}});
  }
  return rows;
}

std::vector<OsRow> threads() {
  std::vector<OsRow> rows;
  for (long pid : numeric_entries("/proc")) {
    const std::string name = comm(pid);
    for (long tid : numeric_entries(proc(pid) + "/task")) {
      auto st = procfs::task_stat(static_cast<Pid>(pid), static_cast<Tid>(tid));
      rows.push_back({{"pid", std::to_string(pid)}, {"command", name}, {"tid", std::to_string(tid)},
                      {"core", st ? std::to_string(st->core) : ""}});
    }
  }
  return rows;
}

std::vector<OsRow> files() {
  std::vector<OsRow> rows;
  for (long pid : numeric_entries("/proc")) {
    const std::string name = comm(pid);
    for (long fd : numeric_entries(proc(pid) + "/fd")) {
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(proc(pid) + "/fd/" + std::to_string(fd), ec);
      rows.push_back({{"pid", std::to_string(pid)}, {"command", name}, {"file descriptor", std::to_string(fd)},
                      {"name", ec ? std::string() : target.string()}});
    }
  }
  return rows;
}

std::vector<OsRow> sockets() {
  std::vector<OsRow> rows;
  read_sockets("tcp", "INET", "STREAM", rows);
  read_sockets("udp", "INET", "DGRAM", rows);
  read_sockets("tcp6", "INET6", "STREAM", rows);
  read_sockets("udp6", "INET6", "DGRAM", rows);
  return rows;
}

std::vector<OsRow> shared_memory() {
  return sysvipc("shm",
                 {{"key", nullptr}, {"shmid", nullptr}, {"perms", nullptr}, {"size", nullptr}, {"cpid", pid_command},
                  {"lpid", pid_command}, {"nattch", nullptr}, {"uid", uid_column}, {"gid", gid_column},
                  {"cuid", uid_column}, {"cgid", gid_column}, {"atime", ipc_time}, {"dtime", ipc_time},
                  {"ctime", ipc_time}},
                 {"key", "shmid", "permissions", "size", "creator command", "last op. command", "num attached", "user",
                  "group", "creator user", "creator group", "last shmat() time", "last shmdt() time",
                  "last shmctl() time"});
}

std::vector<OsRow> semaphores() {
  return sysvipc("sem",
                 {{"key", nullptr}, {"semid", nullptr}, {"perms", nullptr}, {"nsems", nullptr}, {"uid", uid_column},
                  {"gid", gid_column}, {"cuid", uid_column}, {"cgid", gid_column}, {"otime", ipc_time},
                  {"ctime", ipc_time}},
                 {"key", "semid", "permissions", "num semaphores", "user", "group", "creator user", "creator group",
                  "last semop() time", "last semctl() time"});
}

std::vector<OsRow> message_queues() {
  return sysvipc("msg",
                 {{"key", nullptr}, {"msqid", nullptr}, {"perms", nullptr}, {"cbytes", nullptr}, {"qnum", nullptr},
                  {"lspid", pid_command}, {"lrpid", pid_command}, {"uid", uid_column}, {"gid", gid_column},
                  {"cuid", uid_column}, {"cgid", gid_column}, {"stime", ipc_time}, {"rtime", ipc_time},
                  {"ctime", ipc_time}},
                 {"key", "msqid", "permissions", "num used bytes", "num messages", "last msgsnd() command",
                  "last msgrcv() command", "user", "group", "creator user", "creator group", "last msgsnd() time",
                  "last msgrcv() time", "last msgctl() time"});
}

std::vector<OsRow> modules() {
  std::vector<OsRow> rows;
  std::istringstream in(read_text("/proc/modules"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, size, uses, deps, status, address;
    if (fields >> name >> size >> uses >> deps >> status >> address) {
      rows.push_back({{"name", name}, {"size", size}, {"num uses", uses}, {"dependencies", deps},
                      {"status", status}, {"address", address}});
    }
  }
  return rows;
}

std::vector<OsRow> cpus() {
  std::vector<OsRow> rows;
  std::istringstream in(read_text("/proc/cpuinfo"));
  std::string line;
  OsRow row;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (trim(line).empty() || colon == std::string::npos) {
      if (!row.empty()) {
        rows.push_back(std::move(row));
        row.clear();
      }
      continue;
    }
    row.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  if (!row.empty()) {
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tracer::osdata
