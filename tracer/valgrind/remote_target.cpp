#include "tracer/valgrind/remote_target.hpp"

#include <csignal>

#include "arch/x86/register_layout.hpp"
#include "arch/x86/target_description.hpp"
#include "protocol/hex.hpp"
#include "protocol/request_encoding.hpp"
#include "protocol/signals.hpp"
#include "protocol/thread_id.hpp"
#include "tracer/linux/svr4_libraries.hpp"
#include "tracer/valgrind/stub_replies.hpp"

namespace tracer {
namespace {

// A reply that is an error (Enn) or unsupported (empty), as an Error.
base::Error stub_error(const std::string& packet, const std::string& reply) {
  if (reply.empty()) {
    return base::make_error(base::Errc::unsupported, "the stub does not support " + packet);
  }
  return base::make_error(base::Errc::invalid, "the stub answered " + reply + " to " + packet);
}

bool is_error(const std::string& reply) { return reply.empty() || (reply.size() == 3 && reply[0] == 'E'); }

// Largest memory block one m/M packet carries (Valgrind's PacketSize is 0x3fff, two hex digits
// a byte).
constexpr std::size_t kMemoryChunk = 0x1000;

protocol::ThreadId wire(Tid tid) { return protocol::ThreadId{0, static_cast<std::int64_t>(tid)}; }

}  // namespace

Result<StopEvent> RemoteTarget::connect(RspLink link, Pid pid) {
  link_.emplace(std::move(link));
  pid_ = pid;
  running_ = false;
  auto first = ask("?");
  if (!first || !first->starts_with("T")) {
    return base::make_error(base::Errc::system, "the program did not stop");
  }
  if (auto ok = read_description(); !ok) {
    return std::move(ok).error();
  }
  StopEvent stop = stop_from_reply(*first);
  selected_ = stop.tid;
  return stop;
}

void RemoteTarget::disconnect() {
  link_.reset();  // the stub goes with its input
  running_ = false;
  breakpoints_.clear();
}

Result<void> RemoteTarget::check_stopped() const {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (running_) {
    return base::make_error(base::Errc::invalid, "the program is running");
  }
  return base::success();
}

Result<std::string> RemoteTarget::ask(const std::string& packet) {
  if (auto ok = check_stopped(); !ok) {
    return std::move(ok).error();
  }
  return link_->request(packet, std::chrono::seconds(30));
}

std::vector<ThreadInfo> RemoteTarget::threads() {
  std::vector<ThreadInfo> out;
  for (auto reply = ask("qfThreadInfo"); reply && reply->starts_with("m"); reply = ask("qsThreadInfo")) {
    std::string_view list = std::string_view(*reply).substr(1);
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      auto parsed = protocol::parse_thread_id(list.substr(0, comma));
      if (!parsed || parsed->tid <= 0) {
        break;  // not a thread id: the list ends here
      }
      ThreadInfo t;
      t.pid = pid_;
      t.tid = static_cast<Tid>(parsed->tid);
      out.push_back(t);
      if (comma == std::string_view::npos) {
        break;
      }
      list.remove_prefix(comma + 1);
    }
  }
  return out;
}

bool RemoteTarget::thread_alive(Tid tid) {
  auto reply = ask(protocol::encode_thread_alive(wire(tid)));
  return reply && *reply == "OK";
}

Result<void> RemoteTarget::select_thread(Tid tid) {
  if (tid == selected_) {
    return base::success();
  }
  auto reply = ask(protocol::encode_set_thread({'g', wire(tid)}));
  if (!reply || *reply != "OK") {
    return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
  }
  selected_ = tid;
  return base::success();
}

Result<void> RemoteTarget::resume(const ResumePlan& plan) {
  if (!link_) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  // No vCont: one thread may step (Hc), or all continue; a signal goes to the thread that takes it.
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
  const int sig = chosen != nullptr ? chosen->signal : 0;
  if (chosen != nullptr && chosen->tid != kAllThreads) {
    auto reply = ask(protocol::encode_set_thread({'c', wire(chosen->tid)}));
    if (!reply || *reply != "OK") {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(chosen->tid));
    }
  }
  const protocol::LegacyResume how{sig != 0 ? protocol::gdb_signal_from_host(sig) : 0, std::nullopt};
  if (auto sent = link_->send(protocol::encode_legacy_resume(step != nullptr ? 's' : 'c', how)); !sent) {
    return sent;
  }
  running_ = true;
  stepping_ = step != nullptr;
  return base::success();
}

