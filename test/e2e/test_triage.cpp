// hindsight triage end to end: real crashing programs (test/progs/triage_cases.c and
// triage_throw.cpp) under each history collector this machine has; the text report, the
// JSON checked against docs/triage-report.schema.json, the HTML page in a headless browser,
// exit statuses, and --serve with a real GDB.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/i386_kernel.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using e2e::ContainsRegex;
using nlohmann::json;

namespace {

struct Triage {
  std::string out;
  std::string err;
  int status = -1;  // exit status (or 128+signal if triage itself was killed)
  json report;      // --json, when written
  std::string transcript() const { return "exit " + std::to_string(status) + "\n--- stdout\n" + out + "\n--- stderr\n" + err; }
};

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hs-triage-" + std::to_string(::getpid()) + "-" + name)).string();
}

bool is_hindsight() { return e2e::server_path().find("gdbserver") == std::string::npos; }

// Why triage --btrace=bts cannot record here (empty: it can), asked of triage once.
const std::string& bts_problem() {
  static const std::string problem = [] {
    e2e::Child probe({.argv = {e2e::server_path(), "triage", "--btrace=bts", "--", "/bin/true"}});
    const auto status = probe.wait(e2e::Clock::now() + std::chrono::seconds(60));
    std::string why = probe.err();
    while (!why.empty() && why.back() == '\n') {
      why.pop_back();
    }
    return e2e::exit_code(status) == 0 ? std::string() : "no Intel BTS here (" + why + ")";
  }();
  return problem;
}

#define SKIP_UNLESS_COLLECTOR(collector)                                                        \
  if (!is_hindsight()) {                                                                      \
    HS_SKIP("triage is Hindsight's own: the server under test is " + e2e::server_path());     \
  }                                                                                           \
  if ((collector) == "dbt" && !HS_DBT_BUILT) {                                                \
    HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)"); \
  }                                                                                           \
  if ((collector) == "bts" && !bts_problem().empty()) {                                       \
    HS_SKIP(bts_problem());                                                                   \
  }

// hindsight triage FLAGS --json=... -- PROG ARGS, through `sh -c` so stdin can be fed.
Triage run_triage(const std::vector<std::string>& flags, const std::string& prog, const std::vector<std::string>& args,
                  const std::string& stdin_text = "", int seconds = 120) {
  const std::string json_path = temp_path("report.json");
  std::filesystem::remove(json_path);
  std::string command = "printf '" + stdin_text + "' | '" + e2e::server_path() + "' triage";
  for (const auto& f : flags) {
    command += " '" + f + "'";
  }
  command += " --json='" + json_path + "' -- '" + (prog.starts_with("/") ? prog : e2e::prog_path(prog)) + "'";
  for (const auto& a : args) {
    command += " '" + a + "'";
  }
  e2e::Child child({.argv = {"/bin/sh", "-c", command}});
  auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(seconds));
  Triage t{child.out(), child.err(), -1, json()};
  if (status && WIFEXITED(*status)) {
    t.status = WEXITSTATUS(*status);
  } else if (!status) {
    t.err += e2e::hang_report(child, "hindsight");  // where it waits, for the failure's message
  }
  if (std::ifstream in(json_path); in) {
    t.report = json::parse(in, nullptr, false);
  }
  std::filesystem::remove(json_path);
  return t;
}

// Runs test/e2e/validate_json.py: 0 valid, 1 invalid (message in *why), 2 no validator.
int validate(const json& document, std::string* why) {
  const std::string path = temp_path("validate.json");
  std::ofstream(path) << document.dump();
  e2e::Child child({.argv = {"/usr/bin/python3", HS_SOURCE_DIR "/test/e2e/validate_json.py",
                             HS_SOURCE_DIR "/docs/triage-report.schema.json", path}});
  auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(30));
  std::filesystem::remove(path);
  *why = child.err();
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : 3;
}

void check_schema(const json& report) {
  std::string why;
  const int valid = validate(report, &why);
  if (valid == 2) {
    WARN("python3-jsonschema is missing: the report is not checked against the schema");
    return;
  }
  INFO(why);
  CHECK(valid == 0);
  // The validator does reject what the schema forbids.
  json broken = report;
  broken["outcome"]["kind"] = "crash";
  CHECK(validate(broken, &why) == 1);
}

const json& crashed_thread(const Triage& t) {
  static const json none = json::object();
  for (const auto& th : t.report["threads"]) {
    if (th.value("crashed", false)) {
      return th;
    }
  }
  return none;
}

std::vector<std::string> call_functions(const json& thread) {
  std::vector<std::string> out;
  for (const auto& c : thread["history"]["calls"]) {
    out.push_back(c["function"].get<std::string>());
  }
  return out;
}

bool backtrace_has(const json& thread, const std::string& function) {
  for (const auto& f : thread["backtrace"]) {
    if (f["function"].get<std::string>().find(function) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Every collector here reads a clock: each call has its time, in order, none later than the
// fatal signal's event (logged once the stop was seen; `killed` when there was no stop) nor
// earlier than the program's start.
void check_call_times(const Triage& t, const std::string& end_event = "signal") {
  if (t.report["tracer"]["backend"] == "bts") {  // no clock in BTS: no time is made up
    for (const auto& th : t.report["threads"]) {
      for (const auto& c : th["history"]["calls"]) {
        CHECK_FALSE(c.contains("t_ms"));
      }
    }
    return;
  }
  double signal_ms = -1;
  for (const auto& e : t.report["events"]) {
    if (e["kind"] == end_event) {
      signal_ms = e["t_ms"].get<double>();
    }
  }
  REQUIRE(signal_ms > 0);
  for (const auto& th : t.report["threads"]) {
    double previous = 0;
    INFO("thread " << th["tid"]);
    REQUIRE(!th["history"]["calls"].empty());
    for (const auto& c : th["history"]["calls"]) {
      INFO(c.dump());
      REQUIRE(c.contains("t_ms"));
      const double ms = c["t_ms"].get<double>();
      CHECK(ms >= previous);
      CHECK(ms <= signal_ms);
      previous = ms;
    }
  }
}

// The collectors every triage case runs under: the software ones, and bts where this machine
// has it (where not, one case below is skipped with the reason, not each of them).
const std::vector<std::string>& collectors() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out{"step", "soft", "dbt", "inproc"};
    if (is_hindsight() && bts_problem().empty()) {
      out.push_back("bts");
    }
    return out;
  }();
  return all;
}

// The same without step, for the cases whose checks do not depend on how the branches were
// recorded, only on the target that ran the program: the ptrace one (soft; step uses the same
// one, a stop per instruction, and costs minutes there) and the recorder (dbt). step is the
// reference in the cases above that compare what the history holds.
std::vector<std::string> fast_collectors() {
  std::vector<std::string> out;
  for (const auto& c : collectors()) {
    if (c != "step") {
      out.push_back(c);
    }
  }
  return out;
}

const char* const kBrowser = "/usr/bin/chromium-headless-shell";

// Loads the page in the headless browser: the DOM after its scripts ran, and the console.
bool load_page(const std::string& path, std::string* dom, std::string* log) {
  e2e::Child b({.argv = {kBrowser, "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom",
                         "file://" + path}});
  auto status = b.wait(e2e::Clock::now() + std::chrono::seconds(60));
  *dom = b.out();
  *log = b.err();
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

// The same under a content security policy that forbids every script (as Jenkins serves
// artifacts; JavaScript off reads the same): a copy with the policy in its head.
bool load_page_without_scripts(const std::string& path, std::string* dom) {
  std::stringstream page;
  page << std::ifstream(path).rdbuf();
  std::string text = page.str();
  const auto head = text.find("<head>");
  if (head == std::string::npos) {
    return false;
  }
  text.insert(head + 6, R"(<meta http-equiv="Content-Security-Policy" content="script-src 'none'">)");
  const std::string copy = path + ".csp.html";
  std::ofstream(copy) << text;
  std::string log;
  const bool loaded = load_page(copy, dom, &log);
  std::filesystem::remove(copy);
  return loaded;
}

// The line of test/progs/triage_cases.c that holds `needle`, as a string.
std::string line_of(const std::string& needle) {
  std::ifstream in(HS_SOURCE_DIR "/test/progs/triage_cases.c");
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (text.find(needle) != std::string::npos) {
      return std::to_string(n);
    }
  }
  return "?";
}

}  // namespace

