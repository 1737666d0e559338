// The report writers on a hand-made report: the JSON's fields and types, the text's verdict,
// and an HTML page whose embedded data cannot close its script element early.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <csignal>

#include "server/triage/writers.hpp"

using namespace server::triage;

namespace {

TriageReport sample() {
  TriageReport r;
  r.program = "/abs/prog";
  r.args = {"</script><b>x"};
  r.pid = 42;
  r.outcome.kind = Outcome::Kind::Signal;
  r.outcome.signo = SIGSEGV;
  r.outcome.si_code = 1;
  r.outcome.has_si_code = true;
  r.outcome.has_fault_address = true;
  r.outcome.fault_address = 0;
  r.outcome.sender = Sender::Kernel;
  r.outcome.exit_status = 139;
  r.tracer.backend = "soft";
  ThreadReport t;
  t.tid = 42;
  t.name = "prog";
  t.got_signal = true;
  t.registers = {{"rip", 0x401136}};
  t.backtrace = {FrameReport{0x401136, {"consume", "/abs/prog.c", 18, "/abs/prog", 0x401120}, false, false}};
  tracer::HistoryEntry e;
  e.where = {"consume", "/abs/prog.c", 17, "/abs/prog", 0x401120};
  e.depth = 1;
  e.entered = tracer::Entered::Call;
  e.branches = 3;
  e.t_ns = 5'000'250'000;
  tracer::HistoryEntry untimed = e;
  untimed.t_ns = 0;
  t.history.entries = {untimed, e};
  r.threads = {t};
  r.events = {tracer::TraceEvent{1.5, "signal", 42, 42, "SIGSEGV", 11}};
  r.start_ns = 5'000'000'000;
  return r;
}

}  // namespace

TEST_CASE("json_report: the documented shape", "[triage][report]") {
  auto j = nlohmann::json::parse(json_report(sample()));
  CHECK(j["schema"] == "hindsight-triage/1");
  CHECK(j["program"]["path"] == "/abs/prog");
  CHECK(j["program"]["pid"] == 42);
  CHECK(j["outcome"]["kind"] == "signal");
  CHECK(j["outcome"]["cause"] == "crash");
  CHECK(j["outcome"]["sender"]["kind"] == "kernel");
  CHECK_FALSE(j["outcome"]["sender"].contains("pid"));
  CHECK(j["outcome"]["signal"] == "SIGSEGV");
  CHECK(j["outcome"]["signo"] == 11);
  CHECK(j["outcome"]["code"] == "SEGV_MAPERR");
  CHECK(j["outcome"]["fault_address"] == "0x0");
  CHECK(j["outcome"]["exit_status"] == 139);
  CHECK(j["tracer"]["backend"] == "soft");
  const auto& t = j["threads"][0];
  CHECK(t["crashed"] == true);
  CHECK(t["got_signal"] == true);
  CHECK(t["registers"]["rip"] == "0x401136");
  CHECK(t["backtrace"][0]["function"] == "consume");
  CHECK(t["backtrace"][0]["line"] == 18);
  CHECK(t["backtrace"][0]["inlined"] == false);
  CHECK(t["history"]["calls"][1]["kind"] == "call");
  CHECK(t["history"]["calls"][1]["depth"] == 1);
  CHECK(t["history"]["calls"][1]["branches"] == 3);
  CHECK(t["history"]["calls"][1]["t_ms"] == 0.25);  // since the start
  CHECK_FALSE(t["history"]["calls"][0].contains("t_ms"));  // not known: absent, never made up
  CHECK(j["events"][0]["t_ms"] == 1.5);
  CHECK(j["events"][0]["kind"] == "signal");
}

TEST_CASE("text_report: the verdict first, colour only when asked", "[triage][report]") {
  const std::string plain = text_report(sample(), false);
  CHECK(plain.rfind("hindsight triage: /abs/prog (pid 42) died of SIGSEGV (SEGV_MAPERR", 0) == 0);
  CHECK(plain.find("\033[") == std::string::npos);
  CHECK(plain.find("-> consume prog.c:17  [3 branches]") != std::string::npos);
  CHECK(plain.find("     0.250 ms    -> consume") != std::string::npos);  // the time where known
  CHECK(text_report(sample(), true).find("\033[") != std::string::npos);
}

