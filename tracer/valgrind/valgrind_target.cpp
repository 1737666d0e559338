#include "tracer/valgrind/valgrind_target.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "protocol/signals.hpp"
#include "protocol/thread_id.hpp"
#include "tracer/btrace/dbt_ring.h"
#include "tracer/linux/exec_child.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/svr4_libraries.hpp"
#include "tracer/valgrind/stub_replies.hpp"
#include "tracer/valgrind/unsupported_code.hpp"

namespace tracer {
namespace {

// A reply that is an error (Enn) or unsupported (empty), as an Error.
base::Error stub_error(const std::string& packet, const std::string& reply) {
  if (reply.empty()) {
    return base::make_error(base::Errc::unsupported, "Valgrind's gdbserver does not support " + packet);
  }
  return base::make_error(base::Errc::invalid, "Valgrind's gdbserver answered " + reply + " to " + packet);
}

bool is_error(const std::string& reply) { return reply.empty() || (reply.size() == 3 && reply[0] == 'E'); }

using protocol::hex_u64;

char z_kind(BreakpointType type) {
  switch (type) {
    case BreakpointType::Software: return '0';
    case BreakpointType::Hardware: return '1';
    case BreakpointType::WriteWatch: return '2';
    case BreakpointType::ReadWatch: return '3';
    case BreakpointType::AccessWatch: return '4';
  }
  return '0';
}

// Where the rings and vgdb's FIFOs go: memory-backed when the machine has /dev/shm.
std::string make_work_dir() {
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string path = base + "/hindsight-dbt.XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) {
    return {};
  }
  return path;
}

// Largest memory block one m/M packet carries (Valgrind's PacketSize is 0x3fff, two hex digits
// a byte).
constexpr std::size_t kMemoryChunk = 0x1000;

}  // namespace

ValgrindTarget::ValgrindTarget(DbtOptions options) : options_(std::move(options)) {}

ValgrindTarget::~ValgrindTarget() {
  if (has_process()) {
    (void)kill();
  }
  for (const Pid pid : detached_) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  remove_work_dir();
}

