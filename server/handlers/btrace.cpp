// Qbtrace:bts|off, Qbtrace-conf:bts:size, qXfer:btrace:read and qXfer:btrace-conf:read
// (btrace.md §4). Every one acts on the Hg thread; errors are E.text and GDB shows them.
#include <algorithm>

#include "protocol/btrace.hpp"
#include "protocol/xml.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

base::Error text_error(std::string text) { return base::make_error(base::Errc::invalid, std::move(text)); }

// The general thread, with gdbserver's two messages.
base::Result<tracer::Tid> btrace_thread(Context& cx) {
  if (!cx.target.has_process()) {
    return text_error("No such thread.");
  }
  if (cx.state.general_thread > 0 && !cx.target.thread_alive(cx.state.general_thread)) {
    return text_error("No such thread.");
  }
  auto tid = current_thread(cx);
  if (!tid) {
    return text_error("Must select a single thread.");
  }
  return *tid;
}


tracer::BtraceRead to_read_kind(protocol::BtraceAnnex annex) {
  switch (annex) {
    case protocol::BtraceAnnex::All: return tracer::BtraceRead::All;
    case protocol::BtraceAnnex::New: return tracer::BtraceRead::New;
    case protocol::BtraceAnnex::Delta: return tracer::BtraceRead::Delta;
  }
  return tracer::BtraceRead::All;
}

// The btrace document for one annex, read from the thread's tracer now.
base::Result<std::string> build_btrace(Context& cx, tracer::Tid tid, const std::string& annex) {
  tracer::BranchTracer* tracer = cx.target.branch_tracer(tid);
  if (tracer == nullptr) {
    return text_error("Btrace not enabled.");
  }
  auto kind = protocol::parse_btrace_annex(annex);
  if (!kind) {
    return kind.error();
  }
  auto pc = cx.target.read_pc(tid);
  if (!pc) {
    return text_error("Generic Error.");
  }
  auto data = tracer->read(to_read_kind(*kind), *pc);
  if (!data) {
    return data.error();
  }
  protocol::BtraceXml xml(data->blocks.size());
  for (const auto& b : data->blocks) {
    xml.block(b.begin, b.end);
  }
  return std::move(xml).finish();
}

base::Result<std::string> build_btrace_conf(Context& cx, tracer::Tid tid, const std::string& annex) {
  if (!annex.empty()) {
    return base::make_error(base::Errc::malformed, "btrace-conf takes no annex");
  }
  tracer::BranchTracer* tracer = cx.target.branch_tracer(tid);
  return protocol::btrace_conf_xml(tracer != nullptr, tracer != nullptr ? tracer->conf().bts_size : 0);
}

}  // namespace

HandlerResult on_btrace_op(Context& cx, const protocol::BtraceOp& op) {
  auto tid = btrace_thread(cx);
  if (!tid) {
    return tid.error();
  }
  bool tracing = cx.target.branch_tracer(*tid) != nullptr;
  switch (op) {
    case protocol::BtraceOp::Pt:
      return text_error("Intel PT is not supported by hindsight; use 'record btrace bts'.");
    case protocol::BtraceOp::Off:
      if (!tracing) {
        return text_error("Branch tracing not enabled.");
      }
      if (auto ok = cx.target.disable_btrace(*tid); !ok) {
        return text_error("Could not disable branch tracing.");
      }
      return Reply::ok();
    case protocol::BtraceOp::Bts:
      // A thread already traced may still be GDB's to claim (born while recording): the
      // target says "Btrace already enabled." otherwise.
      if (auto ok = cx.target.enable_btrace(*tid, cx.server.btrace_config); !ok) {
        return text_error(ok.error().message());
      }
      return Reply::ok();
  }
  return text_error("Bad Qbtrace operation.  Use bts, pt, or off.");
}

HandlerResult on_btrace_conf(Context& cx, const protocol::BtraceConfSize& conf) {
  if (auto tid = btrace_thread(cx); !tid) {
    return tid.error();
  }
  if (conf.format != protocol::BtraceFormat::Bts) {
    return text_error("Bad Qbtrace configuration option.");
  }
  // GDB's "unlimited" is 0xffffffff: every size above the cap (--btrace-max-size) is the cap.
  cx.server.btrace_config.bts_size = std::min(conf.size, cx.options.btrace_max_size);
  return Reply::ok();
}

HandlerResult on_xfer_btrace(Context& cx, const protocol::XferRead& req) {
  auto tid = btrace_thread(cx);
  if (!tid) {
    return tid.error();
  }
  std::string key = req.object + ":" + req.annex;
  auto cached = cx.state.xfer_cache.find(key);
  if (req.offset == 0 || cached == cx.state.xfer_cache.end()) {
    auto doc = req.object == "btrace" ? build_btrace(cx, *tid, req.annex) : build_btrace_conf(cx, *tid, req.annex);
    if (!doc) {
      return doc.error();
    }
    cached = cx.state.xfer_cache.insert_or_assign(key, std::move(*doc)).first;
  }
  return Reply::packet(protocol::xfer_slice(cached->second, req.offset, req.length));
}

std::vector<std::string> btrace_status_lines(Context& cx) {
  std::vector<std::string> lines;
  lines.push_back("branch tracing: backend " + std::string(tracer::backend_name(cx.options.btrace_backend)) + ", buffer " +
                  std::to_string(cx.server.btrace_config.bts_size) + " bytes per thread (at most " +
                  std::to_string(cx.options.btrace_max_size) + ")" +
                  (cx.options.btrace_scope_name == "all" ? "" : ", scope " + cx.options.btrace_scope_name));
  if (cx.options.btrace_backend == tracer::Backend::Auto) {
    for (const auto& [backend, why] : cx.target.auto_passed_over()) {
      lines.push_back("  auto passed over " + std::string(tracer::backend_name(backend)) + ": " + why);
    }
  } else if (std::string problem = cx.target.bts_problem(); !problem.empty()) {
    lines.push_back("  Intel BTS: " + problem);
  }
  if (!cx.target.has_process()) {
    lines.push_back("  no process");
    return lines;
  }
  for (const auto& t : cx.target.threads()) {
    tracer::BranchTracer* tracer = cx.target.branch_tracer(t.tid);
    if (tracer == nullptr) {
      lines.push_back("  thread " + std::to_string(t.tid) + ": not traced");
      continue;
    }
    auto s = tracer->stats();
    lines.push_back("  thread " + std::to_string(t.tid) + ": " + s.backend + ", " + std::to_string(s.kept) + " of " +
                    std::to_string(s.capacity) + " branches kept, " + std::to_string(s.recorded) + " recorded, " +
                    std::to_string(s.lost) + " lost, " + std::to_string(s.gaps) + " gaps; " +
                    std::to_string(s.emulated) + " performed, " + std::to_string(s.stepped) + " stepped");
  }
  return lines;
}

}  // namespace server
