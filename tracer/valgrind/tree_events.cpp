#include "tracer/valgrind/tree_events.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "tracer/btrace/dbt_ring.h"

namespace tracer {
namespace {

std::vector<std::string> split_command(const char* bytes, std::size_t size) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (bytes[i] == 0) {
      if (i == start) {
        break;  // the end: nothing after the last word
      }
      out.emplace_back(bytes + start, i - start);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

std::vector<TreeEvent> parse_tree_events(std::string_view bytes) {
  std::vector<TreeEvent> out;
  for (std::size_t at = 0; at + sizeof(hs_dbt_process_event) <= bytes.size(); at += sizeof(hs_dbt_process_event)) {
    hs_dbt_process_event raw{};
    std::memcpy(&raw, bytes.data() + at, sizeof raw);
    TreeEvent e;
    switch (raw.kind) {
      case HS_DBT_PROCESS_START: e.kind = TreeEvent::Kind::Start; break;
      case HS_DBT_PROCESS_FORK: e.kind = TreeEvent::Kind::Fork; break;
      case HS_DBT_PROCESS_EXEC: e.kind = TreeEvent::Kind::Exec; break;
      case HS_DBT_PROCESS_EXIT: e.kind = TreeEvent::Kind::Exit; break;
      case HS_DBT_PROCESS_KILLED: e.kind = TreeEvent::Kind::Killed; break;
      case HS_DBT_PROCESS_NATIVE: e.kind = TreeEvent::Kind::Native; break;
      case HS_DBT_PROCESS_REAPED: e.kind = TreeEvent::Kind::Reaped; break;
      default: continue;
    }
    e.pid = static_cast<Pid>(raw.pid);
    e.parent = static_cast<Pid>(raw.parent);
    e.status = raw.status;
    e.t_ns = raw.t_ns;
    e.command = split_command(raw.command, sizeof raw.command);
    out.push_back(std::move(e));
  }
  return out;
}

void log_tree_events(const std::vector<TreeEvent>& events, Pid root, EventLog& log) {
  for (const auto& e : events) {
    const EventLog::Clock::time_point when{std::chrono::nanoseconds(e.t_ns)};
    switch (e.kind) {
      case TreeEvent::Kind::Start:
        break;  // the program the caller started, logged as it started it
      case TreeEvent::Kind::Fork:
        log.add_at(when, "fork", e.parent, e.parent, {}, e.pid);
        break;
      case TreeEvent::Kind::Exec:
        log.add_at(when, "exec", e.pid, e.pid, e.command.empty() ? std::string() : e.command.front());
        break;
      case TreeEvent::Kind::Exit:
        if (e.pid != root) {
          log.add_at(when, "exit", e.pid, e.pid, {}, e.status);
        }
        break;
      case TreeEvent::Kind::Killed:
        if (e.pid != root) {
          log.add_at(when, "killed", e.pid, e.pid);
        }
        break;
      case TreeEvent::Kind::Reaped:  // SIGKILL: it said nothing itself
        log.add_at(when, "killed", e.pid, e.pid, "SIGKILL", e.status & 0x7f);
        break;
      case TreeEvent::Kind::Native:
        log.add_at(when, "exec", e.pid, e.pid, e.command.empty() ? std::string() : e.command.front());
        log.add_at(when, "unrecorded", e.pid, e.pid,
                   "setuid or setgid: Valgrind cannot run it with its privileges, so it runs natively, unrecorded");
        break;
    }
  }
}

std::vector<TreeEvent> TreeEvents::read_new() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {};
  }
  std::string bytes;
  char buf[65536];
  ssize_t n = 0;
  while ((n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset_ + bytes.size()))) > 0) {
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const std::size_t whole = bytes.size() - bytes.size() % sizeof(hs_dbt_process_event);
  offset_ += whole;
  auto events = parse_tree_events(std::string_view(bytes).substr(0, whole));
  for (const auto& e : events) {
    if (e.kind == TreeEvent::Kind::Start || e.kind == TreeEvent::Kind::Exec || e.kind == TreeEvent::Kind::Native) {
      commands_[e.pid] = e.command;
    } else if (e.kind == TreeEvent::Kind::Fork) {
      auto parent = commands_.find(e.parent);
      commands_[e.pid] = parent != commands_.end() ? parent->second : std::vector<std::string>{};
    } else if (e.kind != TreeEvent::Kind::Reaped) {  // (a killed one's is asked for after)
      commands_.erase(e.pid);
    }
  }
  return events;
}

void TreeEvents::forget(Pid pid) { commands_.erase(pid); }

std::vector<Pid> TreeEvents::unended() const {
  std::vector<Pid> out;
  for (const auto& [pid, command] : commands_) {
    out.push_back(pid);
  }
  return out;
}

std::vector<std::string> TreeEvents::command_of(Pid pid) const {
  auto it = commands_.find(pid);
  return it != commands_.end() ? it->second : std::vector<std::string>{};
}

}  // namespace tracer