void ValgrindTarget::remove_work_dir() {
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

std::string ValgrindTarget::read_log() const {
  std::ifstream in(dir_ + "/valgrind.log");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string ValgrindTarget::valgrind_log() const {
  std::string text = read_log();
  if (text.empty()) {
    return {};
  }
  if (text.size() > 2000) {
    text = "..." + text.substr(text.size() - 2000);
  }
  return "; Valgrind said:\n" + text;
}

void ValgrindTarget::explain_sigill() const {
  // Valgrind logs the bytes it could not translate, then gives the program SIGILL.
  const std::string text = read_log();
  const auto at = text.find("unhandled instruction bytes");
  if (at == std::string::npos) {
    return;
  }
  const std::string bytes = text.substr(at, text.find('\n', at) - at);
  std::fprintf(stderr,
               "hindsight: the program ran an instruction the dbt recorder (Valgrind) cannot run (%s) and got "
               "SIGILL for it; record this program with --btrace=soft instead\n",
               bytes.c_str());
}

Result<Pid> ValgrindTarget::launch(const LaunchSpec& spec) {
  if (has_process()) {
    return base::make_error(base::Errc::invalid, "the dbt recorder runs one process at a time");
  }
  if (options_.valgrind_lib.empty() || !std::filesystem::exists(options_.valgrind_lib + "/hsdbt-amd64-linux")) {
    return base::make_error(base::Errc::unsupported,
                            "the dbt recorder is not built (needs Debian's valgrind package; rebuild Hindsight)");
  }
  if (auto why = code_the_recorder_cannot_run(spec.program)) {
    return base::make_error(base::Errc::unsupported, *why);
  }
  remove_work_dir();  // a previous run's
  dir_ = make_work_dir();
  if (dir_.empty()) {
    return base::sys_error("cannot make a directory for the recorder's rings");
  }
  const std::string prefix = dir_ + "/vgdb";
  std::vector<std::string> argv{"valgrind",
                                "--tool=hsdbt",
                                "--vgdb=yes",
                                "--vgdb-error=0",
                                "--vgdb-prefix=" + prefix,
                                "--ring-dir=" + dir_,
                                "--ring-size=" + std::to_string(options_.ring_bytes),
                                // Valgrind's own messages (its banner for GDB among them) go
                                // to a file, quoted when something goes wrong.
                                "--log-file=" + dir_ + "/valgrind.log",
                                spec.program};
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  const std::vector<char*> exec_args = exec_argv(argv);
  const pid_t pid = ::fork();
  if (pid < 0) {
    return base::sys_error("fork");
  }
  if (pid == 0) {
    ::setenv("VALGRIND_LIB", options_.valgrind_lib.c_str(), 1);
    if (spec.stdio_is_protocol) {
      const int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      ::dup2(2, 1);
    }
    reset_signal_state_for_exec();
    ::execvp("valgrind", exec_args.data());
    std::fprintf(stderr, "cannot run valgrind: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  auto link = RspLink::spawn({"vgdb", "--vgdb-prefix=" + prefix, "--pid=" + std::to_string(pid), "--wait=30"},
                             std::chrono::seconds(40));
  if (!link) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return base::make_error(base::Errc::system, "the program did not start under the dbt recorder (valgrind " +
                                                    spec.program + "): " + link.error().message() + valgrind_log());
  }
  link_.emplace(std::move(link).value());
  pid_ = pid;
  program_name_ = std::filesystem::path(spec.program).filename().string().substr(0, 15);
  auto first = ask("?");
  if (!first || !first->starts_with("T")) {
    (void)kill();
    return base::make_error(base::Errc::system, "the program under the dbt recorder did not stop at its start");
  }
  const StopEvent at_start = stop_from_reply(*first);
  selected_ = at_start.tid;
  return pid_;
}

Result<void> ValgrindTarget::attach(Pid) {
  return base::make_error(base::Errc::unsupported,
                          "the dbt recorder must start the program: attaching needs --btrace=soft or step");
}

Result<void> ValgrindTarget::check_stopped() const {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (running_) {
    return base::make_error(base::Errc::invalid, "the program is running");
  }
  return base::success();
}

Result<std::string> ValgrindTarget::ask(const std::string& packet) {
  if (auto ok = check_stopped(); !ok) {
    return std::move(ok).error();
  }
  return link_->request(packet, std::chrono::seconds(30));
}

Result<void> ValgrindTarget::detach() {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  auto reply = ask("D");
  forget_process(false);  // GDB has its reply at once; the program runs on
  return reply ? base::success() : Result<void>(std::move(reply).error());
}

Result<void> ValgrindTarget::kill() {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  ::kill(pid_, SIGKILL);
  forget_process();
  return base::success();
}

void ValgrindTarget::forget_process(bool wait) {
  if (keep_ended_histories_ && pid_ > 0) {
    // Every thread's ring, mapped before the directory goes (a mapping outlives its file).
    for (const auto& path : dbt_ring_paths(dir_, pid_)) {
      if (auto ring = DbtRing::open(path)) {
        const Tid tid = ring->tid();
        ended_[pid_][tid] = std::make_unique<DbtTracer>(std::move(ring).value(), true);
      }
    }
  }
  link_.reset();  // vgdb goes with its input
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, wait ? 0 : WNOHANG) == 0) {
      detached_.push_back(pid_);
    }
  }
  running_ = false;
  breakpoints_.clear();
  tracers_.clear();
}

std::vector<ThreadInfo> ValgrindTarget::threads() {
  std::vector<ThreadInfo> out;
  for (auto reply = ask("qfThreadInfo"); reply && reply->starts_with("m"); reply = ask("qsThreadInfo")) {
    std::string list = reply->substr(1);
    std::size_t start = 0;
    while (start < list.size()) {
      std::size_t comma = list.find(',', start);
      const std::string id = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      ThreadInfo t;
      t.pid = pid_;
      auto parsed = protocol::parse_thread_id(id);
      if (!parsed || parsed->tid <= 0) {
        break;  // not a thread id: the list ends here
      }
      t.tid = static_cast<Tid>(parsed->tid);
      t.name = procfs::thread_name(pid_, t.tid);
      if (t.name == "hsdbt-amd64-lin") {
        t.name = program_name_;  // Valgrind's name, not the one the kernel would have given
      }
      out.push_back(t);
      if (comma == std::string::npos) {
        break;
      }
      start = comma + 1;
    }
  }
  return out;
}