TEST_CASE("triage: the cause returned before the crash; the history shows it, the backtrace cannot", "[e2e][triage][installed]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"returned"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  CHECK_THAT(t.err, Contains("died of SIGSEGV (SEGV_MAPERR: address not mapped to object) at address 0x0"));
  CHECK_THAT(t.err, Contains("recorded with " + collector));
  const std::string crash_line = line_of("*slot = value;");
  CHECK_THAT(t.err, ContainsRegex(R"(#0 +0x[0-9a-f]+ in consume .*triage_cases\.c:)" + crash_line));
  CHECK_THAT(t.err, ContainsRegex(R"(>\s+)" + crash_line + R"( \|   \*slot = value;)"));  // the faulting line
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["tracer"]["backend"] == collector);
  CHECK(t.report["outcome"]["signal"] == "SIGSEGV");
  CHECK(t.report["outcome"]["cause"] == "crash");
  CHECK(t.report["outcome"]["sender"]["kind"] == "kernel");
  const json& th = crashed_thread(t);
  CHECK(th["got_signal"] == true);
  CHECK_FALSE(backtrace_has(th, "prepare"));
  const auto calls = call_functions(th);
  REQUIRE(calls.size() >= 4);
  // ... crash_after_return -> prepare, <- crash_after_return, -> checksum, <- ..., -> consume
  CHECK(calls.back() == "consume");
  CHECK(std::find(calls.end() - 5, calls.end(), "prepare") != calls.end());
  CHECK(th["history"]["calls"].back()["kind"] == "call");
  CHECK(th["history"]["calls"].back()["file"].get<std::string>().ends_with("triage_cases.c"));
  CHECK(th["history"]["calls"].size() <= 64);
  check_call_times(t);
  // Registers as the program had them; under dbt the simulated CPU has no segment registers:
  // left out rather than shown as 0.
  CHECK(th["registers"].contains("rip"));
  if (collector == "dbt") {
    CHECK_FALSE(th["registers"].contains("cs"));
  } else {
    CHECK(th["registers"]["cs"] == "0x33");
    CHECK(th["registers"]["ss"] == "0x2b");
  }
}

TEST_CASE("triage under Intel BTS: where the machine has it, every triage case runs under bts too", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("bts"));
  REQUIRE(std::find(collectors().begin(), collectors().end(), "bts") != collectors().end());
  auto t = run_triage({"--btrace=bts"}, "triage_cases", {"returned"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  REQUIRE(t.report.is_object());
  CHECK(t.report["tracer"]["backend"] == "bts");
  CHECK(call_functions(crashed_thread(t)).back() == "consume");
}

TEST_CASE("triage: a call through a corrupted function pointer: frame #0 is ??, the history names the caller", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector, "--history=10"}, "triage_cases", {"fnptr"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  REQUIRE(t.report.is_object());
  CHECK_THAT(t.report["outcome"]["fault_address"].get<std::string>(), ContainsRegex("deadbeef$"));
  const json& th = crashed_thread(t);
  REQUIRE(th["backtrace"].size() >= 2);
  CHECK(th["backtrace"][0]["function"] == "");
  CHECK(th["backtrace"][1]["function"] == "call_corrupted");
  const auto calls = call_functions(th);
  REQUIRE(calls.size() >= 3);
  CHECK(calls.back() == "");
  CHECK(calls[calls.size() - 2] == "call_corrupted");
  CHECK(std::find(calls.begin(), calls.end(), "fill_name") != calls.end());
  CHECK(th["history"]["calls"].size() <= 10);
}

TEST_CASE("triage: abort() from an assertion", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"abort"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 6);
  CHECK_THAT(t.err, Contains("Assertion `n < 10 && \"n must be small\"' failed."));  // the program's own stderr
  CHECK_THAT(t.err, Contains("died of SIGABRT (SI_TKILL: sent by tkill, tgkill or raise)"));
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  // Its own abort(): a crash, though a process sent it (itself).
  CHECK(t.report["outcome"]["cause"] == "crash");
  CHECK(t.report["outcome"]["sender"]["kind"] == "itself");
  CHECK(t.report["outcome"]["sender"]["pid"] == t.report["program"]["pid"]);
  const json& th = crashed_thread(t);
  CHECK(backtrace_has(th, "abort"));
  CHECK(backtrace_has(th, "validate"));
  CHECK(backtrace_has(th, "main"));
  // glibc's files as GDB names them (libc6-dbg; its compilation directories are relative):
  // "./stdlib/abort.c", not "stdlib/stdlib/abort.c".
  // pthread_kill jumps to __pthread_kill_implementation (a tail call, in code inlined from
  // __pthread_kill_internal): GDB shows that frame from the call sites; so does triage.
  bool inlined_internal = false;
  bool tail_call = false;
  for (const auto& f : th["backtrace"]) {
    if (f["function"] == "abort") {
      CHECK(f["file"] == "./stdlib/abort.c");
    }
    inlined_internal = inlined_internal || (f["function"] == "__pthread_kill_internal" && f["inlined"] == true);
    tail_call = tail_call || f["tail_call"] == true;
  }
  CHECK(inlined_internal);
  CHECK(tail_call);
  CHECK_THAT(t.err, ContainsRegex(R"(#1 +0x[0-9a-f]+ in __pthread_kill_internal \(inlined\) \./nptl/pthread_kill\.c:\d+)"));
}

TEST_CASE("triage: a crash in code the compiler inlined: a frame for the inlined call, then its caller",
          "[e2e][triage]") {
  auto t = run_triage({"--btrace=soft"}, "triage_cases", {"inlined"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  const json& bt = crashed_thread(t)["backtrace"];
  REQUIRE(bt.size() >= 3);
  CHECK(bt[0]["function"] == "store_through");
  CHECK(bt[0]["inlined"] == true);
  CHECK(bt[0]["line"] == std::stoi(line_of("*p = v; /* the inlined crash */")));
  CHECK(bt[1]["function"] == "fill_through");
  CHECK(bt[1]["inlined"] == false);
  CHECK(bt[1]["pc"] == bt[0]["pc"]);  // the same code: the caller stands at the inlined call
  CHECK(bt[1]["line"] == std::stoi(line_of("store_through(p, checksum(table, 4)); /* the inlined call */")));
  CHECK(bt[2]["function"] == "main");
  CHECK_THAT(t.err, ContainsRegex(R"(#0 +0x[0-9a-f]+ in store_through \(inlined\) .*triage_cases\.c:)"));
}

TEST_CASE("triage: a crash in a second thread while others run; the crashing thread first", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"thread"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  const json& threads = t.report["threads"];
  REQUIRE(threads.size() == 4);
  CHECK(threads[0]["crashed"] == true);
  CHECK(threads[0]["tid"] != t.report["program"]["pid"]);
  CHECK(backtrace_has(threads[0], "worker_crash"));
  CHECK(call_functions(threads[0]).back() == "consume");
  int spinning = 0;
  for (const auto& th : threads) {
    CHECK((th["crashed"] == true) == (&th == &threads[0]));
    spinning += backtrace_has(th, "spin") ? 1 : 0;
  }
  CHECK(spinning == 2);
  int born = 0;
  for (const auto& e : t.report["events"]) {
    born += e["kind"] == "thread_start" && e["tid"] != t.report["program"]["pid"] ? 1 : 0;
  }
  CHECK(born == 3);
  check_call_times(t);
}

TEST_CASE("triage: the event log has libraries loaded and unloaded, in order", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"dlopen"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  CHECK_THAT(t.out, Contains("cos(0) = 1"));
  REQUIRE(t.report.is_object());
  std::vector<std::string> seen;
  double last_ms = -1;
  for (const auto& e : t.report["events"]) {
    CHECK(e["t_ms"].get<double>() >= last_ms);
    last_ms = e["t_ms"].get<double>();
    const std::string detail = e.value("detail", "");
    if (detail.find("libm.so") != std::string::npos || detail.find("libc.so") != std::string::npos ||
        e["kind"] == "signal") {
      seen.push_back(e["kind"].get<std::string>() + " " + (detail.find("libm") != std::string::npos ? "libm" : detail.find("libc") != std::string::npos ? "libc" : detail));
    }
  }
  CHECK(seen == std::vector<std::string>{"library_load libc", "library_load libm", "library_unload libm", "signal SIGSEGV"});
}

TEST_CASE("triage follows children by itself (auto: inproc, the whole tree); --no-follow-fork: not", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("inproc"));
  auto followed = run_triage({}, "triage_cases", {"fork"});
  INFO(followed.transcript());
  CHECK(followed.status == 0);  // the parent's own status: it waited for its child and went on
  REQUIRE(followed.report.is_object());
  check_schema(followed.report);
  CHECK(followed.report["tracer"]["backend"] == "inproc");
  CHECK(followed.report["program"]["pid"] != followed.report["program"]["root_pid"]);
  CHECK(call_functions(crashed_thread(followed)).back() == "consume");
  bool forked = false;
  for (const auto& e : followed.report["events"]) {
    forked = forked || (e["kind"] == "fork" && e["number"] == followed.report["program"]["pid"]);
  }
  CHECK(forked);
  for (const std::string collector : {"soft", "dbt", "inproc"}) {
    auto alone = run_triage({"--btrace=" + collector, "--no-follow-fork"}, "triage_cases", {"fork"});
    INFO(alone.transcript());
    CHECK(alone.status == 0);
    CHECK(alone.report["outcome"]["cause"] == "exit");  // its own end: the child's crash went unseen
  }
}

TEST_CASE("triage: a forked child's crash under each collector", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector, "--follow-fork"}, "triage_cases", {"fork"});
  INFO(t.transcript());
  CHECK(t.status == 0);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["tracer"]["backend"] == collector);
  CHECK(t.report["program"]["pid"] != t.report["program"]["root_pid"]);
  CHECK(t.report["program"]["tree"].size() == 2);
  CHECK(call_functions(crashed_thread(t)).back() == "consume");
  CHECK(t.report["sources"][0]["line"] == std::stoi(line_of("/* the crash */")));
  check_call_times(t);
}

