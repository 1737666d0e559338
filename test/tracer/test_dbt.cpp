// The dbt recorder (tracer/dbt, a Valgrind tool) and the server's reader of its rings: rings
// laid out as the recorder lays them out, then the differential test: on the corpus, what
// the recorder writes equals what SoftStep records, on the program's own code.
#include <fcntl.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "test/support/skip.hpp"
#include "test/tracer/recording.hpp"
#include "tracer/btrace/dbt_ring.h"
#include "tracer/btrace/dbt_ring_reader.hpp"
#include "tracer/btrace/dbt_tracer.hpp"
#include "tracer/btrace/history_ring.hpp"
#include "tracer/valgrind/rsp_link.hpp"
#include "tracer/valgrind/valgrind_target.hpp"

#ifndef DBT_LIB_DIR
#error "DBT_LIB_DIR must name the recorder's VALGRIND_LIB directory (empty: not built)"
#endif

using namespace test_tracer;
using tracer::DbtRing;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/hsdbt-test.XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A ring file as the recorder writes it: header, then head samples n -> n + 0x1000 at n % cap,
// then room for 8 time marks holding `marks` (the last also the latest reading).
constexpr std::uint64_t kTestMarks = 8;
std::string write_ring(const std::string& dir, int pid, int tid, std::uint64_t cap, std::uint64_t head,
                       const std::vector<tracer::TimeMark>& marks = {}) {
  const std::string path = dir + "/" + HS_DBT_RING_PREFIX + std::to_string(pid) + "." + std::to_string(tid);
  const std::size_t marks_at = HS_DBT_RING_HEADER_SIZE + cap * sizeof(hs_dbt_sample);
  std::vector<char> bytes(marks_at + kTestMarks * sizeof(hs_dbt_time_mark));
  const tracer::TimeMark latest = marks.empty() ? tracer::TimeMark{} : marks.back();
  hs_dbt_ring_header h{HS_DBT_RING_MAGIC, HS_DBT_RING_VERSION, HS_DBT_RING_HEADER_SIZE,
                       static_cast<std::uint64_t>(pid), static_cast<std::uint64_t>(tid), cap, head, 1,
                       HS_DBT_RING_RUNNING, 0, 0, kTestMarks, marks.size(), latest.position, latest.t_ns, {}};
  std::memcpy(bytes.data(), &h, sizeof h);
  for (std::uint64_t n = head > cap ? head - cap : 0; n < head; ++n) {
    hs_dbt_sample s{0x400000 + n, 0x401000 + n};
    std::memcpy(bytes.data() + HS_DBT_RING_HEADER_SIZE + (n % cap) * sizeof s, &s, sizeof s);
  }
  for (std::size_t n = 0; n < marks.size(); ++n) {
    hs_dbt_time_mark m{marks[n].position, marks[n].t_ns};
    std::memcpy(bytes.data() + marks_at + (n % kTestMarks) * sizeof m, &m, sizeof m);
  }
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

bool dbt_available(std::string* why) {
  if (std::string(DBT_LIB_DIR).empty()) {
    *why = "the dbt recorder is not built (valgrind's headers and core archives not found)";
    return false;
  }
  if (std::system("valgrind --version >/dev/null 2>&1") != 0) {
    *why = "valgrind is not installed";
    return false;
  }
  return true;
}

// Starts `program args` under the recorder, rings in ring_dir, with Valgrind's gdbserver
// waiting for GDB under vgdb_prefix when one is given; the program's output goes nowhere.
pid_t start_recorder(const std::string& ring_dir, const std::string& program, const std::vector<std::string>& args,
                     const std::string& vgdb_prefix = {}) {
  std::vector<std::string> argv_s{"valgrind", "--tool=hsdbt", "-q", "--ring-dir=" + ring_dir, "--ring-size=67108864"};
  if (!vgdb_prefix.empty()) {
    argv_s.insert(argv_s.end(), {"--vgdb=yes", "--vgdb-error=0", "--vgdb-prefix=" + vgdb_prefix});
  }
  argv_s.push_back(program);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("VALGRIND_LIB", DBT_LIB_DIR, 1);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::vector<char*> argv;
    for (auto& a : argv_s) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    ::execvp("valgrind", argv.data());
    ::_exit(127);
  }
  return pid;
}

