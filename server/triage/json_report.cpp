// The report as JSON, schema "hindsight-triage/1" (docs/triage-report.schema.json). Fields may
// be added; none is ever renamed.
#include <nlohmann/json.hpp>

#include "server/triage/json_document.hpp"
#include "server/triage/signal_facts.hpp"
#include "server/triage/writers.hpp"

namespace server::triage {
namespace {

using nlohmann::json;

const char* kind_name(Outcome::Kind kind) {
  switch (kind) {
    case Outcome::Kind::Exit: return "exit";
    case Outcome::Kind::Signal: return "signal";
    case Outcome::Kind::Timeout: return "timeout";
    case Outcome::Kind::Interrupted: return "interrupted";
  }
  return "exit";
}

json location(const tracer::SourceLocation& where) {
  json j{{"function", where.function}, {"module", where.module}};
  if (!where.file.empty()) {
    j["file"] = where.file;
    j["line"] = where.line;
  }
  return j;
}

json with_signature(json j, const CrashSignature& s) {
  if (!s.hash.empty()) {
    j["signature"] = s.hash;
    j["signature_frames"] = s.frames;
  }
  return j;
}

const char* sender_kind(Sender sender) {
  switch (sender) {
    case Sender::Kernel: return "kernel";
    case Sender::Itself: return "itself";
    case Sender::Process: return "process";
    case Sender::Unknown: break;
  }
  return "unknown";
}

json outcome(const Outcome& o) {
  json j{{"kind", kind_name(o.kind)},
         {"cause", cause_name(o.cause())},
         {"exit_status", o.exit_status},
         {"summary", o.summary()}};
  if (o.kind == Outcome::Kind::Interrupted) {
    j["signal"] = signal_name(o.signo);  // the one triage got
    j["signo"] = o.signo;
  }
  if (o.killed) {
    j["killed"] = true;
  }
  if (o.kind == Outcome::Kind::Signal) {
    j["signal"] = signal_name(o.signo);
    j["signo"] = o.signo;
    j["code"] = o.has_si_code ? si_code_name(o.signo, o.si_code) : "unknown";
    j["code_meaning"] = o.has_si_code ? si_code_meaning(o.signo, o.si_code)
                                      : "no siginfo: it was killed without a stop first (SIGKILL)";
    if (o.has_fault_address) {
      j["fault_address"] = hex(o.fault_address);
    }
    if (o.has_si_code && o.sender != Sender::Unknown) {
      json sender{{"kind", sender_kind(o.sender)}};
      if (o.sender_pid != 0) {
        sender["pid"] = o.sender_pid;
      }
      if (!o.sender_name.empty()) {
        sender["name"] = o.sender_name;
      }
      j["sender"] = std::move(sender);
    }
  }
  return j;
}

json thread(const TriageReport& r, const ThreadReport& t) {
  json regs = json::object();
  for (const auto& [name, value] : t.registers) {
    regs[name] = hex(value);
  }
  json frames = json::array();
  for (const auto& f : t.backtrace) {
    json j = location(f.where);
    j["pc"] = hex(f.pc);
    j["inlined"] = f.inlined;
    j["signal_frame"] = f.signal_frame;
    j["tail_call"] = f.tail_call;
    frames.push_back(std::move(j));
  }
  json calls = json::array();
  for (const auto& e : t.history.entries) {
    json j = location(e.where);
    j["address"] = hex(e.address);
    j["depth"] = e.depth;
    j["kind"] = e.kind();
    j["entered_by"] = tracer::entered_name(e.entered);
    j["branches"] = e.branches;
    if (const auto t_ms = r.t_ms(e)) {
      j["t_ms"] = *t_ms;
    }
    calls.push_back(std::move(j));
  }
  json history{{"calls", std::move(calls)}, {"branches", t.history.branches}, {"gaps", t.history.gaps},
               {"dropped", t.history.dropped}, {"branches_recorded", t.branches_recorded},
               {"branches_kept", t.branches_kept},
               {"branches_overwritten", t.branches_recorded - t.branches_kept},
               {"branches_lost", t.branches_recorded - t.branches_kept}};  // the old name of overwritten
  if (!t.history_problem.empty()) {
    history["problem"] = t.history_problem;
  }
  return json{{"tid", t.tid},          {"name", t.name},       {"crashed", crashed(r, t)},
              {"got_signal", t.got_signal}, {"ended", t.ended},  {"registers", regs},
              {"backtrace", frames},        {"history", history}};
}

json with_exception(json j, const std::optional<UncaughtException>& e) {
  if (e) {
    json x{{"function", e->thrown_at.function}};
    if (!e->type.empty()) {
      x["type"] = e->type;
    }
    if (!e->thrown_at.file.empty() && e->thrown_at.line > 0) {
      x["file"] = e->thrown_at.file;
      x["line"] = e->thrown_at.line;
    }
    j["exception"] = std::move(x);
  }
  return j;
}

json program(const TriageReport& r) {
  json tree = json::array();
  for (const auto& step : r.tree) {
    tree.push_back(json{{"name", step.name}, {"pid", step.pid}});
  }
  return json{{"path", r.program}, {"args", r.args}, {"pid", r.pid}, {"root_pid", r.root_pid}, {"tree", std::move(tree)},
              {"process_ms", r.process_ms}};
}

json document(const TriageReport& r) {
  json threads = json::array();
  for (const auto& t : r.threads) {
    threads.push_back(thread(r, t));
  }
  json events = json::array();
  for (const auto& e : r.events) {
    json j{{"t_ms", e.t_ms}, {"kind", e.kind}, {"pid", e.pid}, {"tid", e.tid}};
    if (!e.detail.empty()) {
      j["detail"] = e.detail;
    }
    if (e.number != 0) {
      j["number"] = e.number;
    }
    events.push_back(std::move(j));
  }
  json sources = json::array();
  for (const auto& s : r.sources) {
    sources.push_back(json{{"function", s.function}, {"file", s.file}, {"first_line", s.first_line}, {"line", s.marked_line}, {"text", s.lines}});
  }
  json doc{
      {"schema", "hindsight-triage/1"},
      {"program", program(r)},
      {"outcome", with_exception(with_signature(outcome(r.outcome), r.signature), r.exception)},
      {"tracer",
       {{"backend", r.tracer.backend},
        {"branches_recorded", r.tracer.branches_recorded},
        {"branches_kept", r.tracer.branches_kept},
        {"branches_overwritten", r.tracer.branches_recorded - r.tracer.branches_kept},
        {"branches_lost", r.tracer.branches_recorded - r.tracer.branches_kept},  // the old name of overwritten
        {"slowdown_hint", r.tracer.slowdown_hint},
        {"not_used", r.tracer.not_used}}},
      {"wall_ms", r.wall_ms},
      {"threads", std::move(threads)},
      {"events", std::move(events)},
      {"sources", std::move(sources)},
  };
  return doc;
}

}  // namespace

std::string json_report(const TriageReport& r) { return document(r).dump(2) + "\n"; }

std::string json_report(const std::vector<TriageReport>& reports) { return json_document(reports).dump(2) + "\n"; }

nlohmann::json json_document(const std::vector<TriageReport>& reports) {
  json doc = document(reports.front());
  json processes = json::array();
  for (const auto& r : reports) {
    json one = document(r);
    processes.push_back(json{{"program", one["program"]}, {"outcome", one["outcome"]}, {"threads", one["threads"]},
                             {"sources", one["sources"]}});
  }
  doc["processes"] = std::move(processes);
  return doc;
}

}  // namespace server::triage