// How many times `text` holds `needle`.
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TEST_CASE("triage: a crash is reported exactly once, in text, JSON, HTML and annotations, for the started program "
          "and for a descendant, under each collector",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  const std::string mode = GENERATE(as<std::string>{}, "returned", "fork");  // the started program's crash, a child's
  INFO("collector " << collector << ", mode " << mode);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string page = temp_path("once.html");
  auto t = run_triage({"--btrace=" + collector, "--follow-fork", "--github-annotations", "--html=" + page},
                      "triage_cases", {mode});
  INFO(t.transcript());
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(occurrences(t.err, "died of SIGSEGV") == 1);  // (the text report is on stderr)
  CHECK_THAT(t.err + t.out, !Contains("killed by SIGSEGV"));
  CHECK(occurrences(t.out, "::error ") == 1);
  // One process reported, whose report is the document's.
  REQUIRE(t.report["processes"].size() == 1);
  CHECK(t.report["processes"][0]["program"]["pid"] == t.report["program"]["pid"]);
  CHECK(t.report["outcome"]["cause"] == "crash");
  if (std::filesystem::exists(kBrowser)) {
    std::string dom, log;
    REQUIRE(load_page(page, &dom, &log));
    INFO(log);
    CHECK_THAT(dom, !Contains("<table id=\"process-list\""));  // (the list of several)
    CHECK_THAT(dom, ContainsRegex(R"(id="crash-function"[^>]*>consume<)"));
  }
  std::filesystem::remove(page);
}

TEST_CASE("triage: its report starts on a line of its own after the program's unfinished output (a file, a terminal)",
          "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  const std::string triage = "'" + e2e::server_path() + "' triage --btrace=soft --color=never -- '" +
                             e2e::prog_path("triage_cases") + "' ";
  auto run = [](const std::string& command) {
    e2e::Child child({.argv = {"/bin/sh", "-c", command}});
    const auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(120));
    INFO(command << "\n" << child.err());
    CHECK(e2e::exit_code(status) == 139);
    return child.out();
  };
  // Into a file with the program's output: a newline after its half line; none after nothing.
  const std::string log = temp_path("partial.log");
  run(triage + "partial > '" + log + "' 2>&1");
  std::stringstream partial;
  partial << std::ifstream(log).rdbuf();
  CHECK(partial.str().starts_with("half a line\nhindsight triage: "));
  run(triage + "returned > '" + log + "' 2>&1");
  std::stringstream whole;
  whole << std::ifstream(log).rdbuf();
  CHECK(whole.str().starts_with("hindsight triage: "));
  std::filesystem::remove(log);
  // On a terminal 40 columns wide (script(1)'s): a line of spaces, then back to its start.
  const std::string screen = run("script -qec \"stty cols 40; " + triage + "partial\" /dev/null");
  CHECK_THAT(screen, Contains("half a line" + std::string(40, ' ') + "\rhindsight triage: "));
}

TEST_CASE("triage --follow-fork: a vfork child that execs runs as it does natively", "[e2e][triage]") {
  // The child returns from vfork through the code its parent returns to, in the same memory:
  // an int3 a collector planted there would kill it with SIGTRAP (it did, under soft).
  const std::string collector = GENERATE(as<std::string>{}, "soft", "step", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  // (A race: the child passes there before or after the int3 is planted. Before the fix about
  // one run in six died of SIGTRAP under soft: several runs there. step and dbt plant no int3 at
  // branches: one run each.)
  const int runs = collector == "soft" ? 6 : 1;
  for (int run = 0; run < runs; ++run) {
    auto t = run_triage({"--btrace=" + collector, "--follow-fork"}, "forks", {"vfork", e2e::prog_path("crash")});
    INFO(t.transcript());
    CHECK_THAT(t.out, ContainsRegex("child [0-9]+ status 111"));  // 100 + SIGSEGV, as natively
  }
}

TEST_CASE("triage --follow-fork: a crash in a program a shell starts (vfork, exec) is reported under "
          "that program's name", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string crash = e2e::prog_path("crash");
  auto t = run_triage({"--btrace=" + collector, "--follow-fork"}, "/bin/sh", {"-c", crash + " one two; echo after $?"});
  INFO(t.transcript());
  CHECK_THAT(t.out, Contains("after 139"));  // the shell goes on as it would natively
  CHECK(t.status == 0);                       // and triage exits with the shell's own status
  REQUIRE(t.report.is_object());
  CHECK(t.report["program"]["tree"].size() == 2);
  CHECK(t.report["program"]["tree"][0]["name"] == "sh");
  CHECK(t.report["program"]["tree"][1]["name"] == "crash");
  check_schema(t.report);
  CHECK(t.report["program"]["path"] == std::filesystem::canonical(crash).string());
  CHECK(t.report["program"]["args"] == json::array({"one", "two"}));
  CHECK(t.report["program"]["pid"] != t.report["program"]["root_pid"]);
  CHECK(t.report["outcome"]["signal"] == "SIGSEGV");
  std::set<std::string> kinds;
  for (const auto& e : t.report["events"]) {
    const int pid = t.report["program"]["pid"].get<int>();
    if (e.value("pid", 0) == pid || e.value("number", 0) == pid) {
      kinds.insert(e["kind"].get<std::string>());
    }
  }
  CHECK(kinds.count("exec") == 1);
  CHECK(kinds.count("signal") == 1);
  CHECK(!crashed_thread(t)["backtrace"].empty());
}

TEST_CASE("triage: a crash's signature is the same across runs and rebuilds, and differs elsewhere",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto signature = [&](const std::string& prog, const std::string& mode) {
    auto t = run_triage({"--btrace=" + collector}, prog, {mode});
    INFO(t.transcript());
    REQUIRE(t.report.is_object());
    check_schema(t.report);
    const std::string hash = t.report["outcome"].value("signature", "");
    CHECK_THAT(t.err, Contains("signature " + hash));
    return std::make_pair(hash, t.report["outcome"].value("signature_frames", json::array()));
  };
  const auto first = signature("triage_cases", "returned");
  CHECK(first.first.size() == 12);
  CHECK(first.second == json::array({"triage_cases!consume", "triage_cases!crash_after_return", "triage_cases!main"}));
  CHECK(signature("triage_cases", "returned").first == first.first);  // another run: other addresses
  // Rebuilt with other code first: every address moved, the names did not.
  CHECK(signature("moved/triage_cases", "returned") == first);
  const auto aborted = signature("triage_cases", "abort");
  CHECK(aborted.first != first.first);
  CHECK(aborted.second[0].get<std::string>().starts_with("triage_cases!"));  // past abort() and raise()
}

TEST_CASE("triage --github-annotations (and GITHUB_ACTIONS=true): an ::error line at the crash's source line",
          "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  auto flagged = run_triage({"--btrace=soft", "--github-annotations"}, "triage_cases", {"returned"});
  INFO(flagged.transcript());
  REQUIRE(flagged.report.is_object());
  const int line = flagged.report["sources"][0]["line"].get<int>();
  const std::string expected = "::error file=" + flagged.report["sources"][0]["file"].get<std::string>() +
                               ",line=" + std::to_string(line) + ",title=crash in consume [" +
                               flagged.report["outcome"]["signature"].get<std::string>() + "]::";
  CHECK_THAT(flagged.out, Contains(expected));
  // On GitHub's runners without the flag, the path relative to the checkout.
  e2e::Child child({.argv = {"/usr/bin/env", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" HS_SOURCE_DIR, e2e::server_path(),
                             "triage", "--btrace=soft", "--", e2e::prog_path("triage_cases"), "returned"}});
  auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(120));
  INFO(child.out() << child.err());
  CHECK(e2e::exit_code(status) == 139);
  CHECK_THAT(child.out(), Contains("::error file=test/progs/triage_cases.c,line=" + std::to_string(line) + ","));
  if (const char* gha = std::getenv("GITHUB_ACTIONS"); gha == nullptr || std::string(gha) != "true") {
    auto plain = run_triage({"--btrace=soft"}, "triage_cases", {"returned"});
    CHECK_THAT(plain.out, !Contains("::error"));
  }
}