struct RingClock {
  std::vector<tracer::TimeMark> marks;
  std::uint64_t head = 0, born_ns = 0, exited_ns = 0;
};

struct DbtRun {
  std::vector<std::vector<BranchSample>> threads;  // leader first, then by tid
  std::vector<RingClock> clocks;                    // the same threads' clock readings
  std::vector<std::vector<BranchSample>> children;  // a fork child's threads (one process)
  std::uint64_t gaps = 0;
  std::uint64_t lost = 0;
};

// Runs `program args` under the recorder to its end and reads every thread's ring.
DbtRun record_dbt(const std::string& program, const std::vector<std::string>& args) {
  TempDir dir;
  const pid_t pid = start_recorder(dir.path, program, args);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  DbtRun run;
  for (const auto& path : tracer::dbt_ring_paths(dir.path, pid)) {
    auto ring = DbtRing::open(path);
    REQUIRE(ring.ok());
    CHECK(ring->exited());
    std::uint64_t lost = 0;
    run.threads.push_back(ring->samples_since(0, &lost));
    run.clocks.push_back(RingClock{ring->time_marks(), ring->head(), ring->born_ns(), ring->exited_ns()});
    run.gaps += ring->gaps();
    run.lost += lost;
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("hsdbt." + std::to_string(pid) + ".", 0) != 0 && !name.ends_with(HS_DBT_SIGNALS_SUFFIX)) {
      auto ring = DbtRing::open(entry.path().string());
      REQUIRE(ring.ok());
      CHECK(ring->pid() != pid);
      run.children.push_back(ring->samples_since(0));
    }
  }
  return run;
}

// The leader's branches from diff_begin's first instruction to the call of diff_end, as
// SoftStep records them once GDB's breakpoint at diff_begin is hit.
std::vector<BranchSample> between_markers(const std::vector<BranchSample>& all, std::uint64_t begin,
                                          std::uint64_t end) {
  auto first = std::find_if(all.begin(), all.end(), [&](const BranchSample& s) { return s.to == begin; });
  REQUIRE(first != all.end());
  auto last = std::find_if(first, all.end(), [&](const BranchSample& s) { return s.to == end; });
  REQUIRE(last != all.end());
  return {first + 1, last + 1};
}

void compare_dbt(const std::string& program, const std::vector<std::string>& args, const std::string& function = {},
                 const std::string& until = {}) {
  INFO(program << (args.empty() ? "" : " " + args[0]));
  const auto code = elf_code_range(program);
  const auto begin = elf_symbol(program, "diff_begin");
  const auto end = elf_symbol(program, "diff_end");
  REQUIRE(code);
  REQUIRE(begin);
  REQUIRE(end);
  const Recording step = record(Backend::Step, program, args);
  CHECK(step.gaps == 0);
  const DbtRun dbt = record_dbt(program, args);
  CHECK(dbt.lost == 0);
  REQUIRE(step.threads.size() == dbt.threads.size());
  for (std::size_t i = 0; i < step.threads.size(); ++i) {
    INFO("thread #" << i);
    auto a = step.threads[i];
    auto b = i == 0 ? between_markers(dbt.threads[i], *begin, *end) : dbt.threads[i];
    if (!function.empty()) {
      const auto f = elf_symbol_entry(program, function);
      REQUIRE(f);
      a = within(a, f->addr, f->addr + f->size);
      b = within(b, f->addr, f->addr + f->size);
    }
    if (!until.empty()) {
      cut_after_call(program, until, a);
      cut_after_call(program, until, b);
    }
    a = own_code(a, *code);
    b = own_code(b, *code);
    if (function.empty() || i > 0) {
      CHECK(!a.empty());
    }
    check_same(a, b, "step", "dbt");
  }
}

// Runs `program args` under the recorder with Valgrind's gdbserver on, lets GDB step it from
// diff_begin to diff_end (gdb_step_branches.py), and returns what GDB saw and what the
// recorder wrote between the same markers.
struct SteppedAndRecorded {
  std::vector<BranchSample> stepped;
  std::vector<BranchSample> recorded;
};

