#include "tracer/valgrind/valgrind_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/log.hpp"
#include "tracer/btrace/dbt_ring.h"
#include "tracer/linux/exec_child.hpp"
#include "tracer/linux/ia32.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/resolve_program.hpp"
#include "tracer/valgrind/dbt_problem.hpp"
#include "tracer/valgrind/unsupported_code.hpp"

namespace tracer {
namespace {

// Where the rings and vgdb's FIFOs go: memory-backed when the machine has /dev/shm.
std::string make_work_dir() {
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string path = base + "/hindsight-dbt.XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) {
    return {};
  }
  return path;
}

// vgdb waits up to 30 s (--wait=30) for the gdbserver of a Valgrind just started; this, for its
// answer.
constexpr std::chrono::seconds kVgdbWait{40};
// How long a Valgrind that reported its program's end may take to exit.
constexpr std::chrono::seconds kEndWait{10};

}  // namespace

ValgrindProcess::~ValgrindProcess() {
  for (const Pid pid : detached_) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  remove_work_dir();
}

void ValgrindProcess::remove_work_dir() {
  if (!dir_.empty() && !options_.keep_rings_in.empty()) {
    std::error_code ec;  // the rings stay; Valgrind's FIFOs go
    for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
      if (entry.is_fifo(ec)) {
        std::filesystem::remove(entry.path(), ec);
      }
    }
    dir_.clear();
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

std::string ValgrindProcess::valgrind_log() {
  std::string text = log_.text();
  if (text.empty()) {
    return {};
  }
  if (text.size() > 2000) {
    text = "..." + text.substr(text.size() - 2000);
  }
  return "; Valgrind said:\n" + text;
}

void ValgrindProcess::explain_sigill() {
  // Valgrind logs the bytes it could not translate, then gives the program SIGILL.
  const std::string text = log_.text();
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

base::Result<ValgrindProcess::Started> ValgrindProcess::start(const LaunchSpec& spec) {
  // A program that cannot start is said at once, as without the recorder (Valgrind would only
  // say it in its log, and vgdb wait for a gdbserver that never comes).
  const auto file = resolve_program(spec.program);
  if (!file) {
    return file.error();
  }
  const arch::x86::Isa isa = procfs::file_isa(*file).value_or(arch::x86::Isa::Amd64);
  if (isa == arch::x86::Isa::I386 && kernel_refuses_i386(*file)) {
    base::Error refused = cannot_run(spec.program, ENOEXEC);
    refused.detail += "\n" + ia32_word();
    return refused;
  }
  if (auto why = dbt_problem(options_.valgrind_lib, isa)) {
    return base::make_error(base::Errc::unsupported, *why);
  }
  if (auto why = code_the_recorder_cannot_run(*file)) {
    return base::make_error(base::Errc::unsupported, *why);
  }
  remove_work_dir();  // a previous run's
  if (!options_.keep_rings_in.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.keep_rings_in, ec);
    if (ec || !std::filesystem::is_empty(options_.keep_rings_in, ec)) {
      return base::make_error(base::Errc::invalid, "the directory to keep rings in must be new or empty: " +
                                                       options_.keep_rings_in);
    }
    dir_ = std::filesystem::absolute(options_.keep_rings_in).string();
  } else {
    dir_ = make_work_dir();
  }
  if (dir_.empty()) {
    return base::sys_error("cannot make a directory for the recorder's rings");
  }
  const std::string prefix = dir_ + "/vgdb";
  const std::string log_path = dir_ + "/valgrind.log";
  if (options_.follow_tree) {
    if (auto ok = log_.use_fifo(log_path); !ok) {
      return std::move(ok).error();
    }
  } else {
    log_.use_file(log_path);
  }
  std::vector<std::string> argv{"valgrind",
                                "--tool=hsdbt",
                                "--vgdb=yes",
                                "--vgdb-error=0",
                                // Threads take turns in order: with Valgrind's default lock a
                                // thread just created can wait behind one that spins until the
                                // crash, and its stub lists only threads that have run.
                                "--fair-sched=yes",
                                "--vgdb-prefix=" + prefix,
                                "--ring-dir=" + dir_,
                                "--ring-size=" + std::to_string(options_.ring_bytes),
                                // Valgrind's own messages (its banner for GDB among them) go
                                // to a file, quoted when something goes wrong.
                                "--log-file=" + log_path};
  if (options_.follow_tree) {
    argv.insert(argv.end(), {"--trace-children=yes", "--follow-tree=yes"});
    if (!options_.keep_rings_in.empty()) {
      argv.push_back("--drop-rings=no");
    }
  }
  argv.push_back(spec.program);
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  const std::vector<char*> exec_args = exec_argv(argv);
  const pid_t server = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return base::sys_error("fork");
  }
  if (pid == 0) {
    // Gone with the server, as a program it starts under ptrace is (PTRACE_O_EXITKILL) and as
    // gdbserver's are: a server killed mid-session (SIGKILL, the OOM killer) leaves no program
    // of its own running on under Valgrind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != server) {
      ::_exit(127);
    }
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
  auto link = RspLink::spawn(vgdb_argv(pid), kVgdbWait, pid);  // Valgrind's end ends the wait
  if (!link) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return base::make_error(base::Errc::system, "the program did not start under the dbt recorder (valgrind " +
                                                    spec.program + "): " + link.error().message() + valgrind_log());
  }
  return Started{pid, std::move(link).value()};
}

std::vector<std::string> ValgrindProcess::vgdb_argv(Pid pid) const {
  return {"vgdb", "--vgdb-prefix=" + dir_ + "/vgdb", "--pid=" + std::to_string(pid), "--wait=30"};
}

base::Result<RspLink> ValgrindProcess::link(Pid pid) const { return RspLink::spawn(vgdb_argv(pid), kVgdbWait); }

void ValgrindProcess::reap(Pid pid, bool wait) {
  if (pid <= 0) {
    return;
  }
  int status = 0;
  if (!wait) {
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      detached_.push_back(pid);
    }
    return;
  }
  // It said it ended, or was killed: Valgrind is on its way out. One that is not within
  // kEndWait is killed, so that no caller waits for ever.
  const auto give_up = std::chrono::steady_clock::now() + kEndWait;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      base::logf(base::LogCat::ptrace, "valgrind {} still there {} s after its end: killed", pid, kEndWait.count());
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return;
    }
    ::usleep(10000);
  }
}

SignalAction ValgrindProcess::signal_action(Pid pid, int sig) const {
  const std::string path = dir_ + "/" + HS_DBT_RING_PREFIX + std::to_string(pid) + HS_DBT_SIGNALS_SUFFIX;
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

}  // namespace tracer
