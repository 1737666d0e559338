// What every handler sees: the Target, host file access, and the state of this GDB session.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "protocol/requests.hpp"
#include "protocol/thread_id.hpp"
#include "server/disable_packet.hpp"
#include "tracer/backend.hpp"
#include "tracer/host_io.hpp"
#include "tracer/target.hpp"

namespace server {

// What a handler asks the session to do.
struct Reply {
  enum class Kind {
    Packet,       // send payload (already escaped as the packet requires)
    None,         // send nothing (k)
    WaitForStop,  // the target was resumed: the stop reply comes later
  };
  Kind kind = Kind::Packet;
  std::string payload;

  static Reply packet(std::string text) { return {Kind::Packet, std::move(text)}; }
  static Reply ok() { return {Kind::Packet, "OK"}; }
  static Reply empty() { return {Kind::Packet, ""}; }
  static Reply none() { return {Kind::None, ""}; }
  static Reply wait_for_stop() { return {Kind::WaitForStop, ""}; }
};
using HandlerResult = base::Result<Reply>;

// Settings that come from the command line (and the backend it opened); no handler writes them.
struct ServerOptions {
  bool stdio_is_protocol = false;   // COMM is "-"
  std::vector<std::string> wrapper;  // --wrapper: how every program starts (launch.cpp)
  // --btrace-max-size: the most Qbtrace-conf:bts:size gets per thread (GDB's "unlimited" too).
  std::uint64_t btrace_max_size = tracer::kDefaultBtraceMaxSize;
  // What records, and in which objects, as `monitor btrace` shows them.
  tracer::Backend btrace_backend = tracer::Backend::Auto;
  std::string btrace_scope_name = "all";
  bool dbt_built = false;  // the dbt recorder is there to be suggested
  // Give up (exit) when no GDB has connected after this many seconds (0: wait for ever).
  double first_connection_timeout = 0;
  // --disable-packet.
  std::set<DisablePacket> disabled_packets;
  bool disabled(DisablePacket packet) const {
    return packet != DisablePacket::None && disabled_packets.count(packet) != 0;
  }
};

// What changes as the server runs and outlives a connection: GDB's settings for the next program,
// the program last run, the branch-trace configuration GDB chose, the stop '?' reports.
struct ServerState {
  // GDB sent '!' (target extended-remote); for the server's life, as gdbserver. --multi does
  // not make it: pwntools runs `gdbserver --multi` and connects with `target remote`.
  bool extended = false;
  std::vector<std::string> last_program;  // for vRun with an empty program, R and qExecAndArgs
  // last_program is {PROG, LINE}: its arguments are one line for the shell (single-inf-arg).
  bool last_args_are_line = false;
  // How the next program starts (launch.cpp): the command line's --no-startup-with-shell, then
  // what GDB asks (QStartupWithShell, QEnvironment*, QSetWorkingDir, QDisableRandomization).
  bool startup_with_shell = true;
  std::optional<std::vector<std::string>> environment;  // "NAME=value"; nullopt: the server's
  std::string working_dir;                               // empty: the server's
  bool disable_randomization = true;
  // The configuration the next Qbtrace:bts uses (global, as in gdbserver).
  tracer::BtraceConfig btrace_config;
  // Why the process is stopped now, for '?' (also for a GDB that connects later).
  std::optional<tracer::StopEvent> last_stop;
  // QTro: ranges of the program that never change, read from memory while a trace frame that
  // did not collect them is looked at.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> trace_readonly;
};

// Everything a GDB connection negotiated or selected. No globals: one per session.
struct SessionState {
  // Negotiated in qSupported.
  bool multiprocess = false;
  bool swbreak = false;
  bool hwbreak = false;
  // GDB offered error-message+, as GDB 15 and later do: `monitor` speaks gdbserver 15's words
  // (`set debug COMPONENT on|off`), which their testsuites expect; older GDBs get gdbserver 13's.
  bool gdb15_or_later = false;
  bool no_ack = false;
  bool thread_events = false;
  bool exec_events = false;
  bool fork_events = false;
  bool vfork_events = false;
  bool no_resumed = false;
  bool single_inferior_argument = false;  // single-inf-arg: vRun's arguments as one line
  // Non-stop mode (QNonStop:1): stops go out as %Stop notifications, queued for vStopped.
  bool non_stop = false;
  struct QueuedStop {
    std::string reply;
    tracer::StopEvent event;
  };
  std::deque<QueuedStop> stop_notifications;
  // Selected threads (Hg / Hc); 0 = any.
  tracer::Tid general_thread = 0;
  tracer::Tid continue_thread = 0;
  // Signals (GDB numbering) passed straight to the program without a stop.
  std::set<int> pass_signals;
  std::set<int> program_signals;
  bool program_signals_set = false;
  // Cursor of qfThreadInfo/qsThreadInfo.
  std::vector<protocol::ThreadId> thread_list_snapshot;
  std::size_t thread_list_pos = 0;
  // The trace frame GDB looks at (QTFrame; none: the live program): g, p, m and qTV read it.
  std::optional<std::uint64_t> trace_frame;
  // What qTsP and qTsV give next (qTfP and qTfV make the list).
  std::vector<std::string> trace_upload;
  std::size_t trace_upload_pos = 0;
  // qXfer documents built at offset 0 and served from here for later offsets.
  std::map<std::string, std::string> xfer_cache;
  // What GDB lets the server do for it (QAllow; all of it until GDB says otherwise).
  protocol::Permissions permissions;
  // The session should end after this reply (k, D, monitor exit).
  bool end_session = false;
  bool exit_server = false;
};

struct Context {
  tracer::Target& target;
  tracer::HostIo& host;
  SessionState& state;
  const ServerOptions& options;
  ServerState& server;
  // Console output for qRcmd ("O" packets are sent by the session before the final reply).
  std::vector<std::string> console;
  // Lines for the user at the server's terminal ("Detaching from process N"), gdbserver's wording.
  std::function<void(const std::string&)> notice = [](const std::string&) {};
};

// Route preconditions and shared helpers.
base::Result<void> require_process(Context& cx);
// The thread that g/m/Z... act on: Hg if alive, else the first thread.
base::Result<tracer::Tid> current_thread(Context& cx);
// Our wire id for a thread of the current process.
protocol::ThreadId wire_thread(Context& cx, tracer::Tid tid);
// The "1" / "0" body of a Q packet (QNonStop:1, QThreadEvents:0, ...).
base::Result<bool> parse_flag(std::string_view body);

}  // namespace server