SteppedAndRecorded step_under_valgrind(const std::string& program, const std::vector<std::string>& args) {
  TempDir dir;
  const std::string prefix = dir.path + "/vgdb";
  const pid_t pid = start_recorder(dir.path, program, args, prefix);
  const std::string gdb = "gdb -batch -nx -ex 'target remote | vgdb --vgdb-prefix=" + prefix + " --pid=" +
                          std::to_string(pid) + "' -x " + std::string(STEP_SCRIPT) + " " + program + " 2>/dev/null";
  FILE* out = ::popen(gdb.c_str(), "r");
  REQUIRE(out != nullptr);
  SteppedAndRecorded result;
  std::string summary;
  char line[256];
  while (std::fgets(line, sizeof line, out) != nullptr) {
    unsigned long from = 0, to = 0;
    if (std::sscanf(line, "BRANCH %lx %lx", &from, &to) == 2) {
      result.stepped.push_back(BranchSample{from, to});
    } else if (std::strncmp(line, "STEPS", 5) == 0) {
      summary = line;
    }
  }
  ::pclose(out);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(summary);
  REQUIRE(summary.find(" end") != std::string::npos);  // GDB stepped all the way to diff_end
  const auto paths = tracer::dbt_ring_paths(dir.path, pid);
  REQUIRE(!paths.empty());
  auto ring = DbtRing::open(paths.front());
  REQUIRE(ring.ok());
  result.recorded = between_markers(ring->samples_since(0), *elf_symbol(program, "diff_begin"),
                                    *elf_symbol(program, "diff_end"));
  return result;
}

}  // namespace

TEST_CASE("dbt rings: read as the recorder lays them out", "[tracer][btrace][dbt]") {
  TempDir dir;
  SECTION("not yet wrapped") {
    auto ring = DbtRing::open(write_ring(dir.path, 10, 10, 8, 5));
    REQUIRE(ring.ok());
    CHECK(ring->pid() == 10);
    CHECK(ring->capacity() == 8);
    CHECK(ring->head() == 5);
    CHECK(ring->gaps() == 1);
    CHECK_FALSE(ring->exited());
    std::uint64_t lost = 9;
    auto all = ring->samples_since(0, &lost);
    REQUIRE(all.size() == 5);
    CHECK(lost == 0);
    CHECK(all.front() == BranchSample{0x400000, 0x401000});
    CHECK(ring->samples_since(3).size() == 2);
  }
  SECTION("wrapped: the oldest are gone, counted as lost") {
    auto ring = DbtRing::open(write_ring(dir.path, 10, 11, 8, 21));
    REQUIRE(ring.ok());
    std::uint64_t lost = 0;
    auto all = ring->samples_since(0, &lost);
    REQUIRE(all.size() == 8);
    CHECK(lost == 13);
    CHECK(all.front() == BranchSample{0x400000 + 13, 0x401000 + 13});
    CHECK(all.back() == BranchSample{0x400000 + 20, 0x401000 + 20});
    CHECK(ring->samples_since(19, &lost).size() == 2);
    CHECK(lost == 0);
  }
  SECTION("anything else is refused") {
    const std::string path = write_ring(dir.path, 10, 12, 8, 0);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write("NOTARING", 8);
    f.close();
    CHECK_FALSE(DbtRing::open(path).ok());
    const std::string short_path = dir.path + "/short";
    std::ofstream(short_path) << "x";
    CHECK_FALSE(DbtRing::open(short_path).ok());
    CHECK_FALSE(DbtRing::open(dir.path + "/missing").ok());
  }
  SECTION("time marks: the kept readings, oldest first; scribbled ones left out") {
    using tracer::TimeMark;
    auto ring = DbtRing::open(write_ring(dir.path, 10, 13, 8, 5, {{0, 100}, {2, 200}, {5, 300}}));
    REQUIRE(ring.ok());
    CHECK(ring->time_marks() == std::vector<TimeMark>{{0, 100}, {2, 200}, {5, 300}});
    // Ten readings in eight slots: the first two overwritten.
    std::vector<TimeMark> ten;
    for (std::uint64_t n = 0; n < 10; ++n) {
      ten.push_back(TimeMark{n, 1000 + n});
    }
    auto wrapped = DbtRing::open(write_ring(dir.path, 10, 14, 16, 9, ten));
    REQUIRE(wrapped.ok());
    const auto kept = wrapped->time_marks();
    REQUIRE(kept.size() == 8);
    CHECK(kept.front() == TimeMark{2, 1002});
    CHECK(kept.back() == TimeMark{9, 1009});
    // Out of order, past the head, or never read: not a reading.
    auto scribbled = DbtRing::open(write_ring(dir.path, 10, 15, 8, 5, {{1, 500}, {2, 400}, {9, 600}, {3, 0}, {4, 700}}));
    REQUIRE(scribbled.ok());
    CHECK(scribbled->time_marks() == std::vector<TimeMark>{{1, 500}, {4, 700}});
  }
  SECTION("a process's rings, the leader first") {
    write_ring(dir.path, 20, 25, 8, 0);
    write_ring(dir.path, 20, 20, 8, 0);
    write_ring(dir.path, 20, 22, 8, 0);
    write_ring(dir.path, 21, 21, 8, 0);
    auto paths = tracer::dbt_ring_paths(dir.path, 20);
    REQUIRE(paths.size() == 3);
    CHECK(paths[0].ends_with(".20.20"));
    CHECK(paths[1].ends_with(".20.22"));
    CHECK(paths[2].ends_with(".20.25"));
  }
}