TEST_CASE("triage --follow-fork: a driver whose children crash: every crash reported, first first; the "
          "driver's output and status untouched", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string script = "for p in simple crash simple crash; do " + std::string(HS_TEST_PROGS_DIR) +
                             "/$p > /dev/null; echo \"$p $?\"; done; exit 3";
  auto t = run_triage({"--btrace=" + collector, "--follow-fork"}, "/bin/sh", {"-c", script});
  INFO(t.transcript());
  CHECK(t.out == "simple 7\ncrash 139\nsimple 7\ncrash 139\n");  // (simple exits 7), as natively
  CHECK(t.status == 3);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  REQUIRE(t.report["processes"].size() == 2);
  const auto& first = t.report["processes"][0];
  const auto& second = t.report["processes"][1];
  CHECK(first["program"]["pid"] == t.report["program"]["pid"]);  // the top level is the first crash
  CHECK(first["program"]["pid"] != second["program"]["pid"]);
  for (const auto& p : t.report["processes"]) {
    CHECK(p["program"]["path"].get<std::string>().ends_with("/crash"));
    CHECK(p["outcome"]["signal"] == "SIGSEGV");
    CHECK(p["outcome"]["signature"] == first["outcome"]["signature"]);
    CHECK(!p["threads"].empty());
  }
  std::size_t headlines = 0;
  for (auto at = t.err.find("died of SIGSEGV"); at != std::string::npos; at = t.err.find("died of SIGSEGV", at + 1)) {
    ++headlines;
  }
  CHECK(headlines == 2);
}

TEST_CASE("triage: after an exec, the report names the program that crashed", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string crash = e2e::prog_path("crash");
  auto t = run_triage({"--btrace=" + collector}, "/bin/sh", {"-c", "exec " + crash + " one"});
  INFO(t.transcript());
  CHECK(t.status == 139);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["program"]["pid"] == t.report["program"]["root_pid"]);  // the same process, another program
  CHECK(t.report["program"]["path"] == std::filesystem::canonical(crash).string());
  CHECK(t.report["program"]["args"] == json::array({"one"}));
  CHECK_THAT(t.err, Contains("crash (pid "));
  CHECK(call_functions(crashed_thread(t)).back() == "store");
}

TEST_CASE("triage: a driver running five test binaries, the third crashing in a grandchild: its report, "
          "its tree path; the driver untouched", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string dir = HS_TEST_PROGS_DIR;
  const std::string script = "for t in simple simple triage_cases simple simple; do m=; [ $t = triage_cases ] && m=fork; " +
                             dir + "/$t $m > /dev/null; echo \"$t $?\"; done; exit 3";
  auto t = run_triage({"--btrace=" + collector}, "/bin/sh", {"-c", script});
  INFO(t.transcript());
  CHECK(t.out == "simple 7\nsimple 7\ntriage_cases 0\nsimple 7\nsimple 7\n");
  CHECK(t.status == 3);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["processes"].size() == 1);
  const auto& tree = t.report["program"]["tree"];
  REQUIRE(tree.size() == 3);  // sh -> triage_cases -> triage_cases (its forked child)
  CHECK(tree[0]["name"] == "sh");
  CHECK(tree[1]["name"] == "triage_cases");
  CHECK(tree[2]["name"] == "triage_cases");
  CHECK(tree[2]["pid"] == t.report["program"]["pid"]);
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/triage_cases"));
  CHECK(t.report["sources"][0]["line"] == std::stoi(line_of("/* the crash */")));
  const auto calls = call_functions(crashed_thread(t));
  CHECK(calls.back() == "consume");
  CHECK(std::find(calls.begin(), calls.end(), "prepare") != calls.end());  // the cause, long returned
  CHECK_THAT(t.err, Contains("process tree: sh "));
}

TEST_CASE("triage under auto: a static program is recorded in process, the recorder mapped by the server with no "
          "loader of the program's",
          "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("inproc"));
  auto t = run_triage({}, "tls_static", {});
  INFO(t.transcript());
  CHECK(t.status == 0);
  CHECK(t.out == "tls_main=1\n");
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["tracer"]["backend"] == "inproc");
  CHECK(t.report["tracer"]["not_used"].empty());
}

TEST_CASE("triage: python3 running a crashing child (subprocess), under auto: done in seconds", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("inproc"));
  const std::string crash = e2e::prog_path("crash");
  const auto begun = e2e::Clock::now();
  auto t = run_triage({}, "/usr/bin/python3",
                      {"-c", "import subprocess, sys; r = subprocess.run([\"" + crash +
                                 "\", \"x\"]); print(\"child\", r.returncode); sys.exit(4)"});
  const auto seconds = std::chrono::duration<double>(e2e::Clock::now() - begun).count();
  INFO(t.transcript() << "\n" << seconds << " s");
  CHECK(t.out == "about to crash\nchild -11\n");
  CHECK(t.status == 4);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["tracer"]["backend"] == "inproc");
  CHECK(t.report["program"]["path"] == std::filesystem::canonical(crash).string());
  CHECK(t.report["program"]["tree"][0]["name"] == "python3");
  CHECK(call_functions(crashed_thread(t)).back() == "store");
  CHECK(seconds < 60);  // it took over 10 minutes under soft; a few seconds under dbt, less under inproc
}

TEST_CASE("triage under dbt: a setuid program in the tree runs natively, as it must, and the log says so",
          "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  const std::string setuid = "/bin/mount";  // util-linux, setuid root on Debian
  struct stat st {};
  if (::stat(setuid.c_str(), &st) != 0 || (st.st_mode & S_ISUID) == 0) {
    HS_SKIP(setuid + " is not a setuid program here");
  }
  auto t = run_triage({"--btrace=dbt"}, "/bin/sh", {"-c", setuid + " --version > /dev/null; echo status $?; " +
                                                              e2e::prog_path("crash")});
  INFO(t.transcript());
  CHECK_THAT(t.out, Contains("status 0"));  // Valgrind would have refused the exec (EACCES)
  REQUIRE(t.report.is_object());
  bool unrecorded = false;
  for (const auto& e : t.report["events"]) {
    unrecorded = unrecorded || (e["kind"] == "unrecorded" && e.value("detail", "").find("setuid") != std::string::npos);
  }
  CHECK(unrecorded);
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/crash"));  // what comes after is recorded
}

TEST_CASE("triage under inproc: a static program exec'd in the tree is recorded too", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("inproc"));
  const std::string stat = e2e::prog_path("tls_static");
  // Exec'd by a vfork child (the shell's way to run a command), then by a fork child (a subshell).
  auto t = run_triage({"--btrace=inproc"}, "/bin/sh",
                      {"-c", stat + "; (exec " + stat + "); " + e2e::prog_path("crash") + " x"});
  INFO(t.transcript());
  CHECK(t.out == "tls_main=1\ntls_main=1\nabout to crash\n");
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  std::size_t unrecorded = 0;
  for (const auto& e : t.report["events"]) {
    unrecorded += e["kind"] == "unrecorded";
  }
  CHECK(unrecorded == 0);
  CHECK(t.report["tracer"]["backend"] == "inproc");
  // What comes after is recorded.
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/crash"));
  CHECK(call_functions(crashed_thread(t)).back() == "store");
}

TEST_CASE("triage: a descendant killed from outside (SIGKILL): reported with what it recorded", "[e2e][triage]") {
  // (inproc: the shell's wait for it, in sigsuspend, once hung there.)
  const std::string collector = GENERATE(as<std::string>{}, "dbt", "soft", "inproc");
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string script = e2e::prog_path("sleeper") + " > /dev/null & p=$!; sleep 2; kill -9 $p; wait $p; echo \"child $?\"";
  auto t = run_triage({"--btrace=" + collector}, "/bin/sh", {"-c", script});
  INFO(t.transcript());
  CHECK(t.out == "child 137\n");
  CHECK(t.status == 0);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["processes"].size() == 1);
  CHECK(t.report["outcome"]["signal"] == "SIGKILL");
  CHECK(t.report["outcome"]["cause"] == "killed");
  CHECK_THAT(t.err, Contains("killed by SIGKILL\n"));
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/sleeper"));
  CHECK(t.report["program"]["tree"].size() == 2);
  REQUIRE(!t.report["threads"].empty());
  CHECK(t.report["threads"][0]["ended"] == true);
  const auto calls = call_functions(t.report["threads"][0]);
  CHECK(std::find(calls.begin(), calls.end(), "tick") != calls.end());  // its own code, named
}

// The report of the process that ran `program`, among every process's (empty when none).
json report_of(const Triage& t, const std::string& program) {
  for (const auto& p : t.report["processes"]) {
    if (p["program"]["path"].get<std::string>().ends_with("/" + program)) {
      return p;
    }
  }
  return json();
}