TEST_CASE("text_report: a long event log keeps the processes on the way to each crash, and says what it left out",
          "[triage][report]") {
  TriageReport r = sample();  // pid 42
  r.root_pid = 10;
  r.tree = {TreeStep{"sh", 10}, TreeStep{"prog", 42}};
  r.events.clear();
  for (int pid = 1000; pid < 1300; ++pid) {  // 300 other processes: a fork and an exit each
    r.events.push_back(tracer::TraceEvent{1.0, "fork", 10, 10, {}, pid});
    r.events.push_back(tracer::TraceEvent{2.0, "exit", pid, pid, {}, 0});
  }
  r.events.push_back(tracer::TraceEvent{3.0, "signal", 42, 42, "SIGSEGV", 11});
  const std::string text = text_report(r, false);
  CHECK(text.find("exit           pid 1000") == std::string::npos);
  CHECK(text.find("fork           pid 10 tid 10  (1000)") != std::string::npos);  // the started program's own
  CHECK(text.find("signal         pid 42") != std::string::npos);
  CHECK(text.find("(300 events of 300 other processes left out: the JSON report has them)") != std::string::npos);
  // A second crash elsewhere keeps its own way too.
  TriageReport other = r;
  other.pid = 1100;
  other.tree = {TreeStep{"sh", 10}, TreeStep{"prog", 1100}};
  const std::string both = text_report(std::vector<TriageReport>{r, other}, false);
  CHECK(both.find("exit           pid 1100") != std::string::npos);
  CHECK(both.find("exit           pid 1001") == std::string::npos);
  // A short log is shown whole.
  r.events.resize(20);
  CHECK(text_report(r, false).find("exit           pid 1000") != std::string::npos);
}

TEST_CASE("writers: branches the ring overwrote are kept-of, not lost; lost is for gaps", "[triage][report]") {
  TriageReport r = sample();
  r.threads[0].branches_recorded = 2470041;
  r.threads[0].branches_kept = 65536;
  r.tracer.branches_recorded = 2470041;
  r.tracer.branches_kept = 65536;
  const std::string text = text_report(r, false);
  CHECK(text.find("recorded with soft (kept 65536 of 2470041 branches)") != std::string::npos);
  CHECK(text.find("oldest first (kept 65536 of 2470041 branches)") != std::string::npos);
  CHECK(text.find("lost") == std::string::npos);
  auto j = nlohmann::json::parse(json_report(r));
  CHECK(j["tracer"]["branches_kept"] == 65536);
  CHECK(j["tracer"]["branches_overwritten"] == 2470041 - 65536);
  CHECK(j["threads"][0]["history"]["branches_kept"] == 65536);
  // Nothing overwritten: the count alone.
  r.tracer.branches_kept = r.tracer.branches_recorded;
  CHECK(text_report(r, false).find("recorded with soft (2470041 branches)") != std::string::npos);
  CHECK(html_report(r).find("recorded with soft: 2470041 branches.") != std::string::npos);
  r.tracer.branches_kept = 65536;
  CHECK(html_report(r).find("recorded with soft: kept 65536 of 2470041 branches.") != std::string::npos);
}

TEST_CASE("html_report: self-contained and script-free; the program's text is escaped, never markup", "[triage][report]") {
  const std::string page = html_report(sample());
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("</script><b>x") == std::string::npos);
  CHECK(page.find("&lt;/script&gt;&lt;b&gt;x") != std::string::npos);
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // no other URL: no network
  CHECK(page.find("https://") == std::string::npos);
}

TEST_CASE("writers: a process killed outright; no siginfo, threads with their history only", "[triage][report]") {
  TriageReport r = sample();
  r.outcome = Outcome{};
  r.outcome.kind = Outcome::Kind::Signal;
  r.outcome.signo = SIGKILL;
  r.outcome.exit_status = 128 + SIGKILL;
  ThreadReport& t = r.threads.front();
  t.got_signal = false;
  t.ended = true;
  t.name.clear();
  t.registers.clear();
  t.backtrace.clear();
  auto j = nlohmann::json::parse(json_report(r));
  CHECK(j["outcome"]["signal"] == "SIGKILL");
  CHECK(j["outcome"]["code"] == "unknown");  // never a guess such as SI_USER
  CHECK(j["outcome"]["cause"] == "killed");
  CHECK_FALSE(j["outcome"].contains("sender"));
  CHECK(j["threads"][0]["ended"] == true);
  CHECK(j["threads"][0]["history"]["calls"].size() == 2);
  const std::string text = text_report(r, false);
  CHECK(text.rfind("hindsight triage: /abs/prog (pid 42) killed by SIGKILL\n", 0) == 0);
  CHECK(text.find("Thread 42\n  (gone before it could be stopped") != std::string::npos);
  CHECK(text.find("-> consume prog.c:17  [3 branches]   <== last recorded") != std::string::npos);
  CHECK(text.find("registers:") == std::string::npos);
  // No stack left: the annotation points where it was last recorded.
  CHECK(github_annotation(r, "/abs") ==
        "::error file=prog.c,line=17,title=killed by SIGKILL in consume::/abs/prog (pid 42) killed by SIGKILL\n");
}

