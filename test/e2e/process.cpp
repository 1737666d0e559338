#include "test/e2e/process.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace e2e {
namespace {

constexpr auto kSlice = std::chrono::milliseconds(50);
constexpr auto kDrainAfterExit = std::chrono::milliseconds(300);

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Reads what is available on `fd` into `sink`; closes it on EOF or error.
void drain(int& fd, std::string& sink) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    sink.append(buf, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close_fd(fd);
  }
}

}  // namespace

Child::Child(const SpawnOptions& opts) {
  if (opts.argv.empty()) {
    throw std::invalid_argument("Child: empty argv");
  }
  int out_pipe[2];
  int err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    fail("pipe2");
  }
  if (!opts.merge_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    fail("pipe2");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, opts.merge_stderr ? out_pipe[1] : err_pipe[1], 2);
  if (!opts.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&fa, opts.cwd.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  if (opts.new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);

  std::vector<char*> argv;
  for (const auto& a : opts.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  int rc = posix_spawn(&pid_, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  if (err_pipe[1] >= 0) {
    ::close(err_pipe[1]);
  }
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (rc != 0) {
    close_fd(out_fd_);
    close_fd(err_fd_);
    pid_ = -1;
    errno = rc;
    fail("posix_spawn " + opts.argv[0]);
  }
  own_group_ = opts.new_process_group;
}

Child::~Child() { kill_and_reap(); }

bool Child::pump_once(Clock::time_point deadline) {
  auto now = Clock::now();
  if (now >= deadline || (out_fd_ < 0 && err_fd_ < 0)) {
    return false;
  }
  pollfd fds[2];
  int n = 0;
  if (out_fd_ >= 0) {
    fds[n++] = {out_fd_, POLLIN, 0};
  }
  if (err_fd_ >= 0) {
    fds[n++] = {err_fd_, POLLIN, 0};
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  int ms = static_cast<int>(std::min<long>(left.count() + 1, kSlice.count()));
  int rc = ::poll(fds, static_cast<nfds_t>(n), ms);
  if (rc < 0 && errno != EINTR) {
    fail("poll");
  }
  for (int i = 0; rc > 0 && i < n; ++i) {
    if (fds[i].revents == 0) {
      continue;
    }
    if (fds[i].fd == out_fd_) {
      drain(out_fd_, out_);
    } else {
      drain(err_fd_, err_);
    }
  }
  return true;
}

bool Child::wait_for_text(const std::string& needle, Clock::time_point deadline, bool in_stdout) {
  const std::string& text = in_stdout ? out_ : err_;
  return pump_until(deadline, [&] { return text.find(needle) != std::string::npos; });
}

bool Child::try_reap() {
  if (status_ || pid_ < 0) {
    return true;
  }
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    return true;
  }
  return false;
}

std::optional<int> Child::wait(Clock::time_point deadline) {
  while (!try_reap()) {
    if (Clock::now() >= deadline) {
      return std::nullopt;
    }
    if (!pump_once(deadline)) {
      // Pipes closed but the process lives on: just sleep a slice.
      std::this_thread::sleep_for(std::min<Clock::duration>(kSlice, deadline - Clock::now()));
    }
  }
  // The pipes may be held open by the child's own children: drain briefly, then stop.
  auto drain_deadline = std::min(deadline, Clock::now() + kDrainAfterExit);
  while (pump_once(drain_deadline)) {
  }
  return status_;
}

void Child::kill_and_reap() {
  if (pid_ > 0 && !status_) {
    if (own_group_) {
      ::kill(-pid_, SIGKILL);
    }
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = st;
  }
  if (out_fd_ >= 0 || err_fd_ >= 0) {
    auto drain_deadline = Clock::now() + std::chrono::milliseconds(100);
    while (pump_once(drain_deadline)) {
    }
  }
  close_fd(out_fd_);
  close_fd(err_fd_);
}

std::string hang_report(const Child& child, const std::string& name) {
  auto run = [](std::vector<std::string> argv) {
    Child c({.argv = std::move(argv), .merge_stderr = true});
    c.wait(Clock::now() + std::chrono::seconds(30));
    return c.out();
  };
  const std::string group = std::to_string(child.pid());
  std::string members = run({"/usr/bin/pgrep", "-d", ",", "-g", group});
  members.erase(std::remove(members.begin(), members.end(), '\n'), members.end());
  std::string out = "--- still running after its deadline: its process group\n" +
                    run({"/usr/bin/ps", "-o", "pid,ppid,stat,wchan:24,args", "-p", members.empty() ? group : members});
  std::istringstream pids(run({"/usr/bin/pgrep", "-g", group, "-x", name}));
  for (std::string pid; std::getline(pids, pid);) {
    out += "--- " + name + " " + pid + ", its threads\n" +
           run({"/usr/bin/gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all bt"});
  }
  return out;
}

std::string describe_status(std::optional<int> status) {
  if (!status) {
    return "still running";
  }
  if (WIFEXITED(*status)) {
    return "exited with " + std::to_string(WEXITSTATUS(*status));
  }
  if (WIFSIGNALED(*status)) {
    return "killed by signal " + std::to_string(WTERMSIG(*status));
  }
  return "status " + std::to_string(*status);
}

int exit_code(std::optional<int> status) {
  if (!status) {
    return -2;
  }
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail("socket");
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = 0;
  socklen_t len = sizeof sa;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    ::close(fd);
    fail("bind");
  }
  ::close(fd);
  return ntohs(sa.sin_port);
}

namespace {

// Parent pid and state of `pid` from /proc/PID/stat; false if it is gone.
bool read_stat(pid_t pid, pid_t& ppid, char& state) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) {
    return false;
  }
  auto close = line.rfind(')');
  if (close == std::string::npos) {
    return false;
  }
  std::istringstream rest(line.substr(close + 1));
  long parent = 0;
  rest >> state >> parent;
  ppid = static_cast<pid_t>(parent);
  return static_cast<bool>(rest);
}

}  // namespace

std::set<pid_t> current_children() {
  std::set<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) {
    return out;
  }
  pid_t self = ::getpid();
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    pid_t ppid = 0;
    char state = '?';
    if (read_stat(static_cast<pid_t>(pid), ppid, state) && ppid == self) {
      out.insert(static_cast<pid_t>(pid));
    }
  }
  ::closedir(d);
  return out;
}

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int kill_stray_children(const std::set<pid_t>& keep) {
  int count = 0;
  // Killing one may orphan its own children onto us, hence a few rounds.
  for (int round = 0; round < 5; ++round) {
    bool any = false;
    for (pid_t pid : current_children()) {
      if (keep.count(pid) != 0) {
        continue;
      }
      any = true;
      ++count;
      ::kill(pid, SIGKILL);
      int st = 0;
      while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    }
    if (!any) {
      break;
    }
  }
  return count;
}

char proc_state(pid_t pid) {
  pid_t ppid = 0;
  char state = '?';
  return read_stat(pid, ppid, state) ? state : '?';
}

pid_t tracer_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("TracerPid:", 0) == 0) {
      return static_cast<pid_t>(std::stol(line.substr(10)));
    }
  }
  return 0;
}

std::optional<std::vector<unsigned char>> read_proc_mem(pid_t pid, unsigned long addr, size_t len) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  std::vector<unsigned char> buf(len);
  ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(addr));
  ::close(fd);
  if (n != static_cast<ssize_t>(len)) {
    return std::nullopt;
  }
  return buf;
}

}  // namespace e2e