namespace {

// A recorder's ring of ring_cap samples read through a DbtTracer (GDB's buffer: config),
// beside a HistoryRing of ours_cap samples fed the same branches: their reads compared.
struct SideBySide {
  SideBySide(const std::string& dir, int pid, std::uint64_t ring_cap, std::uint64_t ours_cap,
             std::optional<tracer::BtraceConfig> config = std::nullopt)
      : dir_(dir), pid_(pid), ring_cap_(ring_cap),
        dbt(open_ring(write_ring(dir, pid, pid, ring_cap, 0)), /*from_birth=*/true, config),
        ours(ours_cap * tracer::kBtsSampleBytes) {}

  static DbtRing open_ring(const std::string& path) {
    auto ring = DbtRing::open(path);
    REQUIRE(ring.ok());
    return std::move(ring).value();
  }
  // Both have recorded head branches.
  void record_up_to(std::uint64_t head) {
    write_ring(dir_, pid_, pid_, ring_cap_, head);
    for (; pushed_ < head; ++pushed_) {
      ours.push(BranchSample{0x400000 + pushed_, 0x401000 + pushed_});
    }
  }
  // Both read the same blocks (or both fail); how many.
  std::size_t same(tracer::BtraceRead kind, std::uint64_t pc) {
    auto a = ours.read(kind, pc);
    auto b = dbt.read(kind, pc);
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) {
      return 0;
    }
    CHECK(a->blocks == b->blocks);
    return a->blocks.size();
  }

  std::string dir_;
  int pid_;
  std::uint64_t ring_cap_;
  std::uint64_t pushed_ = 0;
  tracer::DbtTracer dbt;
  tracer::HistoryRing ours;
};

}  // namespace

TEST_CASE("dbt rings: GDB's reads answered as from the server's own ring", "[tracer][btrace][dbt]") {
  // The same samples in a recorder's ring and in a HistoryRing of the same capacity: all,
  // new and delta give the same blocks, overflow included.
  TempDir dir;
  const std::uint64_t cap = 8;
  SideBySide both(dir.path, 30, cap, cap);
  auto& dbt = both.dbt;
  REQUIRE(both.ours.capacity() == cap);
  auto record_up_to = [&](std::uint64_t head) { both.record_up_to(head); };
  auto same = [&](tracer::BtraceRead kind, std::uint64_t pc) { return both.same(kind, pc); };
  record_up_to(5);
  CHECK(same(tracer::BtraceRead::All, 0x401004) == 5);  // the oldest start unknown: left out
  CHECK(same(tracer::BtraceRead::New, 0x401004) == 0);  // nothing new
  record_up_to(11);
  CHECK(same(tracer::BtraceRead::Delta, 0x40100a) > 0);
  record_up_to(30);  // more than the ring holds since the last read
  CHECK(same(tracer::BtraceRead::Delta, 0x40101d) == 0);  // both: overflow
  CHECK(same(tracer::BtraceRead::All, 0x40101d) == cap);
  const auto stats = dbt.stats();
  CHECK(stats.backend == "dbt");
  CHECK(stats.recorded == 30);
  CHECK(stats.kept == cap);
  CHECK(stats.lost == 30 - cap);
  CHECK(stats.gaps == 1);
  CHECK(dbt.conf().bts_size == cap * tracer::kBtsSampleBytes);
}

