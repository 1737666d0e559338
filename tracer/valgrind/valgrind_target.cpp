#include "tracer/valgrind/valgrind_target.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "tracer/backend.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tracer/btrace/dbt_ring.h"
#include "tracer/linux/procfs.hpp"

namespace tracer {
namespace {

// How pid ended, from what waitpid gave (got: its result; SIGKILL when it gave nothing).
StopEvent end_of(Pid pid, pid_t got, int status) {
  StopEvent ev{StopReason::Killed, pid, pid, SIGKILL};
  if (got == pid && WIFEXITED(status)) {
    ev.reason = StopReason::Exited;
    ev.signal = 0;
    ev.status = WEXITSTATUS(status);
  } else if (got == pid && WIFSIGNALED(status)) {
    ev.signal = WTERMSIG(status);
  }
  return ev;
}

std::string thread_name_for(const std::string& program) {
  return std::filesystem::path(program).filename().string().substr(0, 15);
}

}  // namespace

ValgrindTarget::ValgrindTarget(DbtOptions options) : valgrind_(std::make_shared<ValgrindProcess>(std::move(options))) {}

ValgrindTarget::ValgrindTarget(std::shared_ptr<ValgrindProcess> valgrind) : valgrind_(std::move(valgrind)) {
  histories_.read_from_birth();
}

ValgrindTarget::~ValgrindTarget() {
  if (has_process()) {
    (void)kill();
  }
}

Result<Pid> ValgrindTarget::launch(const LaunchSpec& spec) {
  if (has_process()) {
    return base::make_error(base::Errc::invalid, "the dbt recorder runs one process at a time");
  }
  auto started = valgrind_->start(spec);
  if (!started) {
    return std::move(started).error();
  }
  const Pid pid = started->pid;
  root_ = pid;
  program_name_ = thread_name_for(spec.program);
  if (valgrind_->follows_tree()) {
    tree_events_ = std::make_unique<TreeEvents>(valgrind_->dir() + "/" + HS_DBT_EVENTS_NAME);
  }
  if (auto ok = connect(std::move(started->link), pid); !ok) {
    (void)kill();
    return base::make_error(base::Errc::system,
                            "the program under the dbt recorder did not stop at its start: " + ok.error().message());
  }
  return pid;
}

Result<void> ValgrindTarget::attach(Pid) {
  return base::make_error(base::Errc::unsupported,
                          "the dbt recorder must start the program; to attach, " + software_advice());
}

Result<void> ValgrindTarget::detach() {
  if (!RemoteTarget::has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  auto reply = ask("D");
  forget_process(false);  // GDB has its reply at once; the program runs on
  return reply ? base::success() : Result<void>(std::move(reply).error());
}

Result<void> ValgrindTarget::kill() {
  const bool descendants = kill_descendants();
  if (!has_process()) {
    return descendants ? base::success() : base::make_error(base::Errc::no_process, "no process");
  }
  ::kill(pid(), SIGKILL);
  if (unlinked_) {
    (void)unlinked_end(true);
    return base::success();
  }
  forget_process(true);
  return base::success();
}

void ValgrindTarget::forget_process(bool wait) {
  const Pid gone = pid();
  histories_.process_ended(valgrind_->dir(), gone);
  disconnect();  // vgdb goes with its input
  valgrind_->reap(gone, wait);
}

std::optional<StopEvent> ValgrindTarget::poll() {
  log_tree();
  if (unlinked_) {
    return unlinked_end(false);
  }
  return RemoteTarget::poll();
}

Result<void> ValgrindTarget::interrupt() {
  if (unlinked_) {
    return base::make_error(base::Errc::unsupported, "the program exec'd: the recorder can no longer stop it");
  }
  return RemoteTarget::interrupt();
}

std::optional<StopEvent> ValgrindTarget::unlinked_end(bool wait) {
  int status = 0;
  const pid_t got = ::waitpid(pid(), &status, wait ? 0 : WNOHANG);
  if (got == 0) {
    return std::nullopt;
  }
  unlinked_ = false;
  log_tree();
  histories_.process_ended(valgrind_->dir(), pid());
  return end_of(pid(), got, status);
}

arch::x86::Isa ValgrindTarget::program_isa() { return procfs::executable_isa(pid()); }

std::vector<ThreadInfo> ValgrindTarget::threads() {
  auto out = RemoteTarget::threads();
  for (auto& t : out) {
    t.name = procfs::thread_name(pid(), t.tid);
    if (t.name.starts_with("hsdbt-")) {  // hsdbt-amd64-lin, hsdbt-x86-linux
      t.name = program_name_;  // Valgrind's name, not the one the kernel would have given
    }
  }
  return out;
}

void ValgrindTarget::stopped(StopEvent& event) {
  if (event.signal == SIGILL) {
    valgrind_->explain_sigill();
  }
}

std::optional<StopEvent> ValgrindTarget::ended_unannounced() {
  // vgdb left without a stop reply: the program exec'd (Valgrind ends its gdbserver there; the
  // new image is one of the tree), died where Valgrind could say nothing (SIGKILL from
  // outside), or vgdb itself went and the program cannot be driven any more.
  const Pid gone = pid();
  int status = 0;
  pid_t got = 0;
  for (int i = 0; i < 100 && (got = ::waitpid(gone, &status, WNOHANG)) == 0; ++i) {
    if (valgrind_->follows_tree() && ::kill(gone, 0) == 0) {
      histories_.process_ended(valgrind_->dir(), gone);
      disconnect();
      unlinked_ = true;  // it goes on; its end comes with its exit status
      return std::nullopt;
    }
    ::usleep(10000);
  }
  if (got == 0) {
    ::kill(gone, SIGKILL);
    got = ::waitpid(gone, &status, 0);
  }
  histories_.process_ended(valgrind_->dir(), gone);
  disconnect();  // reaped already: nothing to wait for
  return end_of(gone, got, status);
}

void ValgrindTarget::log_tree() {
  if (!tree_events_) {
    return;
  }
  auto events = tree_events_->read_new();
  if (log_ != nullptr) {
    log_tree_events(events, pid(), *log_);
  }
  for (const auto& e : events) {
    if (e.kind == TreeEvent::Kind::Reaped && e.pid != pid()) {
      killed_.push_back(e.pid);
    }
  }
}

void ValgrindTarget::reap_orphans() {
  if (!tree_events_) {
    return;
  }
  for (const Pid pid : tree_events_->unended()) {
    int status = 0;
    if (pid == root_ || ::waitpid(pid, &status, WNOHANG) != pid) {
      continue;  // not ours (its parent lives), or not ended
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      if (log_ != nullptr) {
        log_->add("killed", pid, pid, "SIGKILL", SIGKILL);
      }
      killed_.push_back(pid);
    } else {
      if (log_ != nullptr && WIFEXITED(status)) {
        log_->add("exit", pid, pid, {}, WEXITSTATUS(status));  // (one that ran natively says nothing itself)
      }
      tree_events_->forget(pid);
    }
  }
}

bool ValgrindTarget::kill_descendants() {
  if (!tree_events_) {
    return false;
  }
  log_tree();
  bool any = false;
  for (const Pid pid : tree_events_->unended()) {
    // Not the started program (its own link's), nor one reaped already and waiting to be told
    // (its pid may be another's by now).
    if (pid != root_ && std::find(killed_.begin(), killed_.end(), pid) == killed_.end() &&
        procfs::descends_from(pid, ::getpid()) && ::kill(pid, SIGKILL) == 0) {
      any = true;  // reaped by its parent, or by us (reap_orphans); told by take_dying_descendant
    }
  }
  return any;
}

bool ValgrindTarget::descendants_alive() {
  if (!tree_events_) {
    return false;
  }
  log_tree();
  reap_orphans();
  // One killed outright and reaped by its parent never says it ended: its pid, taken by
  // another process since, is not the tree's (this process is the tree's top and reaper).
  for (const Pid pid : tree_events_->unended()) {
    if (pid != root_ && procfs::descends_from(pid, ::getpid())) {
      return true;
    }
  }
  return false;
}

std::optional<DyingDescendant> ValgrindTarget::take_dying_descendant() {
  if (!valgrind_->follows_tree()) {
    return std::nullopt;
  }
  log_tree();
  reap_orphans();
  if (!killed_.empty()) {
    // Gone: what its rings hold, named with the code it had mapped.
    const Pid pid = killed_.front();
    killed_.erase(killed_.begin());
    auto target = std::unique_ptr<ValgrindTarget>(new ValgrindTarget(valgrind_));
    target->histories_.keep_ended();
    target->histories_.process_ended(valgrind_->dir(), pid);
    auto maps = procfs::read_file(valgrind_->dir() + "/" + HS_DBT_RING_PREFIX + std::to_string(pid) + ".maps");
    DyingDescendant out{std::move(target), StopEvent{StopReason::Killed, pid, pid, SIGKILL}, tree_events_->command_of(pid),
                        maps ? std::string(maps->begin(), maps->end()) : std::string()};
    tree_events_->forget(pid);
    return out;
  }
  for (const Pid pid : valgrind_->take_fatal_waits()) {
    auto link = valgrind_->link(pid);
    if (!link) {
      continue;  // gone already (killed meanwhile): its end is in the tree's events
    }
    auto target = std::unique_ptr<ValgrindTarget>(new ValgrindTarget(valgrind_));
    auto stop = target->connect(std::move(link).value(), pid);
    if (!stop) {
      continue;
    }
    log_tree();  // its fork and exec, before its report names it (killed ones come next time)
    auto command = tree_events_ ? tree_events_->command_of(pid) : std::vector<std::string>{};
    if (tree_events_) {
      tree_events_->forget(pid);  // its end is its own target's now
    }
    target->program_name_ = thread_name_for(command.empty() ? std::string() : command.front());
    return DyingDescendant{std::move(target), *stop, std::move(command), {}};
  }
  return std::nullopt;
}

SignalAction ValgrindTarget::signal_action(Tid, int sig) { return valgrind_->signal_action(pid(), sig); }

Result<void> ValgrindTarget::enable_btrace(Tid tid, const BtraceConfig& config) {
  if (!RemoteTarget::has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  return histories_.enable(valgrind_->dir(), pid(), tid, as_kernel_sizes_it(config), [this] { return threads(); });
}

Result<void> ValgrindTarget::disable_btrace(Tid tid) { return histories_.disable(tid); }

}  // namespace tracer
