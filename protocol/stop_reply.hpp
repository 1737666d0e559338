// Stop replies: T (with thread, registers, swbreak/hwbreak/watch/fork/vfork/vforkdone/clone/exec/
// syscall_entry/syscall_return), W, X, w (a thread exited), and O (console output).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "protocol/hex.hpp"
#include "protocol/thread_id.hpp"

namespace protocol {

struct StopReply {
  enum class Kind { Stopped, Exited, Terminated, ThreadExited, NoResumed };
  enum class Why {
    None, SwBreak, HwBreak, Watch, ReadWatch, AccessWatch, Fork, VFork, VForkDone, Clone, SyscallEntry, SyscallReturn
  };
  Kind kind = Kind::Stopped;
  int gdb_signal = 0;   // Stopped/Terminated: GDB signal number
  int exit_status = 0;  // Exited
  std::int64_t pid = 0; // for W/X ";process:" when multiprocess
  ThreadId thread{};    // Stopped
  std::vector<std::pair<int, Bytes>> registers{};  // expedited: regno -> bytes
  Why why = Why::None;
  std::uint64_t watch_addr = 0;
  int syscall = 0;        // SyscallEntry / SyscallReturn: its number ("syscall_entry:3b;")
  ThreadId child{};       // Fork / VFork: the new process's thread ("fork:p2.2;"); Clone: the new thread
  std::string exec_path{};  // not empty: the process exec'd this program ("exec:HEX;")
  int core = -1;        // -1: not sent
  bool thread_field = true;  // false: no "thread:" (a server without it, --disable-packet=Tthread)
  bool signal_only = false;  // "S05" instead of T (--disable-packet=T)
};

// "T05swbreak:;06:...;thread:p1.1;core:0;", "W00;process:1a", "X0b;process:1a",
// "w00;p1a.1b" (ThreadExited: exit_status and thread), "N" (NoResumed).
std::string encode_stop_reply(const StopReply& reply, bool multiprocess);

// "O" + the hex of text: console output GDB prints and then keeps waiting (`O XX...`, before an
// all-stop stop reply, and qRcmd's output). Not a reply of non-stop mode.
std::string encode_console_output(std::string_view text);

// The other direction, for a client of another stub (Valgrind's gdbserver): what
// encode_stop_reply writes, read back (S and T, W and X with or without ";process:", w, N).
// Fields this grammar does not know ("library:", "create:") are skipped; a field that does not
// parse is left out, never guessed. Not a stop reply at all: Errc::malformed.
base::Result<StopReply> parse_stop_reply(std::string_view text);

}  // namespace protocol