TEST_CASE("dbt rings: GDB's buffer size bounds what it sees, as the server's own ring of that size",
          "[tracer][btrace][dbt]") {
  // A recorder's ring of 64 samples seen through GDB's buffer of 8 (8 * 24 bytes): the same
  // blocks as a HistoryRing of 8, overflow included.
  TempDir dir;
  const std::uint64_t ring_cap = 64;
  const std::uint64_t asked = 8;
  SideBySide both(dir.path, 32, ring_cap, asked, tracer::BtraceConfig{asked * tracer::kBtsSampleBytes});
  CHECK(both.dbt.conf().bts_size == asked * tracer::kBtsSampleBytes);  // what GDB asked for: info record says so
  auto record_up_to = [&](std::uint64_t head) { both.record_up_to(head); };
  auto same = [&](tracer::BtraceRead kind, std::uint64_t pc) { return both.same(kind, pc); };
  record_up_to(30);
  CHECK(same(tracer::BtraceRead::Delta, 0x40101d) == 0);  // a new reader: overflow, reads all
  CHECK(same(tracer::BtraceRead::All, 0x40101d) == asked);  // the newest 8, not the ring's 30
  record_up_to(34);
  CHECK(same(tracer::BtraceRead::Delta, 0x401021) > 0);
  record_up_to(50);  // more than GDB's buffer since the last read (not more than the ring)
  CHECK(same(tracer::BtraceRead::Delta, 0x401031) == 0);  // both: overflow
  CHECK(same(tracer::BtraceRead::All, 0x401031) == asked);
  // Asking for more than the ring holds gets the ring, and says so.
  tracer::DbtTracer big(SideBySide::open_ring(dir.path + "/" + HS_DBT_RING_PREFIX + "32.32"), true,
                        tracer::BtraceConfig{1u << 30});
  CHECK(big.conf().bts_size == ring_cap * tracer::kBtsSampleBytes);
}

TEST_CASE("dbt rings: GDB's history starts when it starts recording", "[tracer][btrace][dbt]") {
  TempDir dir;
  const std::string path = write_ring(dir.path, 31, 31, 8, 5);  // 5 branches before `record btrace`
  auto ring = DbtRing::open(path);
  REQUIRE(ring.ok());
  tracer::DbtTracer dbt(std::move(ring).value());
  CHECK(dbt.stats().recorded == 0);
  write_ring(dir.path, 31, 31, 8, 7);  // two more since
  auto all = dbt.read(tracer::BtraceRead::All, 0x401006);
  REQUIRE(all.ok());
  // Two samples: the block between them and the one to the current pc (the oldest start unknown).
  CHECK(all->blocks.size() == 2);
  CHECK(dbt.stats().recorded == 2);
}

TEST_CASE("differential: the dbt recorder records what SoftStep records", "[tracer][btrace][differential][dbt]") {
  REQUIRE_PTRACE();
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  const std::string mode = GENERATE("loops", "recursion", "switch", "fptr", "tailcall", "longjmp", "signal", "plt",
                                    "smc", "rep", "vdso");
  compare_dbt(corpus("tracer_corpus"), {mode});
}

TEST_CASE("differential: dbt, four threads", "[tracer][btrace][differential][dbt][threads]") {
  REQUIRE_PTRACE();
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  compare_dbt(corpus("tracer_corpus"), {"threads"}, "thread_work");
}

TEST_CASE("dbt: the recorder reads the clock as each thread starts, leaves the CPU, exits", "[tracer][btrace][dbt]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  const DbtRun run = record_dbt(corpus("tracer_corpus"), {"threads"});
  REQUIRE(run.clocks.size() == 5);  // the leader and four workers
  for (const auto& c : run.clocks) {
    INFO("head " << c.head << ", " << c.marks.size() << " readings");
    REQUIRE(c.marks.size() >= 2);
    CHECK(c.marks.front().position == 0);  // from its first instruction
    CHECK(c.marks.back().position == c.head);  // read again at its exit
    CHECK(c.marks.front().t_ns >= c.born_ns);
    CHECK(c.marks.back().t_ns == c.exited_ns);
    for (std::size_t i = 1; i < c.marks.size(); ++i) {
      CHECK(c.marks[i].position >= c.marks[i - 1].position);
      CHECK(c.marks[i].t_ns >= c.marks[i - 1].t_ns);
    }
  }
}