bool ValgrindTarget::thread_alive(Tid tid) {
  auto reply = ask("T" + hex_u64(tid));
  return reply && *reply == "OK";
}

Result<void> ValgrindTarget::select_thread(Tid tid) {
  if (tid == selected_) {
    return base::success();
  }
  auto reply = ask("Hg" + hex_u64(tid));
  if (!reply || *reply != "OK") {
    return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
  }
  selected_ = tid;
  return base::success();
}

Result<void> ValgrindTarget::resume(const ResumePlan& plan) {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  // Valgrind's gdbserver has no vCont: one thread may step (Hc), or all continue; a signal
  // goes to the thread that takes it.
  const ThreadAction* step = nullptr;
  const ThreadAction* signalled = nullptr;
  for (const auto& a : plan.actions) {
    if (a.kind == ResumeKind::Step || a.kind == ResumeKind::RangeStep) {
      step = step != nullptr ? step : &a;
    }
    if (a.signal != 0) {
      signalled = signalled != nullptr ? signalled : &a;
    }
  }
  const ThreadAction* chosen = step != nullptr ? step : signalled;
  std::string packet;
  const int sig = chosen != nullptr ? chosen->signal : 0;
  if (chosen != nullptr && chosen->tid != kAllThreads) {
    auto reply = ask("Hc" + hex_u64(chosen->tid));
    if (!reply || *reply != "OK") {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(chosen->tid));
    }
  }
  const char op = step != nullptr ? 's' : 'c';
  if (sig != 0) {
    packet = std::string(1, op == 's' ? 'S' : 'C') + protocol::hex_fixed(protocol::gdb_signal_from_host(sig), 2);
  } else {
    packet = std::string(1, op);
  }
  if (auto sent = link_->send(packet); !sent) {
    return sent;
  }
  running_ = true;
  stepping_ = step != nullptr;
  return base::success();
}

Result<void> ValgrindTarget::interrupt() {
  if (!link_ || !running_) {
    return base::success();
  }
  return link_->interrupt();
}

std::optional<StopEvent> ValgrindTarget::poll() {
  if (!link_ || !running_) {
    return std::nullopt;
  }
  for (;;) {
    auto packet = link_->take_packet();
    if (!packet) {
      return link_->closed() ? std::optional<StopEvent>(ended_unannounced()) : std::nullopt;
    }
    if (packet->starts_with("O") && packet->size() > 1) {
      continue;  // console output of Valgrind's: not the program's stop
    }
    running_ = false;
    StopEvent ev = stop_from_reply(*packet);
    if (ev.signal == SIGILL) {
      explain_sigill();
    }
    if (ev.reason == StopReason::Exited || ev.reason == StopReason::Killed) {
      const Pid pid = pid_;
      forget_process();
      ev.pid = ev.tid = pid;
    }
    return ev;
  }
}

StopEvent ValgrindTarget::ended_unannounced() {
  // vgdb left without a stop reply: the program died where Valgrind could say nothing (SIGKILL
  // from outside), or vgdb itself went and the program cannot be driven any more.
  const Pid pid = pid_;
  int status = 0;
  pid_t got = 0;
  for (int i = 0; i < 100 && (got = ::waitpid(pid, &status, WNOHANG)) == 0; ++i) {
    ::usleep(10000);
  }
  if (got == 0) {
    ::kill(pid, SIGKILL);
    got = ::waitpid(pid, &status, 0);
  }
  StopEvent ev{StopReason::Killed, pid, pid, SIGKILL};
  if (got == pid && WIFEXITED(status)) {
    ev.reason = StopReason::Exited;
    ev.signal = 0;
    ev.status = WEXITSTATUS(status);
  } else if (got == pid && WIFSIGNALED(status)) {
    ev.signal = WTERMSIG(status);
  }
  forget_process();  // reaped already: nothing to wait for
  return ev;
}

