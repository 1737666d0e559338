// PerfBts: the CPU check, the error texts, and the real hardware when this machine has BTS.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "test/support/skip.hpp"
#include "tracer/btrace/history_ring.hpp"
#include "tracer/btrace/perf_bts.hpp"

using tracer::CpuIdentity;

TEST_CASE("bts_cpu_check: Intel only, minus the AAJ122 models", "[perf]") {
  CHECK(tracer::bts_cpu_check(CpuIdentity{"GenuineIntel", 6, 0xa7}));    // Rocket Lake
  CHECK(tracer::bts_cpu_check(CpuIdentity{"GenuineIntel", 6, 0x3c}));    // Haswell
  CHECK(tracer::bts_cpu_check(CpuIdentity{"GenuineIntel", 0xf, 0x2a}));  // not family 6
  for (unsigned model : {0x1au, 0x1eu, 0x1fu, 0x2eu, 0x25u, 0x2cu, 0x2fu, 0x2au, 0x2du, 0x3au}) {
    INFO(model);
    auto r = tracer::bts_cpu_check(CpuIdentity{"GenuineIntel", 6, model});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == base::Errc::unsupported);
    CHECK_THAT(r.error().message(), Catch::Contains("AAJ122") && Catch::Contains("--btrace=inproc"));
  }
  auto amd = tracer::bts_cpu_check(CpuIdentity{"AuthenticAMD", 0x19, 0x21});
  REQUIRE_FALSE(amd);
  CHECK(amd.error().message() ==
        "Intel BTS is not available on this CPU (vendor AuthenticAMD): branch trace store is an Intel "
        "feature; use the in-process recorder (--btrace=inproc)");
  CHECK_FALSE(tracer::bts_cpu_check(CpuIdentity{"", 0, 0}));
}

TEST_CASE("host_cpu: a vendor string and a family", "[perf]") {
  CpuIdentity cpu = tracer::host_cpu();
  CHECK(cpu.vendor.size() == 12);
  CHECK(cpu.family != 0);
}

TEST_CASE("perf_open_error_text: what was tried, why it failed, what to do", "[perf]") {
  CHECK(tracer::perf_open_error_text(ENOENT, 2) ==
        "Intel BTS via perf_event_open failed: No such file or directory (this machine or VM exposes no "
        "branch-sampling PMU); use the in-process recorder (--btrace=inproc)");
  std::string locked = tracer::perf_open_error_text(EACCES, 3);
  CHECK_THAT(locked, Catch::StartsWith("Intel BTS via perf_event_open failed: Permission denied") &&
                         Catch::Contains("/proc/sys/kernel/perf_event_paranoid is 3") &&
                         Catch::Contains("2 or less") && Catch::EndsWith("(--btrace=inproc)"));
  std::string eperm = tracer::perf_open_error_text(EPERM, 2);
  CHECK_THAT(eperm, Catch::Contains("Operation not permitted") && Catch::Contains("perf_event_paranoid") &&
                        Catch::Contains("seccomp"));
  CHECK_THAT(tracer::perf_open_error_text(ESRCH, 2), Catch::Contains("the thread no longer exists"));
  CHECK_THAT(tracer::perf_open_error_text(EMFILE, 2),
             Catch::Contains("Too many open files") && Catch::EndsWith("(--btrace=inproc)"));
}

TEST_CASE("perf_open_error_text: each errno gets its own reason and remedy", "[perf]") {
  struct Row {
    int err;
    const char* says;  // the kernel's word, strerror
    const char* why;   // our explanation / what to do
  };
  const Row table[] = {
      {ENOENT, "No such file or directory", "no branch-sampling PMU"},
      {ENODEV, "No such device", "no branch-sampling PMU"},
      {EOPNOTSUPP, "Operation not supported", "no branch-sampling PMU"},
      {EACCES, "Permission denied", "perf_event_paranoid"},
      {EPERM, "Operation not permitted", "seccomp"},
      {ESRCH, "No such process", "the thread no longer exists"},
      {EINVAL, "Invalid argument", "does not accept a BTS event"},
      {EMFILE, "Too many open files", "raise `ulimit -n` or trace fewer threads"},
      {ENFILE, "Too many open files in system", "fs.file-max"},
      {ENOMEM, "Cannot allocate memory", "smaller set record btrace bts buffer-size"},
      {EBUSY, "Device or resource busy", "another user holds the branch-tracing hardware"},
  };
  for (const Row& row : table) {
    CAPTURE(row.err);
    const std::string text = tracer::perf_open_error_text(row.err, 2);
    CHECK_THAT(text, Catch::StartsWith(std::string("Intel BTS via perf_event_open failed: ") + row.says) &&
                         Catch::Contains(row.why) && Catch::EndsWith("use the in-process recorder (--btrace=inproc)"));
  }
  CHECK_THAT(tracer::perf_map_error_text(ENOMEM),
             Catch::StartsWith("Failed to map the BTS trace buffer: Cannot allocate memory") &&
                 Catch::Contains("perf_event_mlock_kb") && Catch::Contains("smaller set record btrace bts buffer-size"));
  CHECK_THAT(tracer::perf_map_error_text(EPERM), Catch::Contains("RLIMIT_MEMLOCK"));
}

namespace {

// A child that branches all the time; killed and reaped on scope exit.
class SpinningChild {
 public:
  SpinningChild() {
    pid_ = ::fork();
    if (pid_ == 0) {
      volatile unsigned long n = 0;
      for (;;) {
        n = n + 1;
      }
    }
  }
  ~SpinningChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  SpinningChild(const SpinningChild&) = delete;
  SpinningChild& operator=(const SpinningChild&) = delete;
  pid_t pid() const { return pid_; }
  bool stop() {
    int status = 0;
    return ::kill(pid_, SIGSTOP) == 0 && ::waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("PerfBts on real hardware: samples from a spinning child", "[perf][hardware]") {
  SpinningChild child;
  REQUIRE(child.pid() > 0);
  auto tracer = tracer::open_perf_bts(child.pid(), tracer::BtraceConfig{0x10000});
  if (!tracer) {
    CHECK(tracer.error().code == base::Errc::unsupported);
    CHECK_THAT(tracer.error().message(), Catch::Contains("--btrace=inproc"));
    HS_SKIP(tracer.error().message());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(child.stop());
  tracer::BranchTracer& bts = **tracer;
  CHECK(bts.conf().bts_size == 0x10000);
  CHECK(bts.stats().backend == "bts");
  CHECK(bts.stats().recorded > 0);
  const tracer::Addr pc = 0x1000;  // any address closes the newest block
  auto all = bts.read(tracer::BtraceRead::All, pc);
  REQUIRE(all);
  REQUIRE_FALSE(all->blocks.empty());
  CHECK(all->blocks.front().end == pc);
  for (const auto& b : all->blocks) {
    CHECK_FALSE(tracer::is_kernel_address(b.begin));
    CHECK_FALSE(tracer::is_kernel_address(b.end));
  }
  auto delta = bts.read(tracer::BtraceRead::Delta, pc);  // the child is stopped: nothing new
  REQUIRE(delta);
  CHECK(delta->blocks == std::vector<tracer::BtraceBlock>{{0, pc}});
  auto fresh = bts.read(tracer::BtraceRead::New, pc);
  REQUIRE(fresh);
  CHECK(fresh->blocks.empty());
}
