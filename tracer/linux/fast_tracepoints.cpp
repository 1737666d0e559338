// Fast tracepoints on Linux, with the in-process agent (tracer/inprocess/): a tracepoint GDB
// defined with `ftrace` whose collection the agent can do alone gets a 5-byte jump to a pad
// (arch/x86/jump_pad.hpp) in place of its instruction, and hits collect in the program's own
// thread, without a stop. The agent's frames come into the experiment whenever it is read, at
// the next trap tracepoint's hit, and when the agent calls for the server (its ring full, a
// pass count reached, an error) at the int3 kept on its notify function. What the agent
// cannot collect alone, or where no jump can stand, stays a trap tracepoint.
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "arch/x86/jump_pad.hpp"
#include "arch/x86/raw_registers.hpp"
#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/symbols/symbolizer.hpp"

namespace tracer {
namespace {

namespace ax = arch::x86;

constexpr int kHighestSavedRegister = 23;  // gs: the pad saves the general registers and segments

bool agent_can_run(std::span<const std::uint8_t> code) {
  const agent::Usage u = agent::usage(code);
  return !u.state_variables && !u.printf && u.highest_register <= kHighestSavedRegister;
}

// The agent can collect tp alone: no while-stepping, no state variables, registers it saves.
bool agent_can_collect(const trace::Tracepoint& tp) {
  if (!tp.fast_length || !tp.enabled || tp.step_count != 0 || (tp.condition && !agent_can_run(*tp.condition))) {
    return false;
  }
  for (const trace::Action& a : tp.actions) {
    if ((a.kind == trace::Action::Kind::Memory && a.base_register > kHighestSavedRegister) ||
        (a.kind == trace::Action::Kind::Expression && !agent_can_run(a.bytecode))) {
      return false;
    }
  }
  return true;
}

template <class T>
Result<T> read_value(CodeMemory& code, Addr addr) {
  auto bytes = code.read_raw(addr, sizeof(T));
  if (!bytes) {
    return std::move(bytes).error();
  }
  if (bytes->size() != sizeof(T)) {
    return base::make_error(base::Errc::invalid, "the agent's control block cannot be read");
  }
  T v;
  std::memcpy(&v, bytes->data(), sizeof v);
  return v;
}

template <class T>
Result<void> write_value(CodeMemory& code, Addr addr, const T& v) {
  Bytes bytes(sizeof v);
  std::memcpy(bytes.data(), &v, sizeof v);
  return code.write_slot(addr, bytes);
}

#define FIELD(name) offsetof(trace::AgentControl, name)

bool all_stopped(const Process& p) {
  for (const auto& [tid, t] : p.threads) {
    if (!t.stopped()) {
      return false;
    }
  }
  return true;
}

}  // namespace

Addr LinuxTarget::find_agent(Process& p) {
  if (agent_.pid == p.pid && agent_.control != 0) {
    auto magic = read_value<std::uint64_t>(p.code, agent_.control + FIELD(magic));
    if (magic && *magic == trace::kAgentMagic) {
      return agent_.control;
    }
    agent_ = AgentLink{};  // (the program was replaced)
  }
  if (p.isa != ax::Isa::Amd64) {
    return 0;  // (fast tracepoints are 64-bit only)
  }
  auto symbols = Symbolizer::for_process(p.pid);
  if (!symbols) {
    return 0;
  }
  auto found = (*symbols)->find_symbol("libhindsight-agent", trace::kAgentSymbol);
  if (!found) {
    return 0;
  }
  auto control = read_value<trace::AgentControl>(p.code, *found);
  if (!control || control->magic != trace::kAgentMagic || control->version != trace::kAgentVersion ||
      control->collector == 0) {
    base::logf(base::LogCat::ptrace, "process {}: {} at {:#x} is not an agent this server knows", p.pid,
               trace::kAgentSymbol, *found);
    return 0;
  }
  if (agent_.collecting && agent_.pid != p.pid) {
    return *found;  // (another process's run has the link: this one is only asked about)
  }
  agent_ = AgentLink{};
  agent_.pid = p.pid;
  agent_.control = *found;
  agent_.seen = *control;
  agent_.next_pad = control->pads;
  base::logf(base::LogCat::ptrace, "process {}: in-process agent at {:#x}, pads at {:#x}", p.pid, *found,
             control->pads);
  return *found;
}

std::optional<std::uint32_t> LinuxTarget::fast_tracepoint_min_length() {
  Process* p = process(current_);
  return p != nullptr && find_agent(*p) != 0 ? ax::kJumpLength : 0;
}

void LinuxTarget::place_fast_tracepoints(Process& p) {
  agent_.jumps.clear();
  agent_.indices.clear();
  if (!experiment_.use_agent) {
    base::logf(base::LogCat::ptrace, "process {}: no fast tracepoints (`set agent off`)", p.pid);
    return;
  }
  if (find_agent(p) == 0 || agent_.seen.pads == 0 || !all_stopped(p)) {
    base::logf(base::LogCat::ptrace, "process {}: no fast tracepoints (agent {:#x}, pads {:#x}, all stopped: {})", p.pid,
               agent_.control, agent_.seen.pads, all_stopped(p));
    return;
  }
  // Those the agent collects alone, each alone at its address.
  std::vector<const trace::Tracepoint*> fast;
  for (const trace::Tracepoint& tp : experiment_.tracepoints()) {
    if (!agent_can_collect(tp)) {
      continue;
    }
    const bool shared = std::count_if(experiment_.tracepoints().begin(), experiment_.tracepoints().end(),
                                      [&](const trace::Tracepoint& o) { return o.enabled && o.address == tp.address; }) > 1;
    if (!shared && !p.code.occupied(tp.address, ax::kJumpLength)) {
      fast.push_back(&tp);
    }
  }
  if (fast.empty()) {
    return;
  }
  const Addr ctl = agent_.control;
  const Bytes definitions = trace::encode_agent_tracepoints(fast);
  auto head = read_value<std::uint64_t>(p.code, ctl + FIELD(head));
  if (definitions.size() > agent_.seen.definitions_size || !head ||
      !p.code.write_slot(agent_.seen.definitions, definitions)) {
    return;
  }
  agent_.generation = agent_.generation + 1;
  (void)write_value(p.code, ctl + FIELD(generation), agent_.generation);
  (void)write_value(p.code, ctl + FIELD(tail), *head);  // frames of an earlier run are dropped
  (void)write_value(p.code, ctl + FIELD(ended_by), std::uint32_t{0});
  for (std::size_t i = 0; i < fast.size(); ++i) {
    const trace::Tracepoint& tp = *fast[i];
    agent_.indices.emplace_back(tp.number, tp.address);
    auto code = p.code.read(tp.address, 16);
    if (!code) {
      continue;
    }
    const Addr at = (agent_.next_pad + 15) & ~Addr{15};
    auto pad = ax::amd64_jump_pad({.tracepoint = tp.address, .code = *code, .pad = at, .index = i,
                                   .collector = agent_.seen.collector, .save_area = agent_.seen.save_area,
                                   .save_mask = agent_.seen.save_mask,
                                   .xsaveopt = (agent_.seen.flags & trace::kAgentXsaveopt) != 0});
    if (!pad || at + pad->pad.size() > agent_.seen.pads + agent_.seen.pads_size) {
      base::logf(base::LogCat::ptrace, "tracepoint {} at {:#x}: no jump can stand there; an int3", tp.number,
                 tp.address);
      continue;
    }
    if (!p.code.write_slot(at, Bytes(pad->pad.begin(), pad->pad.end())) ||
        !p.code.place_jump(tp.address, Bytes(pad->jump.begin(), pad->jump.end()), SiteOwner::Tracepoint)) {
      continue;
    }
    agent_.next_pad = at + pad->pad.size();
    agent_.jumps.insert(tp.address);
  }
  agent_.collecting = true;
  (void)write_value(p.code, ctl + FIELD(collecting), std::uint32_t{1});
  base::logf(base::LogCat::ptrace, "process {}: {} fast tracepoints", p.pid, agent_.jumps.size());
}

void LinuxTarget::retire_jumps(Process& p) {
  std::erase_if(agent_.jumps, [&](Addr addr) { return !p.code.has_jump(addr); });
  if (agent_.jumps.empty() || !all_stopped(p)) {
    return;
  }
  const auto& tps = experiment_.tracepoints();
  std::erase_if(agent_.jumps, [&](Addr addr) {
    const auto enabled_here = std::count_if(tps.begin(), tps.end(), [&](const trace::Tracepoint& tp) {
      return tp.enabled && tp.address == addr;
    });
    const bool own_enabled = std::any_of(agent_.indices.begin(), agent_.indices.end(), [&](const auto& entry) {
      const trace::Tracepoint* tp = experiment_.find(entry.first, entry.second);
      return entry.second == addr && tp != nullptr && tp->enabled;
    });
    if (enabled_here == 1 && own_enabled) {
      return false;  // (its own: the one the agent collects)
    }
    base::logf(base::LogCat::ptrace, "the jump at {:#x} comes out: {} enabled tracepoints there", addr, enabled_here);
    return p.code.remove_jump(addr).ok();
  });
}

void LinuxTarget::remove_fast_tracepoints(Process& p) {
  if (!agent_.collecting || p.pid != agent_.pid) {
    return;
  }
  (void)write_value(p.code, agent_.control + FIELD(collecting), std::uint32_t{0});
  if (!all_stopped(p)) {
    return;  // (the pads skip collection meanwhile; the jumps come out at a later call)
  }
  for (Addr addr : agent_.jumps) {
    if (auto removed = p.code.remove_jump(addr); !removed) {
      base::logf(base::LogCat::ptrace, "removing the jump at {:#x}: {}", addr, removed.error().message());
    }
  }
  agent_.jumps.clear();
  agent_.collecting = false;
}

void LinuxTarget::take_agent_frames() {
  Process* p = agent_.collecting ? process(agent_.pid) : nullptr;
  if (p == nullptr) {
    return;
  }
  auto ctl = read_value<trace::AgentControl>(p->code, agent_.control);
  if (!ctl) {
    return;
  }
  const std::uint64_t size = agent_.seen.ring_size;
  if (ctl->head != ctl->tail && experiment_.running()) {
    // The ring's bytes [tail, head), at their offsets (in two pieces when they wrap).
    Bytes ring(size);
    bool read_all = true;
    for (std::uint64_t at = ctl->tail; at < ctl->head && read_all;) {
      const std::uint64_t offset = at % size;
      const std::uint64_t piece = std::min(ctl->head - at, size - offset);
      auto bytes = p->code.read_raw(agent_.seen.ring + offset, piece);
      read_all = bytes && bytes->size() == piece;
      if (read_all) {
        std::copy(bytes->begin(), bytes->end(), ring.begin() + static_cast<std::ptrdiff_t>(offset));
      }
      at += piece;
    }
    auto records = read_all ? trace::read_records(ring, ctl->tail, ctl->head)
                            : Result<std::vector<trace::AgentRecord>>(base::make_error(base::Errc::invalid, "unreadable"));
    const std::uint64_t now = trace::timestamp_now();
    if (!records) {
      experiment_.fail("the in-process agent's frames cannot be read: " + records.error().message(), now, 0);
      records = std::vector<trace::AgentRecord>{};
    }
    const ax::RegisterLayout& layout = host_register_layout(ax::Isa::Amd64);
    for (trace::AgentRecord& rec : *records) {
      if (rec.generation != static_cast<std::uint32_t>(agent_.generation) || rec.index >= agent_.indices.size()) {
        continue;
      }
      const auto [number, address] = agent_.indices[rec.index];
      trace::Frame frame{.pc = rec.pc};
      if (!rec.gpr.empty()) {
        ax::RawRegisters raw;
        std::copy(rec.gpr.begin(), rec.gpr.end(), raw.gpr.begin());
        raw.xsave = std::move(rec.save_area);
        raw.xsave.resize(std::max<std::size_t>(raw.xsave.size(), layout.geometry().size), 0);
        frame.registers = ax::to_g_packet(layout, raw);
      }
      frame.memory = std::move(rec.memory);
      if (!experiment_.add_hit(number, address, std::move(frame), now)) {
        break;
      }
    }
  }
  (void)write_value(p->code, agent_.control + FIELD(tail), ctl->head);
  if (ctl->ended_by == static_cast<std::uint32_t>(trace::AgentEnd::Error)) {
    ctl->error[sizeof ctl->error - 1] = 0;
    experiment_.fail(ctl->error, trace::timestamp_now(), ctl->ended_tracepoint);
  }
  if (!experiment_.running()) {
    (void)place_tracepoints();
  }
}

}  // namespace tracer