TEST_CASE("triage: a CI timeout that kills its whole process group: the hung child is reported too, with what it "
          "recorded", "[e2e][triage]") {
  // GNU timeout without --foreground kills its group, itself with it: nobody in the tree is
  // left to reap the child, which comes to triage, the tree's reaper. 5 s: under soft on a
  // loaded machine the child must get past the dynamic loader to its own `tick`.
  const std::string collector = GENERATE(as<std::string>{}, "dbt", "soft");
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "/usr/bin/timeout", {"-s", "KILL", "5", e2e::prog_path("sleeper")});
  INFO(t.transcript());
  CHECK(t.status == 128 + 9);  // timeout's own end
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  REQUIRE(t.report["processes"].size() == 2);
  const json hung = report_of(t, "sleeper");
  REQUIRE(hung.is_object());
  CHECK(hung["outcome"]["signal"] == "SIGKILL");
  CHECK(hung["program"]["tree"].size() == 2);  // timeout -> sleeper
  REQUIRE(!hung["threads"].empty());
  CHECK(hung["threads"][0]["ended"] == true);
  const auto calls = call_functions(hung["threads"][0]);
  CHECK(std::find(calls.begin(), calls.end(), "tick") != calls.end());
  CHECK(report_of(t, "timeout")["outcome"]["signal"] == "SIGKILL");
  bool event = false;
  for (const auto& e : t.report["events"]) {
    event = event || (e["kind"] == "killed" && e["pid"] == hung["program"]["pid"]);
  }
  CHECK(event);
  // Each header gives that process's own time: the hung child's from its fork, less than the run's.
  const double own = hung["program"]["process_ms"].get<double>();
  CHECK(own > 2000);
  CHECK(own < t.report["wall_ms"].get<double>());
}

TEST_CASE("triage: a driver that exits before its children: a child that crashes later, one killed later, "
          "reported; triage exits with the driver's status", "[e2e][triage]") {
  const std::string collector = GENERATE(as<std::string>{}, "dbt", "soft");
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string crash = e2e::prog_path("crash");
  const std::string sleeper = e2e::prog_path("sleeper");
  // The driver starts both and exits 0 at once; the crash comes a second later, the kill two.
  const std::string script = "(sleep 1; exec " + crash + " > /dev/null) & " + sleeper +
                             " > /dev/null & p=$!; (sleep 2; kill -9 $p) & exit 0";
  auto t = run_triage({"--btrace=" + collector}, "/bin/sh", {"-c", script});
  INFO(t.transcript());
  CHECK(t.status == 0);
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  const json crashed = report_of(t, "crash");
  REQUIRE(crashed.is_object());
  CHECK(crashed["outcome"]["signal"] == "SIGSEGV");
  CHECK(call_functions(crashed["threads"][0]).back() == "store");
  const json killed = report_of(t, "sleeper");
  REQUIRE(killed.is_object());
  CHECK(killed["outcome"]["signal"] == "SIGKILL");
  CHECK(killed["threads"][0]["ended"] == true);
}

TEST_CASE("triage | head: its stdout closing does not end triage: the program's status, and the reports still "
          "written", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  const std::string json_path = temp_path("piped.json");
  std::filesystem::remove(json_path);
  // The program crashes after head has gone; GitHub annotations go to triage's stdout.
  const std::string command = "GITHUB_ACTIONS=true '" + e2e::server_path() + "' triage --btrace=soft --json='" +
                              json_path + "' -- /bin/sh -c 'echo one; sleep 1; " + e2e::prog_path("crash") +
                              " > /dev/null' | head -c 1 > /dev/null; echo \"triage ${PIPESTATUS[0]}\"";
  e2e::Child child({.argv = {"/bin/bash", "-c", command}});
  auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(120));
  INFO(child.out() << "\n" << child.err());
  REQUIRE(status);
  CHECK_THAT(child.out(), Contains("triage 139"));  // sh's status: its child's crash, not 141
  CHECK_THAT(child.err(), Contains("died of SIGSEGV"));
  std::ifstream in(json_path);
  REQUIRE(in);
  const json report = json::parse(in, nullptr, false);
  CHECK(report["outcome"]["signal"] == "SIGSEGV");
  std::filesystem::remove(json_path);
}

TEST_CASE("triage: a test that `timeout -s TERM` ends is terminated by SIGTERM from timeout, no crash",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string page = temp_path("term.html");
  auto t = run_triage({"--btrace=" + collector, "--github-annotations", "--html=" + page}, "/usr/bin/timeout",
                      {"-s", "TERM", "2", e2e::prog_path("sleeper"), "60"});
  INFO(t.transcript());
  CHECK(t.status == 124);  // timeout's own, as natively
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["processes"].size() == 1);
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/sleeper"));
  const json& outcome = t.report["outcome"];
  const int timeout_pid = t.report["program"]["root_pid"].get<int>();
  const std::string headline = "terminated by SIGTERM from timeout (pid " + std::to_string(timeout_pid) + ")";
  CHECK(outcome["cause"] == "terminated");
  CHECK(outcome["kind"] == "signal");
  CHECK(outcome["signal"] == "SIGTERM");
  CHECK(outcome["code"] == "SI_USER");
  CHECK(outcome["sender"] == json{{"kind", "process"}, {"pid", timeout_pid}, {"name", "timeout"}});
  CHECK(outcome["summary"] == headline);
  CHECK_FALSE(outcome.contains("signature"));  // no crash to group
  CHECK_THAT(t.err, Contains(headline + "\n"));
  CHECK_THAT(t.err, Contains("(received SIGTERM)"));
  CHECK_THAT(t.err, !Contains("crash"));
  REQUIRE(!t.report["threads"].empty());
  const json& th = t.report["threads"][0];
  CHECK(th["got_signal"] == true);
  CHECK(th["crashed"] == false);
  CHECK(!th["backtrace"].empty());  // where the hung test was (in its loop; under load, maybe still starting)
  CHECK_THAT(t.out, ContainsRegex("::error (file=[^,]+,line=[0-9]+,)?title=terminated by SIGTERM( in [^:]+)?::[^\n]*" +
                                  std::string("terminated by SIGTERM from timeout")));
  CHECK_THAT(t.out, !Contains("title=crash"));
  REQUIRE(std::filesystem::exists(page));
  if (std::filesystem::exists(kBrowser) && collector == "soft") {  // the page once: it reads the same JSON
    std::string dom, log;
    REQUIRE(load_page(page, &dom, &log));
    INFO(log);
    CHECK_THAT(log, !Contains("Uncaught"));
    CHECK_THAT(dom, Contains(headline));
    CHECK_THAT(dom, Contains("Function when SIGTERM came:"));
    CHECK_THAT(dom, Contains("\u201csleeper\u201d (received SIGTERM)</h2>"));
    CHECK_THAT(dom, !Contains("\u201d (crashed)"));
  }
  std::filesystem::remove(page);
}

TEST_CASE("triage -- bash -c 'timeout -s KILL 2 ./hang' (the docs' example): the SIGKILLed grandchild's history reads "
          "like any other, libc named from its own maps, calls and returns paired",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "/bin/bash",
                      {"-c", "timeout -s KILL 2 '" + e2e::prog_path("triage_cases") + "' hang"});
  INFO(t.transcript());
  CHECK(t.status == 137);
  REQUIRE(t.report.is_object());
  const json* hang = nullptr;
  for (const auto& p : t.report["processes"]) {
    if (p["program"]["path"].get<std::string>().ends_with("/triage_cases")) {
      hang = &p;
    }
  }
  REQUIRE(hang != nullptr);
  CHECK((*hang)["outcome"]["cause"] == "killed");
  REQUIRE(!(*hang)["threads"].empty());
  const json& calls = (*hang)["threads"][0]["history"]["calls"];
  REQUIRE(calls.size() > 8);
  bool libc_named = false, returned = false;
  int deepest = 0;
  for (const auto& c : calls) {
    const std::string module = c["module"].get<std::string>();
    if (module.find("libc.so") != std::string::npos) {
      CHECK_FALSE(c["function"].get<std::string>().empty());  // (a libc address with no name: its maps were not known)
      libc_named = libc_named || c["function"] == "usleep" || c["function"].get<std::string>().starts_with("clock_nanosleep");
    }
    returned = returned || c["kind"] == "return";
    deepest = std::max(deepest, c["depth"].get<int>());
  }
  CHECK(libc_named);
  CHECK(returned);
  CHECK(deepest < 8);  // the loop's calls return: no depth that only grows
}

TEST_CASE("triage: a test that `timeout -s KILL` ends is killed by SIGKILL, no sender made up (soft, dbt)",
          "[e2e][triage]") {
  const std::string collector = GENERATE(as<std::string>{}, "soft", "dbt");
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  // --foreground: timeout kills its child alone, not its process group (that case: the orphans'
  // reports, a tree's reaping).
  auto t = run_triage({"--btrace=" + collector, "--github-annotations"}, "/usr/bin/timeout",
                      {"--foreground", "-s", "KILL", "2", e2e::prog_path("sleeper"), "60"});
  INFO(t.transcript());
  CHECK(t.status == 137);  // timeout's own, as natively
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["processes"].size() == 1);
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/sleeper"));
  CHECK(t.report["outcome"]["cause"] == "killed");
  CHECK(t.report["outcome"]["summary"] == "killed by SIGKILL");
  CHECK_FALSE(t.report["outcome"].contains("sender"));  // no siginfo: nobody to name
  CHECK_THAT(t.err, Contains("killed by SIGKILL\n"));
  CHECK_THAT(t.err, !Contains("crash"));
  REQUIRE(!t.report["threads"].empty());
  CHECK(t.report["threads"][0]["ended"] == true);
  // No stack left: the annotation points where it was last recorded with a source line.
  CHECK_THAT(t.out, ContainsRegex("::error file=[^,]+,line=[0-9]+,title=killed by SIGKILL in "));
}