TEST_CASE("differential: dbt equals GDB stepping through Valgrind's gdbserver", "[tracer][btrace][differential][dbt]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  // Same process, same addresses: every branch, libc and ld.so included, instruction for
  // instruction.
  const std::string mode = GENERATE("loops", "recursion", "switch", "fptr", "tailcall", "longjmp", "rep", "plt");
  INFO(mode);
  const auto run = step_under_valgrind(corpus("tracer_corpus"), {mode});
  CHECK(!run.stepped.empty());
  check_same(run.stepped, run.recorded, "gdb stepi", "dbt");
}

TEST_CASE("dbt: a fork child writes rings of its own", "[tracer][btrace][dbt]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  const std::string program = corpus("tracer_corpus");
  const auto loops = elf_symbol(program, "loops");
  REQUIRE(loops);
  const DbtRun run = record_dbt(program, {"fork"});
  auto calls_loops = [&](const std::vector<BranchSample>& s) {
    return std::count_if(s.begin(), s.end(), [&](const BranchSample& b) { return b.to == *loops; });
  };
  REQUIRE(run.threads.size() == 1);
  REQUIRE(run.children.size() == 1);
  CHECK(calls_loops(run.children[0]) == 1);  // the child ran loops()
  CHECK(calls_loops(run.threads[0]) == 0);   // and none of it went into the parent's ring
}

TEST_CASE("dbt: a signal that interrupts a blocked system call", "[tracer][btrace][dbt]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  // The read() is interrupted, the handler runs, the read starts again.
  const std::string program = corpus("tracer_corpus");
  const auto handler = elf_symbol(program, "on_alarm");
  REQUIRE(handler);
  const DbtRun run = record_dbt(program, {"restart"});
  REQUIRE(!run.threads.empty());
  check_interrupted_read(run.threads[0], *handler);
  CHECK(run.gaps == 0);
}

TEST_CASE("differential: dbt, dlopen and C++ exceptions", "[tracer][btrace][differential][dbt]") {
  REQUIRE_PTRACE();
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  compare_dbt(corpus("tracer_corpus"), {"dlopen", corpus("libcorpus_plugin.so")});
  compare_dbt(corpus("tracer_corpus_cxx"), {}, {}, "worker_sync");
}

TEST_CASE("RspLink: GDB's side of Valgrind's gdbserver, through vgdb", "[tracer][dbt][vgdb]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  TempDir dir;
  const std::string program = corpus("tracer_corpus");
  const auto begin = elf_symbol(program, "diff_begin");
  REQUIRE(begin);
  const std::string prefix = dir.path + "/vgdb";
  const pid_t pid = start_recorder(dir.path, program, {"loops"}, prefix);
  {
    auto link = tracer::RspLink::spawn({"vgdb", "--vgdb-prefix=" + prefix, "--pid=" + std::to_string(pid), "--wait=20"},
                                       std::chrono::seconds(30));
    REQUIRE(link.ok());
    auto stopped = link->request("?");
    REQUIRE(stopped.ok());
    CHECK(stopped->starts_with("T"));  // waiting for GDB before the first instruction
    auto xml = link->request("qXfer:features:read:target.xml:0,fff");
    REQUIRE(xml.ok());
    CHECK(xml->find("<target") != std::string::npos);
    char z0[64];
    std::snprintf(z0, sizeof z0, "Z0,%lx,1", static_cast<unsigned long>(*begin));
    CHECK(link->request(z0).value_or("") == "OK");
    REQUIRE(link->send("c").ok());
    auto at_break = link->wait_packet(std::chrono::seconds(30));
    REQUIRE(at_break.ok());
    CHECK(at_break->starts_with("T05"));
    auto regs = link->request("g");  // rip after the 16 general registers, little-endian hex
    REQUIRE(regs.ok());
    REQUIRE(regs->size() >= 17 * 16);
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i) {
      value = value << 8 | std::stoul(regs->substr(16 * 16 + static_cast<std::size_t>(i) * 2, 2), nullptr, 16);
    }
    CHECK(value == *begin);
    auto code = link->request("m" + std::string(z0 + 3, std::strchr(z0 + 3, ',')) + ",1");
    REQUIRE(code.ok());
    CHECK(code->size() == 2);  // one byte, our breakpoint hidden
    CHECK(link->request(std::string("z") + (z0 + 1)).value_or("") == "OK");
    REQUIRE(link->send("c").ok());
    auto ended = link->wait_packet(std::chrono::seconds(30));
    REQUIRE(ended.ok());
    CHECK(ended->starts_with("W00"));  // the program ran to its end
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  // And the recorder's ring has the whole run in it.
  const auto paths = tracer::dbt_ring_paths(dir.path, pid);
  REQUIRE(paths.size() == 1);
  auto ring = DbtRing::open(paths[0]);
  REQUIRE(ring.ok());
  CHECK(ring->head() > 1000);
}