Result<void> RemoteTarget::interrupt() {
  if (!link_ || !running_) {
    return base::success();
  }
  return link_->interrupt();
}

std::optional<StopEvent> RemoteTarget::poll() {
  if (!link_ || !running_) {
    return std::nullopt;
  }
  for (;;) {
    auto packet = link_->take_packet();
    if (!packet) {
      return link_->closed() ? ended_unannounced() : std::nullopt;
    }
    if (packet->starts_with("O") && packet->size() > 1) {
      continue;  // the stub's console output: not the program's stop
    }
    running_ = false;
    StopEvent ev = stop_from_reply(*packet);
    stopped(ev);
    if (ev.reason == StopReason::Exited || ev.reason == StopReason::Killed) {
      const Pid pid = pid_;
      process_ended();
      ev.pid = ev.tid = pid;
    }
    return ev;
  }
}

StopEvent RemoteTarget::stop_from_reply(const std::string& reply) {
  auto stop = valgrind::parse_stop_reply(reply, pid_, selected_, isa_);
  if (stop.thread) {
    selected_ = *stop.thread;  // the stub makes the stopped thread the current one
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

Result<void> RemoteTarget::set_catch_syscalls(const SyscallCatch& what) {
  const std::string packet = protocol::encode_catch_syscalls({what.enabled, what.numbers});
  auto reply = ask(packet);
  if (!reply) {
    return std::move(reply).error();
  }
  if (*reply != "OK") {
    return base::make_error(base::Errc::unsupported, "the stub answered " + packet + " with '" + *reply + "'");
  }
  return base::success();
}

Result<Addr> RemoteTarget::tls_address(Tid tid, Addr offset, Addr link_map) {
  auto reply = ask(protocol::encode_tls_address({wire(tid), offset, link_map}));
  if (!reply) {
    return std::move(reply).error();
  }
  if (reply->empty()) {
    return base::make_error(base::Errc::unsupported, "the stub does not know qGetTLSAddr");
  }
  auto address = protocol::parse_hex_u64(*reply);
  if (reply->front() == 'E' || !address) {
    return base::make_error(base::Errc::invalid, "the stub found no thread-local storage there ('" + *reply + "')");
  }
  return *address;
}

Result<std::string> RemoteTarget::read_xfer(const std::string& object, const std::string& annex) {
  if (auto ok = check_stopped(); !ok) {
    return std::move(ok).error();
  }
  return link_->read_xfer(object, annex);
}

Result<std::string> RemoteTarget::target_description(const std::string& annex) {
  if (!own_description_.empty()) {
    if (annex != "target.xml") {
      return base::make_error(base::Errc::invalid, "no target description " + annex);
    }
    return own_description_;
  }
  return read_xfer("features", annex);
}

Result<void> RemoteTarget::read_description() {
  own_description_.clear();
  auto top = target_description("target.xml");
  if (!top && top.error().code == base::Errc::unsupported && program_isa() == arch::x86::Isa::I386) {
    // The stub sends `g` in GDB's default i386 Linux layout: the FXSAVE-era registers.
    const arch::x86::RegisterLayout layout(arch::x86::XsaveGeometry{}, arch::x86::Isa::I386);
    isa_ = arch::x86::Isa::I386;
    own_description_ = arch::x86::target_xml(layout);
    register_sizes_.clear();
    for (const auto& r : layout.registers()) {
      register_sizes_.push_back(r.size);
    }
    return base::success();
  }
  if (!top) {
    return std::move(top).error();
  }
  isa_ = valgrind::description_isa(*top);
  // Registers in `g` come in the order the description lists them, features included.
  auto sizes = valgrind::register_sizes(
      [&](const std::string& annex) { return annex == "target.xml" ? top : target_description(annex); });
  if (!sizes) {
    return std::move(sizes).error();
  }
  register_sizes_ = std::move(*sizes);
  return base::success();
}

Result<std::pair<std::size_t, std::size_t>> RemoteTarget::register_slot(int regno) {
  if (register_sizes_.empty()) {
    if (auto ok = read_description(); !ok) {
      return std::move(ok).error();
    }
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

Result<Bytes> RemoteTarget::read_registers(Tid tid) {
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

Result<void> RemoteTarget::write_registers(Tid tid, const Bytes& regs) {
  if (auto ok = select_thread(tid); !ok) {
    return ok;
  }
  auto reply = ask("G" + protocol::to_hex(regs));
  if (!reply) {
    return std::move(reply).error();
  }
  return *reply == "OK" ? base::success() : Result<void>(stub_error("G", *reply));
}

Result<std::pair<Bytes, std::size_t>> RemoteTarget::registers_around(Tid tid, int regno) {
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

Result<Bytes> RemoteTarget::read_register(Tid tid, int regno) {
  auto regs = registers_around(tid, regno);
  if (!regs) {
    return std::move(regs).error();
  }
  const auto at = regs->first.begin() + static_cast<std::ptrdiff_t>(regs->second);
  return Bytes(at, at + static_cast<std::ptrdiff_t>(register_sizes_[static_cast<std::size_t>(regno)]));
}

Result<void> RemoteTarget::write_register(Tid tid, int regno, const Bytes& value) {
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

Result<Bytes> RemoteTarget::read_memory(Addr addr, std::size_t len) {
  Bytes out;
  while (out.size() < len) {
    const std::size_t n = std::min(kMemoryChunk, len - out.size());
    auto reply = ask(protocol::encode_read_mem({addr + out.size(), n}));
    if (!reply) {
      return std::move(reply).error();
    }
    if (is_error(*reply)) {
      if (!out.empty()) {
        return out;  // as far as it could read
      }
      return base::make_error(base::Errc::invalid, "cannot read memory at 0x" + protocol::hex_u64(addr));
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

Result<void> RemoteTarget::write_memory(Addr addr, const Bytes& data) {
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min(kMemoryChunk, data.size() - done);
    const auto piece = data.begin() + static_cast<std::ptrdiff_t>(done);
    auto reply = ask(protocol::encode_write_mem_hex({addr + done, Bytes(piece, piece + static_cast<std::ptrdiff_t>(n))}));
    if (!reply) {
      return std::move(reply).error();
    }
    if (*reply != "OK") {
      return base::make_error(base::Errc::invalid, "cannot write memory at 0x" + protocol::hex_u64(addr + done));
    }
    done += n;
  }
  return base::success();
}

Result<void> RemoteTarget::set_breakpoint(bool insert, BreakpointType type, Addr addr, int len) {
  const std::string packet =
      protocol::encode_breakpoint({.type = static_cast<int>(type), .addr = addr, .kind = len}, insert);
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

Result<void> RemoteTarget::insert_breakpoint(BreakpointType type, Addr addr, int len) {
  return set_breakpoint(true, type, addr, len);
}

Result<void> RemoteTarget::remove_breakpoint(BreakpointType type, Addr addr, int len) {
  return set_breakpoint(false, type, addr, len);
}

Result<Bytes> RemoteTarget::auxv() {
  auto text = read_xfer("auxv", "");
  if (!text) {
    return std::move(text).error();
  }
  return Bytes(text->begin(), text->end());
}

Result<std::string> RemoteTarget::exec_file(Pid) { return read_xfer("exec-file", ""); }

Result<LibraryList> RemoteTarget::libraries() {
  auto aux = auxv();
  if (!aux) {
    return std::move(aux).error();
  }
  return svr4::read_libraries([this](Addr a, std::size_t n) { return read_memory(a, n); }, *aux);
}

Result<Bytes> RemoteTarget::siginfo(Tid tid) {
  if (auto ok = select_thread(tid); !ok) {
    return std::move(ok).error();
  }
  auto text = read_xfer("siginfo", "");
  if (!text) {
    return std::move(text).error();
  }
  return Bytes(text->begin(), text->end());
}

Result<void> RemoteTarget::write_siginfo(Tid, const Bytes&) {
  return base::make_error(base::Errc::unsupported, "the stub cannot write siginfo");
}

}  // namespace tracer
