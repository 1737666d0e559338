// The report as one self-contained HTML page, plain HTML and SVG with no script (it reads the same
// with JavaScript off, and under a content security policy that forbids scripts, as Jenkins
// serves artifacts): the verdict, each thread's calls before the stop as a timeline (depth
// against time where the collector kept it, else call order; the last call marked), the calls
// as a table, the backtrace, source excerpts, the events. Several processes reported: a list of
// them on top, linked to each one's section (#process-N). Rendered from the JSON document.
#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/triage/json_document.hpp"
#include "server/triage/writers.hpp"

namespace server::triage {
namespace {

using nlohmann::json;

constexpr const char* kHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#222;max-width:70em}
h1{font-size:1.3em;color:#b00020}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ddd}
code,pre,td.mono{font-family:ui-monospace,monospace;font-size:13px}
table{border-collapse:collapse}td,th{padding:.15em .6em;text-align:left;vertical-align:top}
tr:nth-child(even){background:#f6f6f6}.crash{color:#b00020;font-weight:bold}.dim{color:#777}
pre.src{background:#f6f6f6;padding:.5em;overflow:auto}pre.src .mark{background:#ffd7d7;display:block}
svg{background:#fbfbfb;border:1px solid #ddd}svg text{font:11px ui-monospace,monospace}
section+section{border-top:3px solid #ddd;margin-top:2em}
</style></head><body>
)HTML";

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string name(const json& frame) {
  const std::string f = str(frame, "function");
  return f.empty() ? "??" : f;
}

std::string place(const json& frame) {
  const std::string file = str(frame, "file");
  return file.empty() ? base_name(str(frame, "module")) : base_name(file) + ":" + std::to_string(frame.value("line", 0));
}

std::string kept_of(const json& j) {
  const auto kept = j.value("branches_kept", 0ull), recorded = j.value("branches_recorded", 0ull);
  return kept >= recorded ? fmt::format("{} branches", recorded) : fmt::format("kept {} of {} branches", kept, recorded);
}

std::string ms(double t) { return fmt::format("{:.3f}", t); }

// An element id, unique on the page: the first process's as it always was, the others' suffixed.
std::string id(const char* what, std::size_t process) {
  return process == 0 ? std::string(what) : fmt::format("{}-{}", what, process);
}

// Depth (down) against time (right) where every call has its time, else against call order.
// `stopped`: the calls end where the fatal signal stopped the thread; `last_recorded`: where a
// thread killed without a stop was last seen.
std::string timeline(const json& calls, bool stopped, bool last_recorded) {
  constexpr double kRowH = 18, kLeft = 10, kOrderStep = 22;
  const std::size_t n = calls.size();
  const bool timed = n > 1 && std::all_of(calls.begin(), calls.end(), [](const json& c) { return c.contains("t_ms"); });
  const double t0 = timed ? calls.front()["t_ms"].get<double>() : 0, t1 = timed ? calls.back()["t_ms"].get<double>() : 0;
  const double plot_w = timed ? 900 : static_cast<double>(n) * kOrderStep;
  auto x_of = [&](std::size_t i) {
    return timed ? kLeft + (calls[i]["t_ms"].get<double>() - t0) / std::max(t1 - t0, 1e-9) * plot_w
                 : kLeft + static_cast<double>(i) * kOrderStep;
  };
  int max_depth = 0;
  for (const auto& c : calls) {
    max_depth = std::max(max_depth, c.value("depth", 0));
  }
  const double axis_h = timed ? 30 : 0;
  const double width = std::max(400.0, kLeft + plot_w + 260), height = (max_depth + 2) * kRowH + 20 + axis_h;
  std::string svg = fmt::format(R"(<svg width="{:.0f}" height="{:.0f}" role="img" data-axis="{}">)", width, height,
                                timed ? "time" : "order");
  svg += fmt::format("<title>calls before the stop: depth (down) against {} (right)</title>", timed ? "time" : "call order");
  for (std::size_t i = 0; i < n; ++i) {
    const json& c = calls[i];
    const bool last = i + 1 == n;
    const bool ret = str(c, "kind") == "return";
    const double x = x_of(i), y = 10 + c.value("depth", 0) * kRowH;
    const double w = last ? (timed ? 8 : kOrderStep - 3) : std::max(2.0, x_of(i + 1) - x - 1);
    std::string tip = (ret ? "return to " : "call ") + name(c) + " " + place(c) + fmt::format(" [{} branches]", c.value("branches", 0));
    if (c.contains("t_ms")) {
      tip += " at " + ms(c["t_ms"].get<double>()) + " ms";
    }
    svg += fmt::format(R"(<rect x="{:.1f}" y="{:.0f}" width="{:.1f}" height="{:.0f}" rx="2" fill="{}"><title>{}</title></rect>)", x, y,
                       w, kRowH - 4, last && stopped ? "#d32f2f" : ret ? "#90a4ae" : "#42a5f5", esc(tip));
    if (!last && w > 7.0 * static_cast<double>(name(c).size()) + 8) {
      svg += fmt::format(R"(<text x="{:.1f}" y="{:.0f}" fill="#fff">{}</text>)", x + 4, y + kRowH - 8, esc(name(c)));
    }
    if (last) {
      svg += fmt::format(R"(<text x="{:.1f}" y="{:.0f}">{}{}</text>)", x + w + 4, y + kRowH - 7, esc(name(c)),
                         stopped ? "  \u2190 stopped here" : last_recorded ? "  \u2190 last recorded" : "");
    }
  }
  if (timed) {
    const double y = height - axis_h + 4;
    svg += fmt::format(R"(<line x1="{:.0f}" y1="{:.0f}" x2="{:.0f}" y2="{:.0f}" stroke="#999"/>)", kLeft, y, kLeft + plot_w, y);
    svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" text-anchor="start">{} ms</text>)", kLeft, y + 16, ms(t0));
    svg += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" text-anchor="end">{} ms</text>)", kLeft + plot_w, y + 16, ms(t1));
  }
  return svg + "</svg>";
}

std::string thread_section(const json& t, const json& outcome, bool stopped_here, bool last_recorded) {
  std::string out = fmt::format("<div><h2{}>Thread {}{}{}</h2>\n", t.value("got_signal", false) ? R"( class="crash")" : "",
                                t.value("tid", 0), str(t, "name").empty() ? "" : " \u201c" + esc(str(t, "name")) + "\u201d",
                                t.value("crashed", false)      ? " (crashed)"
                                : t.value("got_signal", false) ? " (received " + esc(str(outcome, "signal")) + ")"
                                                               : "");
  if (t.value("ended", false)) {
    out += R"(<p class="dim">Gone before it could be stopped: no registers or stack left, only what was recorded.</p>)"
           "\n";
  }
  const json& h = t["history"];
  if (h.contains("problem")) {
    out += R"(<p class="dim">No history: )" + esc(str(h, "problem")) + "</p>\n";
  } else {
    const json& calls = h["calls"];
    out += fmt::format(R"(<p class="dim">Last {} calls and returns ({}, {} gaps)</p>)", calls.size(), kept_of(h), h.value("gaps", 0)) + "\n";
    out += timeline(calls, stopped_here, last_recorded) + "\n";
    out += "<table><tr><th>#</th><th>ms</th><th>call</th><th>where</th><th>branches</th></tr>\n";
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const json& c = calls[i];
      std::string indent;
      for (int d = 0; d < 2 * c.value("depth", 0); ++d) {
        indent += "&nbsp;";
      }
      out += fmt::format(R"(<tr{}><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}{}{}</td><td class="mono">{}</td><td>{}</td></tr>)",
                         i + 1 == calls.size() && t.value("got_signal", false) ? R"( class="crash")" : "", i,
                         c.contains("t_ms") ? ms(c["t_ms"].get<double>()) : "", indent,
                         str(c, "kind") == "return" ? "\u2190 " : "\u2192 ", esc(name(c)), esc(place(c)), c.value("branches", 0)) +
             "\n";
    }
    out += "</table>\n";
  }
  if (!t.value("ended", false)) {
    out += "<h3>Backtrace</h3>\n<table><tr><th>#</th><th>pc</th><th>function</th><th>where</th></tr>\n";
    std::size_t i = 0;
    for (const auto& f : t["backtrace"]) {
      const std::string where = str(f, "file").empty() ? str(f, "module") : str(f, "file") + ":" + std::to_string(f.value("line", 0));
      out += fmt::format(R"(<tr><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td></tr>)", i++,
                         f.value("inlined", false) ? "(inlined)" : esc(str(f, "pc")), esc(name(f)), esc(where)) +
             "\n";
    }
    out += "</table>\n<details><summary>Registers</summary><pre>";
    for (const auto& [reg, value] : t["registers"].items()) {
      out += fmt::format("{:>7} {}\n", reg, esc(value.get<std::string>()));
    }
    out += "</pre></details>\n";
  }
  return out + "</div>\n";
}

// One process: p has its program, outcome, threads and sources; run has the collector.
std::string process_section(const json& p, const json& run, std::size_t index) {
  const json& outcome = p["outcome"];
  const std::string cause = str(outcome, "cause");
  std::string out = fmt::format(R"(<section id="process-{}">)", index) + "\n";
  out += fmt::format(R"(<h1 id="{}">{} (pid {}) {}</h1>)", id("verdict", index), esc(str(p["program"], "path")),
                     p["program"].value("pid", 0), esc(str(outcome, "summary"))) +
         "\n";
  std::string command = str(p["program"], "path");
  for (const auto& arg : p["program"]["args"]) {
    command += " " + arg.get<std::string>();
  }
  out += fmt::format(R"(<p class="dim">command: <code>{}</code></p>)", esc(command)) + "\n";
  // The thread the fatal signal came to (or the first, at the timeout), and what to call its function.
  const json& threads = p["threads"];
  const json* stopped = nullptr;
  for (const auto& t : threads) {
    if (t.value("got_signal", false)) {
      stopped = &t;
      break;
    }
  }
  if (stopped == nullptr && !threads.empty()) {
    stopped = &threads.front();
  }
  if (stopped == nullptr) {
    out += fmt::format(R"(<p id="{}">{}</p>)", id("no-threads", index),
                       cause == "exit" ? "It exited: no thread to show." : "No thread could be examined.") +
           "\n";
  } else {
    const std::string label = cause == "crash"        ? "Crashing function:"
                              : cause == "terminated" ? "Function when " + str(outcome, "signal") + " came:"
                              : cause == "timeout"    ? "Function at the timeout:"
                              : cause == "interrupted" ? "Function when triage got " + str(outcome, "signal") + ":"
                              : cause == "killed"      ? "Last recorded function:"
                                                       : "Function:";
    std::string function = "(unknown)";
    const json& calls = (*stopped)["history"]["calls"];
    if (!(*stopped)["backtrace"].empty()) {
      function = name((*stopped)["backtrace"][0]);
    } else if (stopped->value("ended", false) && !calls.empty()) {  // killed from outside: where it was last seen
      function = name(calls.back());
    }
    out += fmt::format(R"(<p><span id="{}">{}</span> <code id="{}" class="crash">{}</code></p>)", id("crash-label", index),
                       esc(label), id("crash-function", index), esc(function)) +
           "\n";
  }
  if (outcome.contains("exception")) {
    const json& x = outcome["exception"];
    std::string where = str(x, "file").empty() ? "" : " at " + str(x, "file") + ":" + std::to_string(x.value("line", 0));
    out += fmt::format(R"(<p id="{}">uncaught <code>{}</code>, thrown in <code>{}</code>{}</p>)", id("exception", index),
                       esc(str(x, "type").empty() ? "C++ exception" : str(x, "type")), esc(str(x, "function")), esc(where)) +
           "\n";
  }
  if (outcome.contains("signature")) {
    std::string frames;
    for (const auto& f : outcome["signature_frames"]) {
      frames += (frames.empty() ? "" : " < ") + f.get<std::string>();
    }
    out += fmt::format(R"(<p id="{}">signature {} ({})</p>)", id("signature", index), esc(str(outcome, "signature")), esc(frames)) + "\n";
  }
  const json& tracer = run["tracer"];
  out += fmt::format(R"(<p id="{}" class="dim">recorded with {}: {}. {}</p>)", id("tracer", index), esc(str(tracer, "backend")),
                     kept_of(tracer), esc(str(tracer, "slowdown_hint"))) +
         "\n";
  for (const auto& s : p["sources"]) {
    out += "<h2>" + esc(str(s, "file")) + ":" + std::to_string(s.value("line", 0)) + "</h2>\n<pre class=\"src\">";
    int line = s.value("first_line", 0);
    for (const auto& text : s["text"]) {
      out += fmt::format(R"(<span{}>{:>5}  {})", line == s.value("line", 0) ? R"( class="mark")" : "", line,
                         esc(text.get<std::string>())) +
             "\n</span>";
      ++line;
    }
    out += "</pre>\n";
  }
  for (const auto& t : threads) {
    const bool stopped_here = &t == stopped && t.value("got_signal", false);
    const bool last_recorded = &t == stopped && !stopped_here && t.value("ended", false);
    out += thread_section(t, outcome, stopped_here, last_recorded);
  }
  return out + "</section>\n";
}

// The list of the processes reported, on top when there are several.
std::string process_list(const json& processes) {
  std::map<std::string, int> counts;
  for (const auto& p : processes) {
    ++counts[str(p["outcome"], "cause")];
  }
  std::string heading;
  if (counts.size() == 1 && counts.begin()->first == "crash") {
    heading = fmt::format("{} processes crashed", processes.size());
  } else {
    const std::map<std::string, std::string> words = {{"crash", "crashed"},         {"terminated", "terminated"},
                                                      {"killed", "killed"},         {"timeout", "timed out"},
                                                      {"interrupted", "interrupted"}, {"exit", "exited"}};
    for (const auto& [cause, n] : counts) {
      const auto word = words.find(cause);
      heading += fmt::format("{}{} {}", heading.empty() ? "" : ", ", n, word != words.end() ? word->second : cause);
    }
    heading = fmt::format("{} processes: {}", processes.size(), heading);
  }
  std::string out = "<h2>" + heading + "</h2>\n";
  out += R"(<table id="process-list"><tr><th>#</th><th>process</th><th>tree</th><th>outcome</th><th>signature</th></tr>)" "\n";
  std::size_t i = 0;
  for (const auto& p : processes) {
    std::string tree;
    for (const auto& step : p["program"]["tree"]) {
      tree += (tree.empty() ? "" : " \u2192 ") + str(step, "name") + " " + std::to_string(step.value("pid", 0));
    }
    out += fmt::format(R"(<tr><td>{}</td><td class="mono"><a href="#process-{}">{} (pid {})</a></td><td class="mono">{}</td><td>{}</td><td class="mono">{}</td></tr>)",
                       i + 1, i, esc(base_name(str(p["program"], "path"))), p["program"].value("pid", 0), esc(tree),
                       esc(str(p["outcome"], "summary")), esc(str(p["outcome"], "signature"))) +
           "\n";
    ++i;
  }
  return out + "</table>\n";
}

std::string events_table(const json& events) {
  std::string out = "<h2>Events</h2>\n<table id=\"events\"><tr><th>ms</th><th>event</th><th>pid</th><th>tid</th><th></th></tr>\n";
  for (const auto& e : events) {
    std::string detail = esc(str(e, "detail"));
    if (e.contains("number")) {
      detail += fmt::format(" ({})", e["number"].get<long long>());
    }
    out += fmt::format(R"(<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="mono">{}</td></tr>)", ms(e.value("t_ms", 0.0)),
                       esc(str(e, "kind")), e.value("pid", 0), e.value("tid", 0), detail) +
           "\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string html_report(const std::vector<TriageReport>& reports) {
  const json doc = json_document(reports);
  const json& processes = doc["processes"];
  std::string page = kHead;
  page.replace(page.find("@TITLE@"), 7,
               esc("triage: " + str(doc["program"], "path") + " " + str(doc["outcome"], "cause")));
  if (processes.size() > 1) {
    page += process_list(processes);
  }
  for (std::size_t i = 0; i < processes.size(); ++i) {
    page += process_section(processes[i], doc, i);
  }
  page += events_table(doc["events"]);
  return page + "</body></html>\n";
}

std::string html_report(const TriageReport& report) { return html_report(std::vector<TriageReport>{report}); }

}  // namespace server::triage
