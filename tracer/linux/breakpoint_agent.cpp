// Target-side breakpoint conditions (ConditionalBreakpoints+) and commands
// (BreakpointCommands+): GDB's agent expressions for a breakpoint, checked when they arrive and
// run at each hit against the stopped thread. A hit none of whose conditions holds is not
// reported: the thread steps over the int3 and goes on, and GDB never hears of it (no round
// trip). A condition whose evaluation faults stops, so that the user sees where and why
// rather than a breakpoint that silently never fires. A hit whose conditions hold runs the
// commands instead of stopping (an agent-style dprintf prints on our standard output, as
// gdbserver's does); a command that faults is said on standard error and the program goes on.
#include <unistd.h>

#include <cstdio>

#include "base/log.hpp"
#include "tracer/agent/bytecode.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/thread_machine.hpp"

namespace tracer {
namespace {

// Checks every expression, then sets (or, if there are none, drops) them for addr in table.
Result<void> set_expressions(Process* p, std::map<Addr, std::vector<Bytes>> Process::*table, Addr addr,
                             const std::vector<Bytes>& expressions) {
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  for (const Bytes& code : expressions) {
    if (auto ok = agent::validate(code); !ok) {
      return ok;
    }
  }
  if (expressions.empty()) {
    (p->*table).erase(addr);
  } else {
    (p->*table)[addr] = expressions;
  }
  return base::success();
}

}  // namespace

Result<void> LinuxTarget::set_breakpoint_conditions(Addr addr, const std::vector<Bytes>& conditions) {
  return set_expressions(current(), &Process::conditions, addr, conditions);
}

Result<void> LinuxTarget::set_breakpoint_commands(Addr addr, const std::vector<Bytes>& commands) {
  return set_expressions(current(), &Process::commands, addr, commands);
}

bool LinuxTarget::ran_commands(Process& p, LinuxThread& t, Addr addr) {
  auto it = p.commands.find(addr);
  if (it == p.commands.end()) {
    return false;
  }
  ThreadMachine machine(p, t);
  for (const Bytes& code : it->second) {
    if (auto done = agent::execute(code, machine); !done) {
      std::fprintf(stderr, "warning: breakpoint command at %#llx in thread %d: %s\n",
                   static_cast<unsigned long long>(addr), t.tid, done.error().message().c_str());
      break;
    }
  }
  // Straight to the descriptor: what the program prints on the same one is not buffered here.
  for (std::string_view rest = machine.printed; !rest.empty();) {
    const ssize_t n = ::write(STDOUT_FILENO, rest.data(), rest.size());
    if (n <= 0) {
      break;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool LinuxTarget::condition_holds(Process& p, LinuxThread& t, Addr addr) {
  auto it = p.conditions.find(addr);
  if (it == p.conditions.end()) {
    return true;  // unconditional
  }
  ThreadMachine machine(p, t);
  for (const Bytes& code : it->second) {
    auto value = agent::evaluate(code, machine);
    if (!value) {
      base::logf(base::LogCat::ptrace, "thread {}: condition at {:#x}: {}; stopping", t.tid, addr,
                 value.error().message());
      return true;
    }
    if (*value != 0) {
      return true;
    }
  }
  base::logf(base::LogCat::ptrace, "thread {}: conditions at {:#x} false: going on", t.tid, addr);
  return false;
}

}  // namespace tracer
