// Plain POSIX child processes for the end-to-end tests: spawn with pipes, read their output
// with poll() against a deadline, kill and reap. Nothing here may block without a deadline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace e2e {

using Clock = std::chrono::steady_clock;

struct SpawnOptions {
  std::vector<std::string> argv{};  // argv[0] is the path to execute
  bool merge_stderr = false;        // stderr goes into the stdout pipe (keeps the order)
  bool new_process_group = true;    // so that kill() reaches whatever it starts
  std::string cwd{};                // where it starts (empty: here); argv[0] must then be absolute
};

// A child with stdin on /dev/null and stdout/stderr on pipes. The destructor kills and reaps it.
class Child {
 public:
  explicit Child(const SpawnOptions& opts);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

  // Reads whatever is available until `deadline`, or until `stop()` returns true after a
  // read, or until both pipes are closed. Returns stop()'s last result.
  template <typename Pred>
  bool pump_until(Clock::time_point deadline, Pred stop) {
    while (true) {
      if (stop()) {
        return true;
      }
      if (!pump_once(deadline)) {
        return stop();
      }
    }
  }
  // Waits until `needle` shows up in stderr (or stdout if `in_stdout`) or the deadline passes.
  bool wait_for_text(const std::string& needle, Clock::time_point deadline, bool in_stdout = false);
  // Reads until both pipes close and the process exits, or the deadline passes.
  // Returns the wait status (as from waitpid), or nullopt on timeout.
  std::optional<int> wait(Clock::time_point deadline);
  // SIGKILL (the whole group when it has one) and reap. Safe to call twice.
  void kill_and_reap();
  bool exited() const { return status_.has_value(); }
  std::optional<int> status() const { return status_; }

 private:
  // One poll() round; false when there is nothing left to read or the deadline passed.
  bool pump_once(Clock::time_point deadline);
  bool try_reap();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool own_group_ = false;
  std::string out_{};
  std::string err_{};
  std::optional<int> status_;
};

// What a child that did not end in time is doing, for a failure's message: its process group
// as ps shows it, and the threads' backtraces of each process in it named `name` (gdb -p).
std::string hang_report(const Child& child, const std::string& name);

// "exited with 3", "killed by signal 9", for messages.
std::string describe_status(std::optional<int> status);
// Exit code if the process exited normally, else -1 (signal) or -2 (still running / unknown).
int exit_code(std::optional<int> status);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_tcp_port();

// Processes whose parent is this test process. With `become_subreaper()` in effect this also
// catches inferiors orphaned by a killed server.
std::set<pid_t> current_children();
// Makes this process the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER). Idempotent.
void become_subreaper();
// Kills and reaps every child of ours not in `keep` (leftovers of a session).
// Returns how many there were.
int kill_stray_children(const std::set<pid_t>& keep);

// Single-letter state from /proc/PID/stat ('R', 'S', 't', 'Z', ...), or '?' if gone.
char proc_state(pid_t pid);
// TracerPid from /proc/PID/status: who ptraces it (0: nobody, or it is gone).
pid_t tracer_of(pid_t pid);
// Reads `len` bytes of another process's memory through /proc/PID/mem.
std::optional<std::vector<unsigned char>> read_proc_mem(pid_t pid, unsigned long addr, size_t len);

}  // namespace e2e