TEST_CASE("triage --json, --html, --output: written for a Python script's uncaught exception (exit 1, no crash), "
          "under auto (inproc)", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("inproc"));
  const std::string page = temp_path("exit.html");
  const std::string text = temp_path("exit.txt");
  auto t = run_triage({"--html=" + page, "--output=" + text, "--github-annotations"}, "/usr/bin/python3",
                      {"-c", "raise ValueError(\"bad input\")"}, "", 300);
  INFO(t.transcript());
  CHECK(t.status == 1);
  CHECK_THAT(t.err, Contains("ValueError: bad input"));
  CHECK_THAT(t.err, !Contains("hindsight triage"));  // its streams are its own
  CHECK(t.out.empty());                               // no annotation for an exit
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["tracer"]["backend"] == "inproc");
  CHECK(t.report["outcome"]["cause"] == "exit");
  CHECK(t.report["outcome"]["exit_status"] == 1);
  CHECK(t.report["outcome"]["summary"] == "exited with status 1, no crash");
  CHECK(t.report["processes"].size() == 1);
  std::ifstream in(text);
  std::string first;
  std::getline(in, first);
  CHECK_THAT(first, ContainsRegex(R"(^hindsight triage: /usr/bin/python3 \(pid \d+\) exited with status 1, no crash$)"));
  REQUIRE(std::filesystem::exists(page));
  if (std::filesystem::exists(kBrowser)) {
    std::string dom, log;
    REQUIRE(load_page(page, &dom, &log));
    INFO(log);
    CHECK_THAT(log, !Contains("Uncaught"));
    CHECK_THAT(dom, Contains("exited with status 1, no crash"));
    CHECK_THAT(dom, Contains("It exited: no thread to show."));
  }
  std::filesystem::remove(page);
  std::filesystem::remove(text);
}

