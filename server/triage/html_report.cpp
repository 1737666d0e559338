// The report as one self-contained HTML page (no network): the JSON report embedded, drawn by
// a small script: the verdict, each thread's calls before the crash as a timeline (depth
// against time where the collector kept it, else call order; the faulting call marked), its
// backtrace, source excerpts, the events. Several processes reported: a list of them on top,
// each drawn in turn (#process-N).
#include <string>

#include "server/triage/writers.hpp"

namespace server::triage {
namespace {

constexpr const char* kPage = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hindsight triage</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#222;max-width:70em}
h1{font-size:1.3em;color:#b00020}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ddd}
code,pre,td.mono{font-family:ui-monospace,monospace;font-size:13px}
table{border-collapse:collapse}td,th{padding:.15em .6em;text-align:left;vertical-align:top}
tr:nth-child(even){background:#f6f6f6}.crash{color:#b00020;font-weight:bold}.dim{color:#777}
pre.src{background:#f6f6f6;padding:.5em;overflow:auto}pre.src .mark{background:#ffd7d7;display:block}
svg{background:#fbfbfb;border:1px solid #ddd}svg text{font:11px ui-monospace,monospace}
</style></head><body>
<div id="processes"></div>
<h1 id="verdict">hindsight triage</h1>
<p><span id="crash-label">Crashing function:</span> <code id="crash-function" class="crash">(unknown)</code></p>
<p id="tracer" class="dim"></p>
<div id="sources"></div>
<div id="threads"></div>
<h2>Events</h2><table id="events"><tr><th>ms</th><th>event</th><th>pid</th><th>tid</th><th></th></tr></table>
<script type="application/json" id="report">@REPORT@</script>
<script>
"use strict";
const doc = JSON.parse(document.getElementById("report").textContent);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
};
// Every process that died of a signal, first first; the one drawn is chosen by #process-N (the
// run's events and collector are the top level's).
const all = doc.processes || [doc];
const chosen = Math.min(all.length - 1, Number((location.hash.match(/^#process-(\d+)$/) || [0, 0])[1]));
const report = Object.assign({}, doc, all[chosen]);
if (all.length > 1) {
  window.addEventListener("hashchange", () => location.reload());
  const list = el("table", {id: "process-list"}, el("tr", {}, el("th", {}, "#"), el("th", {}, "process"), el("th", {}, "tree"),
                                                   el("th", {}, "outcome"), el("th", {}, "signature")));
  all.forEach((p, i) => list.append(el("tr", i === chosen ? {class: "crash"} : {},
    el("td", {}, String(i + 1)),
    el("td", {class: "mono"}, el("a", {href: "#process-" + i}, p.program.path.split("/").pop() + " (pid " + p.program.pid + ")")),
    el("td", {class: "mono"}, (p.program.tree || []).map(s => s.name + " " + s.pid).join(" \u2192 ")),
    el("td", {}, p.outcome.summary), el("td", {class: "mono"}, p.outcome.signature || ""))));
  const counts = {};
  all.forEach(p => { counts[p.outcome.cause] = (counts[p.outcome.cause] || 0) + 1; });
  const words = {crash: "crashed", terminated: "terminated", killed: "killed", timeout: "timed out",
                 interrupted: "interrupted", exit: "exited"};
  document.getElementById("processes").append(el("h2", {}, counts.crash === all.length ? all.length + " processes crashed"
    : all.length + " processes: " + Object.entries(counts).map(([c, n]) => n + " " + (words[c] || c)).join(", ")), list);
}
const svgEl = (tag, attrs) => {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};
const place = f => f.file ? f.file.split("/").pop() + ":" + f.line : (f.module || "").split("/").pop();
const name = f => f.function || "??";
const keptOf = (kept, recorded) => kept >= recorded ? recorded + " branches" : "kept " + kept + " of " + recorded + " branches";

document.getElementById("verdict").textContent =
  report.program.path + " (pid " + report.program.pid + ") " + report.outcome.summary;
document.title = "triage: " + report.program.path + " " + report.outcome.cause;
if (report.outcome.signature)
  document.getElementById("tracer").before(el("p", {id: "signature"}, "signature " + report.outcome.signature +
    " (" + report.outcome.signature_frames.join(" < ") + ")"));
// The thread the fatal signal came to (or the first, at the timeout), and what to call its function.
const stopped = report.threads.find(t => t.got_signal) || report.threads[0];
const label = {crash: "Crashing function:", terminated: "Function when " + report.outcome.signal + " came:",
               timeout: "Function at the timeout:", interrupted: "Function when triage got " + report.outcome.signal + ":",
               killed: "Last recorded function:"}[report.outcome.cause] || "Function:";
if (!stopped) document.getElementById("crash-label").parentNode.replaceWith(
  el("p", {id: "no-threads"}, report.outcome.cause === "exit" ? "It exited: no thread to show." : "No thread could be examined."));
else document.getElementById("crash-label").textContent = label;
if (stopped && stopped.backtrace.length) document.getElementById("crash-function").textContent = name(stopped.backtrace[0]);
else if (stopped && stopped.ended && stopped.history.calls.length)  // killed from outside: where it was last seen
  document.getElementById("crash-function").textContent = name(stopped.history.calls[stopped.history.calls.length - 1]);
document.getElementById("tracer").textContent = "recorded with " + report.tracer.backend + ": " +
  keptOf(report.tracer.branches_kept, report.tracer.branches_recorded) + ". " + report.tracer.slowdown_hint;

for (const s of report.sources) {
  const pre = el("pre", {class: "src"});
  s.text.forEach((line, i) => {
    const n = s.first_line + i;
    pre.append(el("span", n === s.line ? {class: "mark"} : {}, String(n).padStart(5) + "  " + line + "\n"));
  });
  document.getElementById("sources").append(el("h2", {}, s.file + ":" + s.line), pre);
}

// Depth (down) against time (right) where every call has its time, else against call order.
function timeline(calls) {
  const rowH = 18, left = 10, orderStep = 22;
  const timed = calls.length > 1 && calls.every(c => typeof c.t_ms === "number");
  const t0 = timed ? calls[0].t_ms : 0, t1 = timed ? calls[calls.length - 1].t_ms : 0;
  const plotW = timed ? 900 : calls.length * orderStep;
  const xOf = i => timed ? left + (calls[i].t_ms - t0) / Math.max(t1 - t0, 1e-9) * plotW : left + i * orderStep;
  const maxDepth = Math.max(0, ...calls.map(c => c.depth));
  const axisH = timed ? 30 : 0;
  const width = Math.max(400, left + plotW + 260), height = (maxDepth + 2) * rowH + 20 + axisH;
  const svg = svgEl("svg", {width, height, role: "img", "data-axis": timed ? "time" : "order"});
  svg.append(svgEl("title", {}));
  svg.lastChild.textContent = "calls before the stop: depth (down) against " + (timed ? "time" : "call order") + " (right)";
  calls.forEach((c, i) => {
    const x = xOf(i), y = 10 + c.depth * rowH, last = i === calls.length - 1;
    const w = last ? (timed ? 8 : orderStep - 3) : Math.max(2, xOf(i + 1) - x - 1);
    const r = svgEl("rect", {x, y, width: w, height: rowH - 4, rx: 2,
                             fill: last && stoppedCalls === calls ? "#d32f2f" : (c.kind === "return" ? "#90a4ae" : "#42a5f5")});
    const tip = svgEl("title", {});
    tip.textContent = (c.kind === "return" ? "return to " : "call ") + name(c) + " " + place(c) + " [" + c.branches + " branches]" +
                      (typeof c.t_ms === "number" ? " at " + c.t_ms.toFixed(3) + " ms" : "");
    r.append(tip);
    svg.append(r);
    if (!last && w > 7 * name(c).length + 8) {
      const label = svgEl("text", {x: x + 4, y: y + rowH - 8, fill: "#fff"});
      label.textContent = name(c);
      svg.append(label);
    }
    if (last) {
      const t = svgEl("text", {x: x + w + 4, y: y + rowH - 7});
      t.textContent = name(c) + (stoppedCalls === calls ? "  \u2190 stopped here" : "");
      if (stoppedCalls !== calls && stopped && stopped.ended && stopped.history.calls === calls) t.textContent += "  \u2190 last recorded";
      svg.append(t);
    }
  });
  if (timed) {
    const y = height - axisH + 4;
    svg.append(svgEl("line", {x1: left, y1: y, x2: left + plotW, y2: y, stroke: "#999"}));
    [[left, t0, "start"], [left + plotW, t1, "end"]].forEach(([x, t, anchor]) => {
      const label = svgEl("text", {x, y: y + 16, "text-anchor": anchor});
      label.textContent = t.toFixed(3) + " ms";
      svg.append(label);
    });
  }
  return svg;
}

const stoppedCalls = stopped && stopped.got_signal ? stopped.history.calls : null;
for (const t of report.threads) {
  const box = el("div", {});
  box.append(el("h2", t.got_signal ? {class: "crash"} : {}, "Thread " + t.tid + (t.name ? " \u201c" + t.name + "\u201d" : "") +
                (t.crashed ? " (crashed)" : t.got_signal ? " (received " + report.outcome.signal + ")" : "")));
  if (t.ended) box.append(el("p", {class: "dim"}, "Gone before it could be stopped: no registers or stack left, only what was recorded."));
  const h = t.history;
  if (h.problem) box.append(el("p", {class: "dim"}, "No history: " + h.problem));
  else {
    box.append(el("p", {class: "dim"}, "Last " + h.calls.length + " calls and returns (" +
                  keptOf(h.branches_kept, h.branches_recorded) + ", " + h.gaps + " gaps)"));
    box.append(timeline(h.calls));
    const table = el("table", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "ms"), el("th", {}, "call"), el("th", {}, "where"), el("th", {}, "branches")));
    h.calls.forEach((c, i) => table.append(el("tr", i === h.calls.length - 1 && t.got_signal ? {class: "crash"} : {},
      el("td", {class: "mono"}, String(i)),
      el("td", {class: "mono"}, typeof c.t_ms === "number" ? c.t_ms.toFixed(3) : ""),
      el("td", {class: "mono"}, "\u00a0".repeat(2 * c.depth) + (c.kind === "return" ? "\u2190 " : "\u2192 ") + name(c)),
      el("td", {class: "mono"}, place(c)), el("td", {}, String(c.branches)))));
    box.append(table);
  }
  if (!t.ended) {
    const bt = el("table", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "pc"), el("th", {}, "function"), el("th", {}, "where")));
    t.backtrace.forEach((f, i) => bt.append(el("tr", {}, el("td", {}, String(i)), el("td", {class: "mono"}, f.inlined ? "(inlined)" : f.pc),
      el("td", {class: "mono"}, name(f)), el("td", {class: "mono"}, f.file ? f.file + ":" + f.line : (f.module || "")))));
    box.append(el("h3", {}, "Backtrace"), bt);
    const regs = el("pre", {});
    regs.textContent = Object.entries(t.registers).map(([k, v]) => k.padStart(7) + " " + v).join("\n");
    box.append(el("details", {}, el("summary", {}, "Registers"), regs));
  }
  document.getElementById("threads").append(box);
}
for (const e of report.events) {
  document.getElementById("events").append(el("tr", {}, el("td", {}, e.t_ms.toFixed(3)), el("td", {}, e.kind),
    el("td", {}, String(e.pid)), el("td", {}, String(e.tid)), el("td", {class: "mono"}, (e.detail || "") + (e.number ? " (" + e.number + ")" : ""))));
}
</script></body></html>
)HTML";

}  // namespace

std::string html_report(const std::vector<TriageReport>& reports) {
  std::string data = json_report(reports);
  // Inside <script>, "</" could end the element early: JSON allows "<\/" for it.
  for (std::size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3)) {
    data.replace(at, 2, "<\\/");
  }
  std::string page = kPage;
  page.replace(page.find("@REPORT@"), 8, data);
  return page;
}

std::string html_report(const TriageReport& report) { return html_report(std::vector<TriageReport>{report}); }

}  // namespace server::triage