TEST_CASE("github_annotation: a process killed outright points at the newest recorded code with a source line, or "
          "nowhere", "[triage][report]") {
  TriageReport r = sample();
  r.outcome = Outcome{};
  r.outcome.kind = Outcome::Kind::Signal;
  r.outcome.signo = SIGKILL;
  r.outcome.exit_status = 128 + SIGKILL;
  ThreadReport& t = r.threads.front();
  t.got_signal = false;
  t.ended = true;
  t.backtrace.clear();
  tracer::HistoryEntry spin = t.history.entries.back();
  spin.where = {"spin", "/abs/spin.c", 9, "/abs/prog", 0x401200};
  tracer::HistoryEntry libc = spin;
  libc.where = {"nanosleep", "", 0, "/lib/libc.so.6", 0x7f0000001000};  // no line information
  t.history.entries = {spin, libc};
  CHECK(github_annotation(r, "/abs").starts_with("::error file=spin.c,line=9,title=killed by SIGKILL in spin::"));
  // Terminated, stopped where no frame has a line (sources empty): the history too.
  r.outcome.has_si_code = true;
  r.outcome.signo = SIGTERM;
  r.outcome.sender = Sender::Process;
  r.outcome.sender_pid = 7;
  CHECK(github_annotation(r, "/abs").starts_with("::error file=spin.c,line=9,title=terminated by SIGTERM in spin::"));
  // Nothing it ran has a line: no file= (GitHub shows it on the run's summary).
  t.history.entries = {libc};
  CHECK(github_annotation(r, "/abs").starts_with("::error title=terminated by SIGTERM::"));
  r.threads.clear();
  CHECK(github_annotation(r, "/abs").starts_with("::error title=terminated by SIGTERM::"));
}

TEST_CASE("writers: triage interrupted (SIGTERM): its own outcome in text, JSON, page and annotation",
          "[triage][report]") {
  TriageReport r = sample();
  r.outcome = Outcome{};
  r.outcome.kind = Outcome::Kind::Interrupted;
  r.outcome.signo = SIGTERM;
  r.outcome.exit_status = 128 + SIGTERM;
  r.threads[0].got_signal = false;
  r.sources = {SourceExcerpt{"consume", "/work/repo/prog.c", 16, {"x", "y", "z"}, 18}};
  const std::string text = text_report(r, false);
  CHECK(text.rfind("hindsight triage: /abs/prog (pid 42) interrupted by SIGTERM: stopped\n", 0) == 0);
  CHECK(text.find("(crashed)") == std::string::npos);
  auto j = nlohmann::json::parse(json_report(r));
  CHECK(j["outcome"]["kind"] == "interrupted");
  CHECK(j["outcome"]["cause"] == "interrupted");
  CHECK(j["outcome"]["signal"] == "SIGTERM");
  CHECK(j["outcome"]["exit_status"] == 143);
  CHECK_FALSE(j["outcome"].contains("killed"));
  CHECK(html_report(r).find(">/abs/prog (pid 42) interrupted by SIGTERM: stopped</h1>") != std::string::npos);
  CHECK(html_report(r).find(">Function when triage got SIGTERM:<") != std::string::npos);
  CHECK(github_annotation(r, "/work/repo").starts_with("::error file=prog.c,line=18,title=interrupted by SIGTERM in consume::"));
  r.outcome.killed = true;
  CHECK(nlohmann::json::parse(json_report(r))["outcome"]["killed"] == true);
  CHECK(nlohmann::json::parse(json_report(r))["outcome"]["summary"] == "interrupted by SIGTERM: killed");
}