TEST_CASE("triage --keep-rings under dbt: every process's rings stay in the directory, with the tree's events",
          "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  const std::string dir = temp_path("rings");
  std::filesystem::remove_all(dir);
  const std::string simple = e2e::prog_path("simple");
  auto t = run_triage({"--btrace=dbt", "--keep-rings=" + dir}, "/bin/sh", {"-c", simple + "; " + simple + "; exit 5"});
  INFO(t.transcript());
  CHECK(t.status == 5);
  CHECK(t.report["outcome"]["summary"] == "exited with status 5, no crash");
  std::set<std::string> pids;
  bool events = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    events = events || name == "hsdbt.events";
    if (name.starts_with("hsdbt.") && name.find('.', 6) != std::string::npos && entry.is_regular_file()) {
      pids.insert(name.substr(6, name.find('.', 6) - 6));
    }
    CHECK_FALSE(entry.is_fifo());  // Valgrind's FIFOs went
  }
  CHECK(events);
  CHECK(pids.size() == 3);  // the shell and both runs of simple, which ended cleanly
  std::filesystem::remove_all(dir);
  auto soft = run_triage({"--btrace=soft", "--keep-rings=" + dir}, "simple", {});
  CHECK_THAT(soft.err, Contains("--keep-rings: recorded with soft, which keeps no ring files"));
  std::filesystem::remove_all(dir);
  // A directory with something in it is refused, not mixed into: triage's own failure status.
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/mine") << "x";
  auto busy = run_triage({"--btrace=dbt", "--keep-rings=" + dir}, "simple", {});
  CHECK(busy.status == 125);
  CHECK_THAT(busy.err, Contains("the directory to keep rings in must be new or empty"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("triage --timeout under dbt after the started program exec'd: it still ends, named as it is", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  const auto begun = e2e::Clock::now();
  auto t = run_triage({"--btrace=dbt", "--timeout=3"}, "/bin/sh", {"-c", "exec " + e2e::prog_path("sleeper") + " 60"});
  INFO(t.transcript());
  CHECK(t.status == 124);
  CHECK(e2e::Clock::now() - begun < std::chrono::seconds(40));
  REQUIRE(t.report.is_object());
  CHECK(t.report["outcome"]["kind"] == "timeout");
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/sleeper"));
}

// The pids "pid=N" lines in a sleeper's output name (test/progs/sleeper.c).
std::vector<pid_t> sleeper_pids(const std::string& out) {
  std::vector<pid_t> pids;
  for (std::size_t at = out.find("pid="); at != std::string::npos; at = out.find("pid=", at + 4)) {
    pids.push_back(std::stoi(out.substr(at + 4)));
  }
  return pids;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

TEST_CASE("triage interrupted (SIGTERM to triage; soft): the report written with that outcome; the tree gone; exit 143",
          "[e2e][triage]") {
  // A CI runner cancelling the job. Under soft: the outcome is the run's, not a collector's.
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  const std::string json_path = temp_path("interrupted.json");
  std::filesystem::remove(json_path);
  const std::string sleeper = e2e::prog_path("sleeper");
  e2e::Child child({.argv = {e2e::server_path(), "triage", "--btrace=soft", "--json=" + json_path, "--", "/bin/sh",
                             "-c", sleeper + " 60 & exec " + sleeper + " 60"}});
  REQUIRE(child.pump_until(e2e::Clock::now() + std::chrono::seconds(60),
                           [&] { return sleeper_pids(child.out()).size() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few ticks recorded
  REQUIRE(::kill(child.pid(), SIGTERM) == 0);
  const auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(60));
  Triage t{child.out(), child.err(), status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, json()};
  if (std::ifstream in(json_path); in) {
    t.report = json::parse(in, nullptr, false);
  }
  std::filesystem::remove(json_path);
  INFO(t.transcript());
  CHECK(t.status == 128 + SIGTERM);  // as a shell's job
  CHECK_THAT(t.err, Contains("interrupted by SIGTERM: stopped"));
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["outcome"]["kind"] == "interrupted");
  CHECK(t.report["outcome"]["cause"] == "interrupted");
  CHECK(t.report["outcome"]["signal"] == "SIGTERM");
  CHECK(t.report["outcome"]["exit_status"] == 143);
  CHECK(t.report["program"]["path"].get<std::string>().ends_with("/sleeper"));  // after its exec
  REQUIRE(!t.report["threads"].empty());
  CHECK(t.report["threads"][0]["crashed"] == false);
  CHECK(backtrace_has(t.report["threads"][0], "main"));
  const auto calls = call_functions(t.report["threads"][0]);
  CHECK(std::find(calls.begin(), calls.end(), "tick") != calls.end());
  for (const pid_t pid : sleeper_pids(t.out)) {
    INFO("pid " << pid);
    CHECK_FALSE(alive(pid));  // killed and reaped: nothing of the tree left
  }
}

TEST_CASE("triage --timeout under dbt: a descendant still running is killed and reported with what it recorded",
          "[e2e][triage]") {
  // Under dbt a descendant cannot be stopped (no link to it): killed, its rings read.
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  auto t = run_triage({"--btrace=dbt", "--timeout=2"}, "/bin/bash",
                      {"-c", e2e::prog_path("sleeper") + " 60 & wait; echo never"});
  INFO(t.transcript());
  CHECK(t.status == 124);
  CHECK_THAT(t.out, !Contains("never"));
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  const json driver = report_of(t, "bash");
  const json spinner = report_of(t, "sleeper");
  REQUIRE(driver.is_object());
  REQUIRE(spinner.is_object());
  CHECK(driver["outcome"]["summary"] == "was still running at --timeout: stopped");
  CHECK(spinner["outcome"]["summary"] == "was still running at --timeout: killed");
  CHECK(spinner["outcome"]["killed"] == true);
  CHECK(spinner["program"]["tree"].size() == 2);  // bash -> sleeper
  REQUIRE(!spinner["threads"].empty());
  CHECK(spinner["threads"][0]["ended"] == true);
  const auto calls = call_functions(spinner["threads"][0]);
  CHECK(std::find(calls.begin(), calls.end(), "tick") != calls.end());
  const auto pids = sleeper_pids(t.out);
  REQUIRE(pids.size() == 1);
  CHECK(spinner["program"]["pid"] == pids[0]);
  CHECK_FALSE(alive(pids[0]));
  CHECK_FALSE(alive(driver["program"]["pid"].get<pid_t>()));
}

TEST_CASE("triage: a C++ exception nobody catches", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_throw", {}, "", 240);
  INFO(t.transcript());
  CHECK(t.status == 128 + 6);
  CHECK_THAT(t.err, Contains("what():  bad port: '1234567'"));
  REQUIRE(t.report.is_object());
  const json& th = crashed_thread(t);
  CHECK(backtrace_has(th, "__cxa_throw"));
  CHECK(backtrace_has(th, "parse_port"));
  CHECK(backtrace_has(th, "configure"));
}

TEST_CASE("triage: two programs that end in std::terminate for different exceptions: their own groups, their throw "
          "sites and types, named by the program's own frames (Sentry's rule), not the runtime's",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(fast_collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto parse = run_triage({"--btrace=" + collector, "--github-annotations"}, "triage_throw", {}, "", 240);
  auto map = run_triage({"--btrace=" + collector, "--github-annotations"}, "triage_throw_map", {}, "", 240);
  INFO(parse.transcript() << "\n" << map.transcript());
  REQUIRE(parse.report.is_object());
  REQUIRE(map.report.is_object());
  check_schema(parse.report);
  check_schema(map.report);
  CHECK(parse.report["outcome"]["signature"] != map.report["outcome"]["signature"]);
  // The group is named by the program's frames, the throw's first.
  CHECK_THAT(parse.report["outcome"]["signature_frames"][0].get<std::string>(), Contains("triage_throw!") && Contains("parse_port"));
  CHECK_THAT(map.report["outcome"]["signature_frames"][0].get<std::string>(), Contains("triage_throw_map!") && Contains("port_of"));
  for (const auto& f : map.report["outcome"]["signature_frames"]) {
    CHECK_THAT(f.get<std::string>(), !Contains("libstdc++") && !Contains("terminate") && !Contains("abort"));
  }
  // The exception: its type and where it was thrown.
  const json& thrown = parse.report["outcome"]["exception"];
  CHECK(thrown["type"] == "std::invalid_argument");
  CHECK_THAT(thrown["function"].get<std::string>(), Contains("parse_port"));
  CHECK(thrown["file"].get<std::string>().ends_with("triage_throw.cpp"));
  CHECK(thrown["line"] == 11);
  const json& at = map.report["outcome"]["exception"];
  CHECK(at["type"] == "std::out_of_range");
  CHECK_THAT(at["function"].get<std::string>(), Contains("port_of"));
  CHECK(at["file"].get<std::string>().ends_with("triage_throw_map.cpp"));
  CHECK_THAT(map.err, ContainsRegex("uncaught std::out_of_range, thrown in [a-z:() ]*port_of at [^ ]*triage_throw_map.cpp:"));
  // The excerpt and the annotation point at the program's line, not at <bits/stl_map.h>.
  REQUIRE(!map.report["sources"].empty());
  CHECK(map.report["sources"][0]["file"].get<std::string>().ends_with("triage_throw_map.cpp"));
  CHECK_THAT(map.err, ContainsRegex("\n  [a-z:() ]*port_of at [^ ]*triage_throw_map.cpp:[0-9]+\n"));
  CHECK_THAT(map.out, ContainsRegex("::error file=[^,]*triage_throw_map.cpp,line=[0-9]+,title=crash in [^ ]*port_of \\["));
}

TEST_CASE("triage: a clean exit passes stdin, stdout, stderr and the status through; only --json says it exited",
          "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"exit"}, "first line\\nsecond\\n");
  INFO(t.transcript());
  CHECK(t.status == 3);
  CHECK(t.out == "first line\nsecond\n");
  CHECK(t.err == "to stderr\n");
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["outcome"]["kind"] == "exit");
  CHECK(t.report["outcome"]["cause"] == "exit");
  CHECK(t.report["outcome"]["exit_status"] == 3);
  CHECK(t.report["tracer"]["backend"] == collector);
  CHECK(t.report["threads"].empty());
}

TEST_CASE("triage: signals the program handles or ignores are not crashes", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector}, "triage_cases", {"handled"});
  INFO(t.transcript());
  CHECK(t.status == 0);
  CHECK(t.err.empty());
}

TEST_CASE("triage: --timeout stops a hung program and reports every thread", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  auto t = run_triage({"--btrace=" + collector, "--timeout=3"}, "triage_cases", {"hang"});
  INFO(t.transcript());
  CHECK(t.status == 124);
  CHECK_THAT(t.err, Contains("was still running at --timeout"));
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["outcome"]["kind"] == "timeout");
  CHECK(t.report["outcome"]["exit_status"] == 124);
  REQUIRE(t.report["threads"].size() == 1);
  CHECK(backtrace_has(t.report["threads"][0], "main"));
  // Stopped at the timeout, not crashed.
  CHECK(t.report["threads"][0]["crashed"] == false);
  CHECK_THAT(t.err, !Contains("(crashed)"));
}

TEST_CASE("triage: a program killed from outside (SIGKILL): each thread's history up to its end", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  const std::string json_path = temp_path("killed.json");
  const std::string page = temp_path("killed.html");
  e2e::Child child({.argv = {e2e::server_path(), "triage", "--btrace=" + collector, "--json=" + json_path,
                             "--html=" + page, "--", e2e::prog_path("triage_cases"), "killme"}});
  REQUIRE(child.wait_for_text("looping\n", e2e::Clock::now() + std::chrono::seconds(120), true));
  const pid_t pid = std::stoi(child.out().substr(child.out().find("ready ") + 6));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // both threads round their loops
  // Named as it is natively, every thread (what `pgrep -x`, `ps -C` and `killall` look for),
  // under the dbt recorder too.
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    CHECK(name == "triage_cases");
  }
  REQUIRE(::kill(pid, SIGKILL) == 0);
  const auto status = child.wait(e2e::Clock::now() + std::chrono::seconds(60));
  Triage t{child.out(), child.err(), status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, json()};
  if (std::ifstream in(json_path); in) {
    t.report = json::parse(in, nullptr, false);
  }
  std::filesystem::remove(json_path);
  INFO(t.transcript());
  CHECK(t.status == 128 + 9);
  CHECK_THAT(t.err, Contains("killed by SIGKILL\n"));
  CHECK_THAT(t.err, Contains("(gone before it could be stopped: no registers or stack left"));
  REQUIRE(t.report.is_object());
  check_schema(t.report);
  CHECK(t.report["outcome"]["signal"] == "SIGKILL");
  CHECK(t.report["outcome"]["cause"] == "killed");
  CHECK(t.report["outcome"]["code"] == "unknown");
  const json& threads = t.report["threads"];
  REQUIRE(threads.size() == 2);
  CHECK(threads[0]["tid"] == pid);  // the leader first
  for (const auto& th : threads) {
    CHECK(th["ended"] == true);
    CHECK(th["crashed"] == false);
    CHECK(th["registers"].empty());
    CHECK(th["backtrace"].empty());
  }
  const auto leader = call_functions(threads[0]);
  CHECK(std::find(leader.begin(), leader.end(), "churn") != leader.end());
  // A call into libc goes through the program's PLT: its stub named as GDB names it.
  CHECK(std::find(leader.begin(), leader.end(), "usleep@plt") != leader.end());
  const auto ticker = call_functions(threads[1]);
  CHECK(std::find(ticker.begin(), ticker.end(), "ticker") != ticker.end());
  check_call_times(t, "killed");
  std::string dom, log;
  if (std::filesystem::exists(kBrowser) && collector == "soft") {  // the page once: it reads the same JSON
    REQUIRE(load_page(page, &dom, &log));
    CHECK_THAT(log, !Contains("Uncaught"));
    CHECK_THAT(dom, Contains("Last recorded function:"));
    CHECK_THAT(dom, Contains("Gone before it could be stopped"));
  }
  std::filesystem::remove(page);
}

TEST_CASE("triage: a program that cannot start, and a bad command line, get triage's own statuses", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  auto missing = run_triage({"--btrace=soft"}, "/nonexistent/prog", {});
  INFO(missing.transcript());
  CHECK(missing.status == 125);
  CHECK_THAT(missing.err, Contains("Cannot exec /nonexistent/prog"));
  e2e::Child bad({.argv = {e2e::server_path(), "triage", "--history=zero", "--", "/bin/true"}});
  auto status = bad.wait(e2e::Clock::now() + std::chrono::seconds(10));
  REQUIRE(status);
  CHECK(WEXITSTATUS(*status) == 2);
}

TEST_CASE("triage of an i386 program where the kernel refuses it: said in plain words, triage's own status",
          "[e2e][triage][i386]") {
  if (const std::string why = e2e::i386_not_refused(); !why.empty()) {
    HS_SKIP(why);
  }
  for (const std::vector<std::string>& flags : {std::vector<std::string>{}, std::vector<std::string>{"--btrace=soft"}}) {
    auto t = run_triage(flags, "simple_m32", {}, "", 30);
    INFO((flags.empty() ? "auto" : flags[0]) << "\n" << t.transcript());
    CHECK(t.status == 125);
    CHECK_THAT(t.err, Contains("Cannot exec " + e2e::prog_path("simple_m32") + ": Exec format error.\n"));
    CHECK_THAT(t.err, Contains(e2e::kIa32Word));
    CHECK_THAT(t.err, !Contains("failed to start tool"));
  }
}

