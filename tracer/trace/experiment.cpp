#include "tracer/trace/experiment.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>

#include <fmt/format.h>

namespace tracer::trace {
namespace {

// GDB's builtin $trace_timestamp: the target says the time, in µs.
constexpr std::string_view kTimestampVariable = "trace_timestamp";

// The thread as an agent machine that records what trace ops collect into a frame and keeps
// the experiment's state variables.
class Collecting final : public agent::Machine {
 public:
  Collecting(Thread& thread, Frame& frame, std::map<std::uint32_t, Variable>& variables, std::uint64_t now)
      : thread_(thread), frame_(frame), variables_(variables), now_(now) {}

  Result<std::uint64_t> reg(int regno) override { return thread_.reg(regno); }
  Result<std::uint64_t> read(Addr addr, std::size_t len) override { return thread_.read(addr, len); }
  void print(std::string_view text) override { thread_.print(text); }

  // Memory that cannot be read is not collected: it stays unavailable in the frame.
  Result<void> collect(Addr addr, std::size_t len) override {
    while (len > 0) {
      const std::size_t piece = std::min(len, kMaxMemoryBlock);
      auto bytes = thread_.read_memory(addr, piece);
      if (!bytes || bytes->empty()) {
        break;
      }
      const std::size_t got = bytes->size();
      frame_.memory.push_back({addr, std::move(*bytes)});
      if (got < piece) {
        break;
      }
      addr += got;
      len -= got;
    }
    return base::success();
  }
  Result<void> collect_string(Addr addr, std::size_t limit) override {
    auto bytes = thread_.read_memory(addr, std::min(limit, kMaxMemoryBlock));
    if (bytes && !bytes->empty()) {
      if (auto nul = std::find(bytes->begin(), bytes->end(), 0); nul != bytes->end()) {
        bytes->erase(nul + 1, bytes->end());
      }
      frame_.memory.push_back({addr, std::move(*bytes)});
    }
    return base::success();
  }
  Result<std::int64_t> variable(std::uint32_t number) override {
    auto it = variables_.find(number);
    if (it == variables_.end()) {
      return base::make_error(base::Errc::invalid, "not defined");
    }
    return it->second.builtin && it->second.name == kTimestampVariable ? static_cast<std::int64_t>(now_)
                                                                       : it->second.value;
  }
  Result<void> set_variable(std::uint32_t number, std::int64_t value) override {
    auto it = variables_.find(number);
    if (it == variables_.end()) {
      return base::make_error(base::Errc::invalid, "not defined");
    }
    it->second.value = value;
    return base::success();
  }
  Result<void> collect_variable(std::uint32_t number) override {
    auto value = variable(number);
    if (!value) {
      return std::move(value).error();
    }
    frame_.variables.emplace_back(number, *value);
    return base::success();
  }