StopEvent ValgrindTarget::stop_from_reply(const std::string& reply) {
  auto stop = valgrind::parse_stop_reply(reply, pid_, selected_);
  if (stop.thread) {
    selected_ = *stop.thread;  // Valgrind's gdbserver makes the stopped thread the current one
  }
  StopEvent& ev = stop.event;
  if (ev.signal == SIGTRAP && ev.reason == StopReason::Signal) {
    if (breakpoints_.count(stop.pc) != 0) {
      ev.reason = StopReason::SoftwareBreakpoint;
    } else if (stepping_) {
      ev.reason = StopReason::SingleStep;
    }
  }
  return ev;
}

Result<void> ValgrindTarget::set_catch_syscalls(const SyscallCatch& what) {
  std::string packet = what.enabled ? "QCatchSyscalls:1" : "QCatchSyscalls:0";
  for (int number : what.numbers) {
    packet += ";" + hex_u64(static_cast<std::uint32_t>(number));
  }
  auto reply = ask(packet);
  if (!reply) {
    return std::move(reply).error();
  }
  if (*reply != "OK") {
    return base::make_error(base::Errc::unsupported, "Valgrind's gdbserver answered " + packet + " with '" + *reply + "'");
  }
  return base::success();
}

Result<Addr> ValgrindTarget::tls_address(Tid tid, Addr offset, Addr link_map) {
  auto reply = ask("qGetTLSAddr:" + hex_u64(static_cast<std::uint64_t>(tid)) + "," + hex_u64(offset) + "," +
                   hex_u64(link_map));
  if (!reply) {
    return std::move(reply).error();
  }
  if (reply->empty()) {
    return base::make_error(base::Errc::unsupported, "Valgrind's gdbserver does not know qGetTLSAddr");
  }
  auto address = protocol::parse_hex_u64(*reply);
  if (reply->front() == 'E' || !address) {
    return base::make_error(base::Errc::invalid, "Valgrind's gdbserver found no thread-local storage there ('" +
                                                     *reply + "')");
  }
  return *address;
}

Result<std::string> ValgrindTarget::read_xfer(const std::string& object, const std::string& annex) {
  if (auto ok = check_stopped(); !ok) {
    return std::move(ok).error();
  }
  return link_->read_xfer(object, annex);
}

Result<std::string> ValgrindTarget::target_description(const std::string& annex) { return read_xfer("features", annex); }

Result<std::pair<std::size_t, std::size_t>> ValgrindTarget::register_slot(int regno) {
  if (register_sizes_.empty()) {
    // Registers in `g` come in the order the description lists them, features included.
    auto sizes = valgrind::register_sizes([this](const std::string& annex) { return target_description(annex); });
    if (!sizes) {
      return std::move(sizes).error();
    }
    register_sizes_ = std::move(*sizes);
  }
  if (regno < 0 || static_cast<std::size_t>(regno) >= register_sizes_.size()) {
    return base::make_error(base::Errc::invalid, "no register " + std::to_string(regno));
  }
  std::size_t offset = 0;
  for (int i = 0; i < regno; ++i) {
    offset += register_sizes_[static_cast<std::size_t>(i)];
  }
  return std::make_pair(offset, register_sizes_[static_cast<std::size_t>(regno)]);
}

Result<Bytes> ValgrindTarget::read_registers(Tid tid) {
  if (auto ok = select_thread(tid); !ok) {
    return std::move(ok).error();
  }
  auto reply = ask("g");
  if (!reply) {
    return std::move(reply).error();
  }
  if (is_error(*reply)) {
    return stub_error("g", *reply);
  }
  return protocol::from_hex(*reply);
}

Result<void> ValgrindTarget::write_registers(Tid tid, const Bytes& regs) {
  if (auto ok = select_thread(tid); !ok) {
    return ok;
  }
  auto reply = ask("G" + protocol::to_hex(regs));
  if (!reply) {
    return std::move(reply).error();
  }
  return *reply == "OK" ? base::success() : Result<void>(stub_error("G", *reply));
}

Result<std::pair<Bytes, std::size_t>> ValgrindTarget::registers_around(Tid tid, int regno) {
  auto slot = register_slot(regno);
  if (!slot) {
    return std::move(slot).error();
  }
  auto all = read_registers(tid);
  if (!all) {
    return std::move(all).error();
  }
  if (all->size() < slot->first + slot->second) {
    return base::make_error(base::Errc::invalid, "register " + std::to_string(regno) + " not in the g packet");
  }
  return std::make_pair(std::move(*all), slot->first);
}

