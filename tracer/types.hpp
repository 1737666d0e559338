// Plain value types shared by the Target interface and its implementations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tracer {

using Pid = int;
using Tid = int;
using Addr = std::uint64_t;
using Bytes = std::vector<std::uint8_t>;

// How to start a program (gdbserver: PROG ARGS, --no-startup-with-shell, vRun).
struct LaunchSpec {
  std::string program;
  std::vector<std::string> args;
  bool startup_with_shell = true;  // exec through $SHELL -c "exec prog args", like gdbserver
  bool disable_aslr = true;        // gdbserver disables randomization by default
  // --wrapper: run WRAPPER... PROG ARGS; the wrapper execs the program (one more exec).
  std::vector<std::string> wrapper{};
  // The program's whole environment ("NAME=value"); nullopt: the server's own.
  std::optional<std::vector<std::string>> environment{};
  std::string working_dir{};  // empty: the server's
  // When GDB talks over our stdin/stdout (COMM "-"), the program's stdin becomes /dev/null
  // and its stdout our stderr, so it cannot corrupt the protocol stream (gdbserver does so).
  bool stdio_is_protocol = false;
  // With startup_with_shell: the arguments as one line the shell reads (expanding globs and
  // variables), in place of `args` (GDB's single-inf-arg).
  std::optional<std::string> shell_line{};
};

// One thread's part in a resume, as in vCont. tid == kAllThreads is the default action
// (limited to one process when pid is set: vCont;c:pPID.-1).
inline constexpr Tid kAllThreads = -1;
enum class ResumeKind { Continue, Step, RangeStep, Stop };
struct ThreadAction {
  Tid tid = kAllThreads;
  Pid pid = 0;                // with tid == kAllThreads: only this process's threads (0: any)
  ResumeKind kind = ResumeKind::Continue;
  int signal = 0;             // Linux signal number to deliver, 0 for none
  Addr range_start = 0;       // RangeStep: keep stepping while start <= pc < end
  Addr range_end = 0;
};
// Each thread takes the first action that names it, else the first kAllThreads action;
// threads matched by neither stay stopped.
struct ResumePlan {
  std::vector<ThreadAction> actions;
  // Non-stop: threads whose stop GDB has not heard yet, and fork children it has not been told
  // of: no kAllThreads action applies to them (an action naming them does).
  std::set<Tid> unannounced_threads = {};
  std::set<Pid> unannounced_children = {};
};

enum class StopReason {
  Signal,              // an ordinary signal (also SIGSTOP after attach / interrupt)
  SoftwareBreakpoint,  // one of our int3s; pc already rewound onto it
  HardwareBreakpoint,  // Z1
  Watchpoint,          // Z2/Z3/Z4; see watch_addr
  SingleStep,          // a step or range step finished
  Exec,                // the process exec'd exec_path (only when exec reporting is on)
  Fork,                // the thread forked child_pid (only when fork reporting is on)
  VFork,               // the thread vforked child_pid; its memory is shared until VForkDone
  VForkDone,           // the vfork child exec'd or exited: the parent's memory is its own again
  Clone,               // the thread made thread child_tid, kept stopped (only when asked of it)
  Exited,              // the process exited: status
  Killed,              // the process died of a signal: signal
  ThreadExited,        // one thread exited, its process lives on (only when thread events are on)
  NoResumed,           // every thread GDB resumed is gone; nothing is left to wait for
  SyscallEntry,        // the thread entered syscall number `syscall` (only while caught)
  SyscallReturn,       // ... and returned from it
};

enum class WatchKind { Write, Read, Access };

struct StopEvent {
  StopReason reason = StopReason::Signal;
  Pid pid = 0;
  Tid tid = 0;
  int signal = 0;   // Linux signal number the thread stopped with (SIGTRAP for breakpoints)
  int status = 0;   // exit status when reason == Exited
  Addr watch_addr = 0;
  WatchKind watch_kind = WatchKind::Write;
  std::string exec_path{};  // Exec: the new program
  Pid child_pid = 0;        // Fork, VFork: the new process (its only thread has tid child_pid)
  Tid child_tid = 0;        // Clone: the new thread, of pid
  int syscall = 0;          // SyscallEntry, SyscallReturn: the syscall's number
};

// What GDB asks to hear of one thread beyond what every thread reports (QThreadOptions).
struct ThreadOptions {
  bool clone_events = false;  // its clones are reported (Clone), each new thread kept stopped
  bool exit_events = false;   // its exit is reported (ThreadExited), as with thread events on
  bool operator==(const ThreadOptions&) const = default;
};
// The options of the threads one rule names: tid, or every thread (kAllThreads) of pid, or of
// every process (pid 0).
struct ThreadOptionsRule {
  Pid pid = 0;
  Tid tid = kAllThreads;
  ThreadOptions options{};
};

// Which syscalls stop a process (QCatchSyscalls): none, any, or those listed.
struct SyscallCatch {
  bool enabled = false;
  std::vector<int> numbers{};  // empty while enabled: any syscall
  bool catches(int number) const {
    if (!enabled) {
      return false;
    }
    return numbers.empty() || std::find(numbers.begin(), numbers.end(), number) != numbers.end();
  }
};

struct ThreadInfo {
  Pid pid = 0;
  Tid tid = 0;
  std::string name;  // /proc/PID/task/TID/comm
  int core = -1;     // last CPU, -1 unknown
  bool resumed = false;  // running as GDB knows it: resumed, its stop not reported yet
};

// One entry of the dynamic linker's list (qXfer:libraries-svr4:read).
struct LoadedLibrary {
  std::string name;
  Addr lm = 0;      // address of the link_map entry
  Addr l_addr = 0;  // load bias
  Addr l_ld = 0;    // address of its dynamic section
  Addr lmid = 0;    // namespace id (0 = the default namespace)
  Addr l_prev = 0;  // the entry before it in its namespace's list (checked by incremental reads)
};
struct LibraryList {
  Addr main_lm = 0;  // link_map of the main program, 0 when the loader has not run yet
  std::vector<LoadedLibrary> libraries;
};

// What a process does with a signal now (its sigaction): the default action, nothing, or a
// handler of its own.
enum class SignalAction { Default, Ignore, Handler, Unknown };

enum class BreakpointType { Software, Hardware, WriteWatch, ReadWatch, AccessWatch };

// When a thread began and ended (CLOCK_MONOTONIC ns; 0: not yet), as a target that learns of
// threads only afterwards writes them down.
struct ThreadLife {
  Tid tid = 0;
  std::uint64_t born_ns = 0;
  std::uint64_t exited_ns = 0;
};

}  // namespace tracer