 private:
  Thread& thread_;
  Frame& frame_;
  std::map<std::uint32_t, Variable>& variables_;
  std::uint64_t now_;
};

}  // namespace

Result<void> run_actions(const std::vector<Action>& actions, agent::Machine& machine,
                         const std::function<void()>& collect_registers) {
  for (const Action& a : actions) {
    switch (a.kind) {
      case Action::Kind::Registers:
        collect_registers();
        break;
      case Action::Kind::Memory: {
        Addr addr = a.offset;
        if (a.base_register >= 0) {
          auto base = machine.reg(a.base_register);
          if (!base) {
            break;  // (its memory stays unavailable)
          }
          addr += *base;
        }
        (void)machine.collect(addr, a.length);
        break;
      }
      case Action::Kind::Expression:
        if (auto done = agent::execute(a.bytecode, machine); !done) {
          return done;
        }
        break;
    }
  }
  return base::success();
}

std::uint64_t timestamp_now() {
  using namespace std::chrono;
  return static_cast<std::uint64_t>(duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count());
}

Experiment::Experiment() {
  variables_[1] = Variable{.number = 1, .name = std::string(kTimestampVariable), .builtin = true};
}

void Experiment::clear() {
  running_ = false;
  ever_ran_ = false;
  stop_reason_ = StopReason::NotRun;
  stopping_tracepoint_ = 0;
  error_text_.clear();
  tracepoints_.clear();
  std::erase_if(variables_, [](const auto& entry) { return !entry.second.builtin; });
  buffer_.clear();
}

Result<void> Experiment::define(Tracepoint tp) {
  if (find(tp.number, tp.address) != nullptr) {
    return base::make_error(base::Errc::invalid,
                            fmt::format("tracepoint {} at {:#x} is already defined", tp.number, tp.address));
  }
  if (tp.condition) {
    if (auto ok = agent::validate(*tp.condition); !ok) {
      return ok;
    }
  }
  tracepoints_.push_back(std::move(tp));
  return base::success();
}

Result<void> Experiment::add_actions(Tracepoint& tp, std::vector<Action> actions, bool while_stepping) {
  for (const Action& a : actions) {
    if (a.kind == Action::Kind::Expression) {
      if (auto ok = agent::validate(a.bytecode); !ok) {
        return ok;
      }
    }
  }
  std::vector<Action>& to = while_stepping ? tp.step_actions : tp.actions;
  to.insert(to.end(), std::make_move_iterator(actions.begin()), std::make_move_iterator(actions.end()));
  return base::success();
}

Tracepoint* Experiment::find(std::uint32_t number, Addr address) {
  auto it = std::find_if(tracepoints_.begin(), tracepoints_.end(),
                         [&](const Tracepoint& tp) { return tp.number == number && tp.address == address; });
  return it == tracepoints_.end() ? nullptr : &*it;
}

void Experiment::define_variable(Variable v) {
  v.value = v.initial_value;
  variables_[v.number] = std::move(v);
}

std::optional<std::int64_t> Experiment::variable_value(std::uint32_t number) const {
  auto it = variables_.find(number);
  if (it == variables_.end() || (!running_ && !ever_ran_)) {
    return std::nullopt;
  }
  const Variable& v = it->second;
  return v.builtin && v.name == kTimestampVariable ? static_cast<std::int64_t>(timestamp_now()) : v.value;
}

void Experiment::start(std::uint64_t now) {
  for (Tracepoint& tp : tracepoints_) {
    tp.hits = 0;
    tp.frame_bytes = 0;
  }
  for (auto& [number, v] : variables_) {
    v.value = v.initial_value;
  }
  buffer_.clear();
  running_ = true;
  ever_ran_ = true;
  stop_reason_ = StopReason::NotRun;
  stopping_tracepoint_ = 0;
  error_text_.clear();
  start_time_ = now;
  stop_time_ = 0;
}

void Experiment::stop(StopReason reason, std::uint64_t now, std::uint32_t tracepoint) {
  if (!running_) {
    return;
  }
  running_ = false;
  stop_reason_ = reason;
  stopping_tracepoint_ = tracepoint;
  stop_time_ = now;
}

void Experiment::fail(std::string why, std::uint64_t now, std::uint32_t tracepoint) {
  if (running_) {
    error_text_ = std::move(why);
    stop(StopReason::Error, now, tracepoint);
  }
}

std::vector<Addr> Experiment::sites() const {
  std::vector<Addr> out;
  if (!running_) {
    return out;
  }
  for (const Tracepoint& tp : tracepoints_) {
    if (tp.enabled && std::find(out.begin(), out.end(), tp.address) == out.end()) {
      out.push_back(tp.address);
    }
  }
  return out;
}

bool Experiment::collect(Tracepoint& tp, const std::vector<Action>& actions, Addr pc, Thread& thread,
                         std::uint64_t now) {
  Frame frame{.tracepoint = tp.number, .pc = pc};
  Collecting machine(thread, frame, variables_, now);
  auto done = run_actions(actions, machine, [&] {
    if (auto regs = thread.registers(); regs) {
      frame.registers = std::move(*regs);
    }
  });
  if (!done) {
    fail(done.error().message(), now, tp.number);
    return false;
  }
  return keep(tp, std::move(frame), now);
}

bool Experiment::keep(Tracepoint& tp, Frame frame, std::uint64_t now) {
  const std::size_t size = frame.size();
  if (!buffer_.add(std::move(frame))) {
    stop(StopReason::BufferFull, now);
    return false;
  }
  tp.frame_bytes += size;
  return true;
}

bool Experiment::add_hit(std::uint32_t number, Addr address, Frame frame, std::uint64_t now) {
  Tracepoint* tp = find(number, address);
  if (!running_ || tp == nullptr) {
    return running_;
  }
  ++tp->hits;
  frame.tracepoint = number;
  if (keep(*tp, std::move(frame), now) && tp->pass_count > 0 && tp->hits >= tp->pass_count) {
    stop(StopReason::PassCount, now, number);
  }
  return running_;
}

HitOutcome Experiment::hit(Addr address, Thread& thread, std::uint64_t now) {
  HitOutcome out;
  for (Tracepoint& tp : tracepoints_) {
    if (!running_) {
      break;
    }
    if (!tp.enabled || tp.address != address) {
      continue;
    }
    if (tp.condition) {
      Frame scratch;
      Collecting machine(thread, scratch, variables_, now);
      auto value = agent::evaluate(*tp.condition, machine);
      if (!value) {
        fail(value.error().message(), now, tp.number);
        break;
      }
      if (*value == 0) {
        continue;
      }
    }
    ++tp.hits;
    if (!collect(tp, tp.actions, address, thread, now)) {
      break;
    }
    if (tp.step_count > 0) {
      out.stepping_tracepoint = tp.number;
      out.steps = tp.step_count;
    } else if (tp.pass_count > 0 && tp.hits >= tp.pass_count) {
      stop(StopReason::PassCount, now, tp.number);
    }
  }
  out.stop_run = !running_;
  if (out.stop_run) {
    out.steps = 0;
  }
  return out;
}

bool Experiment::step(std::uint32_t number, Addr address, std::uint64_t step, Addr pc, Thread& thread,
                      std::uint64_t now) {
  Tracepoint* tp = find(number, address);
  if (!running_ || tp == nullptr) {
    return !running_;
  }
  if (!collect(*tp, tp->step_actions, pc, thread, now)) {
    return true;
  }
  if (step >= tp->step_count && tp->pass_count > 0 && tp->hits >= tp->pass_count) {
    stop(StopReason::PassCount, now, tp->number);
  }
  return !running_;
}

}  // namespace tracer::trace