Result<Bytes> ValgrindTarget::read_register(Tid tid, int regno) {
  auto regs = registers_around(tid, regno);
  if (!regs) {
    return std::move(regs).error();
  }
  const auto at = regs->first.begin() + static_cast<std::ptrdiff_t>(regs->second);
  return Bytes(at, at + static_cast<std::ptrdiff_t>(register_sizes_[static_cast<std::size_t>(regno)]));
}

Result<void> ValgrindTarget::write_register(Tid tid, int regno, const Bytes& value) {
  auto regs = registers_around(tid, regno);
  if (!regs) {
    return std::move(regs).error();
  }
  if (value.size() != register_sizes_[static_cast<std::size_t>(regno)]) {
    return base::make_error(base::Errc::invalid, "register " + std::to_string(regno) + ": wrong size");
  }
  std::copy(value.begin(), value.end(), regs->first.begin() + static_cast<std::ptrdiff_t>(regs->second));
  return write_registers(tid, regs->first);
}

Result<Bytes> ValgrindTarget::read_memory(Addr addr, std::size_t len) {
  Bytes out;
  while (out.size() < len) {
    const std::size_t n = std::min(kMemoryChunk, len - out.size());
    auto reply = ask("m" + hex_u64(addr + out.size()) + "," + hex_u64(n));
    if (!reply) {
      return std::move(reply).error();
    }
    if (is_error(*reply)) {
      if (!out.empty()) {
        return out;  // as far as it could read
      }
      return base::make_error(base::Errc::invalid, "cannot read memory at 0x" + hex_u64(addr));
    }
    auto bytes = protocol::from_hex(*reply);
    if (!bytes) {
      return std::move(bytes).error();
    }
    out.insert(out.end(), bytes->begin(), bytes->end());
    if (bytes->size() < n) {
      break;
    }
  }
  return out;
}

Result<void> ValgrindTarget::write_memory(Addr addr, const Bytes& data) {
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min(kMemoryChunk, data.size() - done);
    std::span<const std::uint8_t> piece(data.data() + done, n);
    auto reply = ask("M" + hex_u64(addr + done) + "," + hex_u64(n) + ":" + protocol::to_hex(piece));
    if (!reply) {
      return std::move(reply).error();
    }
    if (*reply != "OK") {
      return base::make_error(base::Errc::invalid, "cannot write memory at 0x" + hex_u64(addr + done));
    }
    done += n;
  }
  return base::success();
}

Result<void> ValgrindTarget::set_breakpoint(bool insert, BreakpointType type, Addr addr, int len) {
  const std::string packet =
      std::string(1, insert ? 'Z' : 'z') + z_kind(type) + "," + hex_u64(addr) + "," + std::to_string(len);
  auto reply = ask(packet);
  if (!reply) {
    return std::move(reply).error();
  }
  if (*reply != "OK") {
    return stub_error(packet, *reply);
  }
  if (type == BreakpointType::Software) {
    if (insert) {
      breakpoints_.insert(addr);
    } else {
      breakpoints_.erase(addr);
    }
  }
  return base::success();
}

Result<void> ValgrindTarget::insert_breakpoint(BreakpointType type, Addr addr, int len) {
  return set_breakpoint(true, type, addr, len);
}

Result<void> ValgrindTarget::remove_breakpoint(BreakpointType type, Addr addr, int len) {
  return set_breakpoint(false, type, addr, len);
}

Result<Bytes> ValgrindTarget::auxv() {
  auto text = read_xfer("auxv", "");
  if (!text) {
    return std::move(text).error();
  }
  return Bytes(text->begin(), text->end());
}

Result<std::string> ValgrindTarget::exec_file(Pid) { return read_xfer("exec-file", ""); }

Result<LibraryList> ValgrindTarget::libraries() {
  auto aux = auxv();
  if (!aux) {
    return std::move(aux).error();
  }
  return svr4::read_libraries([this](Addr a, std::size_t n) { return read_memory(a, n); }, *aux);
}