TEST_CASE("writers: a test terminated by SIGTERM from timeout is no crash, in text, JSON, page and annotation",
          "[triage][report]") {
  TriageReport r = sample();
  r.outcome.signo = SIGTERM;
  r.outcome.si_code = SI_USER;
  r.outcome.has_fault_address = false;
  r.outcome.sender = Sender::Process;
  r.outcome.sender_pid = 812;
  r.outcome.sender_name = "timeout";
  r.outcome.exit_status = 128 + SIGTERM;
  r.sources = {SourceExcerpt{"consume", "/work/repo/prog.c", 16, {"x", "y", "z"}, 18}};
  const std::string text = text_report(r, false);
  CHECK(text.rfind("hindsight triage: /abs/prog (pid 42) terminated by SIGTERM from timeout (pid 812)\n", 0) == 0);
  CHECK(text.find("Thread 42 \"prog\" (received SIGTERM)\n") != std::string::npos);
  CHECK(text.find("crash") == std::string::npos);
  CHECK(text.find("-> consume prog.c:17  [3 branches]   <== here") != std::string::npos);  // where it was
  auto j = nlohmann::json::parse(json_report(r));
  CHECK(j["outcome"]["kind"] == "signal");
  CHECK(j["outcome"]["cause"] == "terminated");
  CHECK(j["outcome"]["summary"] == "terminated by SIGTERM from timeout (pid 812)");
  CHECK(j["outcome"]["code"] == "SI_USER");
  CHECK(j["outcome"]["sender"] == nlohmann::json{{"kind", "process"}, {"pid", 812}, {"name", "timeout"}});
  CHECK(j["threads"][0]["crashed"] == false);
  CHECK(j["threads"][0]["got_signal"] == true);
  CHECK(html_report(r).find("terminated by SIGTERM from timeout (pid 812)</h1>") != std::string::npos);
  CHECK(html_report(r).find(">Function when SIGTERM came:<") != std::string::npos);
  CHECK(github_annotation(r, "/work/repo") ==
        "::error file=prog.c,line=18,title=terminated by SIGTERM in consume::/abs/prog (pid 42) terminated by SIGTERM "
        "from timeout (pid 812)\n");
  // Stopped at --timeout: a title of its own too.
  r.outcome = Outcome{};
  r.outcome.kind = Outcome::Kind::Timeout;
  r.threads[0].got_signal = false;
  CHECK(github_annotation(r, "/work/repo").starts_with("::error file=prog.c,line=18,title=timeout in consume::"));
}

TEST_CASE("writers: a clean exit still makes a report: the outcome, the events, no thread, no annotation",
          "[triage][report]") {
  TriageReport r = sample();
  r.outcome = Outcome{};
  r.outcome.exit_status = 1;
  r.threads.clear();
  r.events = {tracer::TraceEvent{9.5, "exit", 42, 42, {}, 1}};
  const std::string text = text_report(std::vector<TriageReport>{r}, false);
  CHECK(text.rfind("hindsight triage: /abs/prog (pid 42) exited with status 1, no crash\n  recorded with soft; ", 0) == 0);
  CHECK(text.find("no thread could be examined") == std::string::npos);
  CHECK(text.find("exit           pid 42 tid 42  (1)") != std::string::npos);
  auto j = nlohmann::json::parse(json_report(std::vector<TriageReport>{r}));
  CHECK(j["outcome"]["kind"] == "exit");
  CHECK(j["outcome"]["cause"] == "exit");
  CHECK(j["outcome"]["exit_status"] == 1);
  CHECK(j["outcome"]["summary"] == "exited with status 1, no crash");
  CHECK(j["threads"].empty());
  CHECK(j["processes"].size() == 1);
  CHECK(html_report(r).find("exited with status 1, no crash</h1>") != std::string::npos);
  CHECK(html_report(r).find("It exited: no thread to show.") != std::string::npos);
  CHECK(github_annotation(r, "").empty());  // the step's status says it
}

TEST_CASE("github_annotation: one ::error line at the faulting line, escaped, relative to the checkout",
          "[triage][report]") {
  TriageReport r = sample();
  r.sources = {SourceExcerpt{"consume", "/work/repo/src/a,b:c.c", 16, {"x", "y", "z"}, 18}};
  r.signature.hash = "0123456789ab";
  const std::string line = github_annotation(r, "/work/repo");
  CHECK(line == "::error file=src/a%2Cb%3Ac.c,line=18,title=crash in consume [0123456789ab]::/abs/prog (pid 42) "
                "died of SIGSEGV (SEGV_MAPERR: address not mapped to object) at address 0x0%0Asignature 0123456789ab\n");
  // Outside the checkout (a system library), the path stays absolute.
  CHECK(github_annotation(r, "/elsewhere").starts_with("::error file=/work/repo/src/a%2Cb%3Ac.c,line=18,"));
  // The source file cannot be read here: the frame's line all the same.
  r.sources.clear();
  CHECK(github_annotation(r, "/abs").starts_with("::error file=prog.c,line=18,title=crash in consume [0123456789ab]::"));
  // No line known anywhere: no file.
  r.threads.front().backtrace.front().where.file.clear();
  r.threads.front().history.entries.clear();
  CHECK(github_annotation(r, "/work/repo").starts_with("::error title=crash [0123456789ab]::"));
}