TEST_CASE("RspLink: qXfer data comes back whole, escapes and run-length encoding undone", "[tracer][vgdb]") {
  auto link = tracer::RspLink::spawn({"python3", SCRIPTED_STUB});
  REQUIRE(link.ok());
  auto data = link->read_xfer("auxv", "");
  REQUIRE(data.ok());
  std::string want = "#$}*";
  for (char c = 0; c < 8; ++c) {
    want.push_back(c);
  }
  want += "*zzzz";
  CHECK(*data == want);
  auto other = link->read_xfer("features", "target.xml");
  REQUIRE_FALSE(other.ok());  // the empty reply: not supported
}

TEST_CASE("ValgrindTarget: a program under the recorder, driven as GDB drives it", "[tracer][dbt][vgdb]") {
  std::string why;
  if (!dbt_available(&why)) {
    HS_SKIP(why);
  }
  const std::string program = corpus("tracer_corpus");
  const auto begin = elf_symbol(program, "diff_begin");
  const auto end = elf_symbol(program, "diff_end");
  std::vector<char> file;
  Elf64_Ehdr eh;
  REQUIRE(read_elf(program, file, eh));
  REQUIRE(begin);
  REQUIRE(end);
  tracer::ValgrindTarget target(tracer::DbtOptions{DBT_LIB_DIR, 1u << 20});
  auto pid = target.launch({.program = program, .args = {"loops"}, .startup_with_shell = false});
  REQUIRE(pid.ok());
  // The auxiliary vector comes as binary qXfer data (escapes undone): whole entries, the
  // program's own entry point, the page size, AT_NULL last.
  auto auxv = target.auxv();
  REQUIRE(auxv.ok());
  REQUIRE(auxv->size() % 16 == 0);
  std::map<std::uint64_t, std::uint64_t> entries;
  for (std::size_t at = 0; at + 16 <= auxv->size(); at += 16) {
    std::uint64_t kv[2];
    std::memcpy(kv, auxv->data() + at, sizeof kv);
    entries[kv[0]] = kv[1];
  }
  CHECK(entries[AT_ENTRY] == eh.e_entry);
  CHECK(entries[AT_PAGESZ] == 4096);
  std::uint64_t last[2];
  std::memcpy(last, auxv->data() + auxv->size() - 16, sizeof last);
  CHECK(last[0] == AT_NULL);
  const auto threads = target.threads();
  REQUIRE(threads.size() == 1);
  CHECK(threads[0].tid == *pid);
  auto run_to = [&](tracer::Addr addr) {
    REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
    REQUIRE(target.resume(tracer::ResumePlan{{tracer::ThreadAction{}}}).ok());
    std::optional<tracer::StopEvent> ev;
    for (int i = 0; i < 3000 && !ev; ++i) {
      ev = target.poll();
      if (!ev) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    REQUIRE(ev);
    CHECK(ev->reason == tracer::StopReason::SoftwareBreakpoint);
    REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
    auto pc = target.read_register(*pid, 16);  // rip
    REQUIRE(pc.ok());
    REQUIRE(pc->size() == 8);
    std::uint64_t value = 0;
    std::memcpy(&value, pc->data(), 8);
    CHECK(value == addr);
  };
  run_to(*begin);
  auto code = target.read_memory(*begin, 16);
  REQUIRE(code.ok());
  CHECK(code->size() == 16);
  REQUIRE(target.enable_btrace(*pid, {}).ok());
  run_to(*end);
  auto history = target.branch_tracer(*pid)->read(tracer::BtraceRead::All, *end);
  REQUIRE(history.ok());
  CHECK(history->blocks.size() > 10);  // loops() ran between the two
  CHECK(target.branch_tracer(*pid)->stats().backend == "dbt");
  CHECK(target.kill().ok());
  CHECK_FALSE(target.has_process());
}