Result<Bytes> ValgrindTarget::siginfo(Tid tid) {
  if (auto ok = select_thread(tid); !ok) {
    return std::move(ok).error();
  }
  auto text = read_xfer("siginfo", "");
  if (!text) {
    return std::move(text).error();
  }
  return Bytes(text->begin(), text->end());
}

Result<void> ValgrindTarget::write_siginfo(Tid, const Bytes&) {
  return base::make_error(base::Errc::unsupported, "Valgrind's gdbserver cannot write siginfo");
}

SignalAction ValgrindTarget::signal_action(Tid, int sig) {
  const std::string path = dir_ + "/" + HS_DBT_RING_PREFIX + std::to_string(pid_) + HS_DBT_SIGNALS_SUFFIX;
  auto bytes = procfs::read_file(path);
  hs_dbt_signals table{};
  if (!bytes || bytes->size() < sizeof table || sig < 1 || sig >= static_cast<int>(HS_DBT_SIGNALS_COUNT)) {
    return SignalAction::Unknown;
  }
  std::memcpy(&table, bytes->data(), sizeof table);
  if (table.magic != HS_DBT_SIGNALS_MAGIC) {
    return SignalAction::Unknown;
  }
  switch (table.action[sig]) {
    case HS_DBT_SIGNAL_DEFAULT: return SignalAction::Default;
    case HS_DBT_SIGNAL_IGNORE: return SignalAction::Ignore;
    case HS_DBT_SIGNAL_HANDLER: return SignalAction::Handler;
    default: return SignalAction::Unknown;
  }
}

Result<void> ValgrindTarget::enable_btrace(Tid tid, const BtraceConfig&) {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (tracers_.count(tid) != 0 && handed_over_.erase(tid) != 0) {
    tracers_[tid]->new_reader();
    return base::success();
  }
  if (tracers_.count(tid) != 0) {
    return base::make_error(base::Errc::invalid, "Btrace already enabled.");
  }
  // The recorder has recorded this thread since it began; GDB's history starts now.
  const std::string path = dir_ + "/" + HS_DBT_RING_PREFIX + std::to_string(pid_) + "." + std::to_string(tid);
  auto ring = DbtRing::open(path);
  if (!ring) {
    return base::make_error(base::Errc::unsupported, "no history from the dbt recorder for thread " +
                                                         std::to_string(tid) + ": " + ring.error().message());
  }
  if (tracers_.empty()) {
    recording_threads_.clear();  // recording starts now: who is there already
    for (const auto& t : threads()) {
      recording_threads_.insert(t.tid);
    }
  }
  const bool born_since = recording_threads_.count(tid) == 0;
  tracers_[tid] = std::make_unique<DbtTracer>(std::move(ring).value(), born_since);
  return base::success();
}

Result<void> ValgrindTarget::disable_btrace(Tid tid) {
  if (tracers_.erase(tid) == 0) {
    return base::make_error(base::Errc::invalid, "Btrace not enabled.");
  }
  return base::success();
}

std::vector<ValgrindTarget::ThreadLife> ValgrindTarget::thread_lives() const {
  std::vector<ThreadLife> out;
  for (const auto& path : dbt_ring_paths(dir_, pid_)) {
    if (auto ring = DbtRing::open(path)) {
      out.push_back(ThreadLife{ring->tid(), ring->born_ns(), ring->exited_ns()});
    }
  }
  return out;
}

void ValgrindTarget::hand_over_history() {
  for (const auto& [tid, tracer] : tracers_) {
    handed_over_.insert(tid);
  }
}

std::vector<std::pair<Tid, BranchTracer*>> ValgrindTarget::ended_histories(Pid pid) {
  std::vector<std::pair<Tid, BranchTracer*>> out;
  if (auto it = ended_.find(pid); it != ended_.end()) {
    for (const auto& [tid, tracer] : it->second) {
      out.emplace_back(tid, tracer.get());
    }
  }
  return out;
}

BranchTracer* ValgrindTarget::branch_tracer(Tid tid) {
  auto it = tracers_.find(tid);
  return it != tracers_.end() ? it->second.get() : nullptr;
}

}  // namespace tracer