TEST_CASE("triage --html: the page shows the crash in a headless browser, and the same with scripts forbidden (it has none)", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  if (!std::filesystem::exists(kBrowser)) {
    HS_SKIP("no headless browser (Debian's chromium-headless-shell) installed");
  }
  const std::string page = temp_path("report.html");
  auto t = run_triage({"--btrace=" + collector, "--html=" + page}, "triage_cases", {"returned"});
  INFO(t.transcript());
  REQUIRE(std::filesystem::exists(page));
  auto load = load_page;
  std::string dom, log;
  REQUIRE(load(page, &dom, &log));
  INFO(log);
  CHECK_THAT(log, !Contains("Uncaught"));
  CHECK_THAT(dom, ContainsRegex(R"(id="crash-function"[^>]*>consume<)"));
  CHECK_THAT(dom, Contains("<svg"));
  CHECK_THAT(dom, Contains("data-axis=\"time\""));  // the timeline is against time: every call has one
  CHECK_THAT(dom, Contains("stopped here"));
  // The same check sees a page whose script fails.
  const std::string broken = temp_path("broken.html");
  std::ofstream(broken) << "<html><body><script>no_such_function();</script></body></html>";
  REQUIRE(load(broken, &dom, &log));
  CHECK_THAT(log, Contains("Uncaught"));
  // With scripts forbidden (a strict content security policy, JavaScript off): all of it still
  // there, for the page has none.
  REQUIRE(load_page_without_scripts(page, &dom));
  CHECK_THAT(dom, !Contains("<script"));
  CHECK_THAT(dom, ContainsRegex(R"(id="verdict"[^>]*>[^<]*died of SIGSEGV)"));
  CHECK_THAT(dom, ContainsRegex(R"(id="crash-function"[^>]*>consume<)"));
  CHECK_THAT(dom, Contains("data-axis=\"time\""));
  CHECK_THAT(dom, Contains("stopped here"));
  CHECK_THAT(dom, Contains("<h3>Backtrace</h3>"));
  CHECK_THAT(dom, ContainsRegex(R"(<td class="mono">consume</td>)"));  // frame #0 of the backtrace
  CHECK_THAT(dom, Contains("<table id=\"events\">"));
  // The policy is in force there: a page that writes itself with a script shows what it had.
  const std::string scripted = temp_path("scripted.html");
  std::ofstream(scripted) << "<html><head></head><body><p id=\"x\">static</p>"
                             "<script>document.getElementById('x').textContent = 'scripted';</script></body></html>";
  REQUIRE(load_page_without_scripts(scripted, &dom));
  CHECK_THAT(dom, Contains(">static<"));
  std::filesystem::remove(page);
  std::filesystem::remove(broken);
  std::filesystem::remove(scripted);
}

TEST_CASE("triage --html: several crashed processes: a list on top, linked to each one's section", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  if (!std::filesystem::exists(kBrowser)) {
    HS_SKIP("no headless browser (Debian's chromium-headless-shell) installed");
  }
  const std::string page = temp_path("tree.html");
  const std::string script = "for p in crash simple crash; do " + std::string(HS_TEST_PROGS_DIR) + "/$p > /dev/null; done; exit 0";
  auto t = run_triage({"--btrace=dbt", "--html=" + page}, "/bin/sh", {"-c", script});
  INFO(t.transcript());
  REQUIRE(t.report.is_object());
  REQUIRE(t.report["processes"].size() == 2);
  const std::string second = std::to_string(t.report["processes"][1]["program"]["pid"].get<int>());
  std::string dom, log;
  REQUIRE(load_page(page, &dom, &log));
  INFO(log);
  CHECK_THAT(log, !Contains("Uncaught"));
  CHECK_THAT(dom, Contains("2 processes crashed"));
  CHECK_THAT(dom, Contains("href=\"#process-1\""));
  CHECK_THAT(dom, ContainsRegex(R"(id="crash-function"[^>]*>store<)"));
  // Each one's section, linked from the list: the second's verdict names its pid.
  CHECK_THAT(dom, Contains("<section id=\"process-1\">"));
  CHECK_THAT(dom, ContainsRegex("id=\"verdict-1\"[^>]*>[^<]*crash \\(pid " + second + "\\)"));
  std::filesystem::remove(page);
}

TEST_CASE("triage --serve: GDB connects at the crash with the history already recorded", "[e2e][triage]") {
  const std::string collector = GENERATE(from_range(collectors()));
  INFO("collector " << collector);
  SKIP_UNLESS_COLLECTOR(collector);
  e2e::Child triage({.argv = {e2e::server_path(), "triage", "--btrace=" + collector, "--serve=127.0.0.1:0",
                              "--serve-timeout=60", "--", e2e::prog_path("triage_cases"), "returned"}});
  REQUIRE(triage.wait_for_text("Listening on port ", e2e::Clock::now() + std::chrono::seconds(60)));
  triage.pump_until(e2e::Clock::now() + std::chrono::seconds(2),
                    [&] { return triage.err().find('\n', triage.err().find("Listening on port ")) != std::string::npos; });
  const int port = std::stoi(triage.err().substr(triage.err().find("Listening on port ") + 18));
  CHECK_THAT(triage.err(), Contains("died of SIGSEGV"));  // the report comes first
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target remote 127.0.0.1:" + std::to_string(port),
                           "-ex", "info record", "-ex", "record function-call-history", "-ex", "reverse-step",
                           "-ex", "reverse-step", "-ex", "bt", "-ex", "record goto end", "-ex", "kill"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait(e2e::Clock::now() + std::chrono::seconds(120)));
  auto status = triage.wait(e2e::Clock::now() + std::chrono::seconds(30));
  INFO(gdb.out());
  INFO(triage.err());
  CHECK_THAT(gdb.out(), Contains("in consume (value=30) at ../test/progs/triage_cases.c:" + line_of("*slot = value;")));
  CHECK_THAT(gdb.out(), Contains("Active record target: record-btrace"));
  CHECK_THAT(gdb.out(), ContainsRegex(R"(\d+\s+prepare\n(.*\n)*\d+\s+crash_after_return\n\d+\s+checksum\n\d+\s+crash_after_return\n\d+\s+consume\n)"));
  const std::string call_line = line_of("  consume(sum);");
  CHECK_THAT(gdb.out(), Contains("crash_after_return () at ../test/progs/triage_cases.c:" + call_line));
  // GDB 13's first reverse-step goes back to the start of line 77 and the second into the caller;
  // GDB 16's first reaches the caller and the second steps back into checksum(), called before.
  CHECK_THAT(gdb.out(), ContainsRegex(R"(\n#[01]  (0x[0-9a-f]+ in )?crash_after_return \(\) at \.\./test/progs/triage_cases\.c:\d+\n)"));
  REQUIRE(status);
  CHECK(WEXITSTATUS(*status) == 128 + 11);
}

TEST_CASE("triage --serve under dbt: a descendant's crash is where GDB comes in, history included", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("dbt"));
  e2e::Child triage({.argv = {e2e::server_path(), "triage", "--btrace=dbt", "--serve=127.0.0.1:0", "--serve-timeout=60",
                              "--", "/bin/sh", "-c", e2e::prog_path("triage_cases") + " returned; echo after"}});
  REQUIRE(triage.wait_for_text("Listening on port ", e2e::Clock::now() + std::chrono::seconds(60)));
  triage.pump_until(e2e::Clock::now() + std::chrono::seconds(2),
                    [&] { return triage.err().find('\n', triage.err().find("Listening on port ")) != std::string::npos; });
  const int port = std::stoi(triage.err().substr(triage.err().find("Listening on port ") + 18));
  CHECK_THAT(triage.err(), Contains("triage_cases is stopped at the fault"));
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target remote 127.0.0.1:" + std::to_string(port),
                           "-ex", "bt", "-ex", "record function-call-history", "-ex", "kill"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait(e2e::Clock::now() + std::chrono::seconds(120)));
  auto status = triage.wait(e2e::Clock::now() + std::chrono::seconds(30));
  INFO(gdb.out());
  INFO(triage.err());
  CHECK_THAT(gdb.out(), Contains("#0  0x"));
  CHECK_THAT(gdb.out(), Contains(" in consume (value=30) at ../test/progs/triage_cases.c:" + line_of("*slot = value;")));
  CHECK_THAT(gdb.out(), ContainsRegex(R"(\d+\s+prepare\n(.*\n)*\d+\s+consume\n)"));
  REQUIRE(status);  // GDB killed the crashed process; the rest of the tree goes with it
}

TEST_CASE("triage --serve-timeout: no GDB came; triage gives up, kills the program, exits with the crash status", "[e2e][triage]") {
  SKIP_UNLESS_COLLECTOR(std::string("soft"));
  const auto start = e2e::Clock::now();
  auto t = run_triage({"--btrace=soft", "--serve=127.0.0.1:0", "--serve-timeout=1"}, "triage_cases", {"returned"});
  INFO(t.transcript());
  CHECK(t.status == 128 + 11);
  CHECK_THAT(t.err, Contains("No GDB connected in time"));
  CHECK(e2e::Clock::now() - start < std::chrono::seconds(30));
}
