// Trace experiments (the remote protocol's "Tracepoint Packets"), as gdbserver serves them:
// GDB defines tracepoints, state variables and the buffer (QTinit, QTDP, QTDPsrc, QTDV,
// QTBuffer, QTNotes, QTro), runs the experiment (QTStart, QTStop, QTEnable/QTDisable), asks
// how it goes (qTStatus, qTP, qTV) and, connecting later, what it is (qTfP/qTsP, qTfV/qTsV).
// The experiment is the Target's (its hits collect in the tracer); this file only translates.
#include <stdexcept>

#include <fmt/format.h>

#include "protocol/tracepoint_replies.hpp"
#include "server/handlers/handlers.hpp"
#include "tracer/trace/experiment.hpp"

namespace server {
namespace {

using tracer::trace::Experiment;

// The target's experiment: the tracepoint routes are served only when the target says it
// has one (Capabilities::tracepoints).
Experiment& experiment_of(Context& cx) {
  Experiment* e = cx.target.experiment();
  if (e == nullptr) {
    throw std::logic_error("tracepoint packet for a target without tracepoints");
  }
  return *e;
}

base::Result<tracer::trace::Tracepoint*> tracepoint_of(Experiment& e, std::uint32_t number, std::uint64_t address) {
  tracer::trace::Tracepoint* tp = e.find(number, address);
  if (tp == nullptr) {
    return base::make_error(base::Errc::invalid, fmt::format("tracepoint {} at {:#x} is not defined", number, address));
  }
  return tp;
}

tracer::trace::Action action_of(const protocol::TraceAction& a) {
  using K = protocol::TraceAction::Kind;
  tracer::trace::Action out;
  out.kind = a.kind == K::Registers  ? tracer::trace::Action::Kind::Registers
             : a.kind == K::Memory   ? tracer::trace::Action::Kind::Memory
                                     : tracer::trace::Action::Kind::Expression;
  out.base_register = static_cast<int>(a.base_register);
  out.offset = a.offset;
  out.length = a.length;
  out.bytecode = a.bytecode;
  out.text = protocol::encode_trace_action(a);
  return out;
}

// The run's int3s where the experiment wants them; a run that cannot have them stops.
base::Result<void> place(Context& cx, Experiment& e) {
  auto placed = cx.target.place_tracepoints();
  if (!placed && e.running()) {
    e.stop(tracer::trace::StopReason::Error, tracer::trace::timestamp_now());
    (void)cx.target.place_tracepoints();
  }
  return placed;
}

HandlerResult define(Context& cx, Experiment& e, const protocol::TracepointCreate& req) {
  tracer::trace::Tracepoint tp;
  tp.number = req.number;
  tp.address = req.address;
  tp.enabled = req.enabled;
  tp.step_count = req.step_count;
  tp.pass_count = req.pass_count;
  tp.fast_length = req.fast_length;
  tp.condition = req.condition;
  if (req.static_marker) {
    return base::make_error(base::Errc::unsupported, "static tracepoints are not supported");
  }
  if (req.fast_length && !cx.state.permissions.insert_fast_tracepoints) {
    return base::make_error(base::Errc::invalid, "not allowed: GDB's QAllow forbids fast tracepoints");
  }
  if (auto ok = e.define(std::move(tp)); !ok) {
    return ok.error();
  }
  if (e.running() && !req.more) {
    if (auto ok = place(cx, e); !ok) {
      return ok.error();
    }
  }
  return Reply::ok();
}

HandlerResult add_actions(Context& cx, Experiment& e, const protocol::TracepointActions& req) {
  auto tp = tracepoint_of(e, req.number, req.address);
  if (!tp) {
    return tp.error();
  }
  std::vector<tracer::trace::Action> actions;
  for (const protocol::TraceAction& a : req.actions) {
    actions.push_back(action_of(a));
  }
  // GDB marks only the first packet of the while-stepping actions (`S`): those after it
  // are while-stepping actions too, as gdbserver takes them.
  const bool stepping = req.while_stepping || !(*tp)->step_actions.empty();
  if (auto ok = e.add_actions(**tp, std::move(actions), stepping); !ok) {
    return ok.error();
  }
  if (e.running() && !req.more) {
    if (auto ok = place(cx, e); !ok) {
      return ok.error();
    }
  }
  return Reply::ok();
}

}  // namespace

HandlerResult on_trace_init(Context& cx, std::string_view /*body*/) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  Experiment& e = experiment_of(cx);
  e.clear();
  cx.state.trace_frame.reset();
  cx.server.trace_readonly.clear();
  (void)cx.target.place_tracepoints();
  return Reply::ok();
}

HandlerResult on_fast_tracepoint_min_length(Context& cx, std::string_view /*body*/) {
  const auto length = cx.target.fast_tracepoint_min_length();
  return length ? Reply::packet(fmt::format("{:x}", *length)) : Reply::empty();
}

HandlerResult on_tracepoint(Context& cx, const protocol::TracepointPacket& req) {
  Experiment& e = experiment_of(cx);
  if (const auto* create = std::get_if<protocol::TracepointCreate>(&req)) {
    return define(cx, e, *create);
  }
  return add_actions(cx, e, std::get<protocol::TracepointActions>(req));
}

HandlerResult on_tracepoint_source(Context& cx, const protocol::TracepointSource& req) {
  Experiment& e = experiment_of(cx);
  auto tp = tracepoint_of(e, req.number, req.address);
  if (!tp) {
    return tp.error();
  }
  // A long text comes in pieces: START says where this one goes.
  auto& sources = (*tp)->sources;
  if (req.start == 0 || sources.empty() || sources.back().type != req.type) {
    sources.push_back({req.type, req.text});
  } else {
    sources.back().text += req.text;
  }
  return Reply::ok();
}

HandlerResult on_trace_variable(Context& cx, const protocol::TraceVariableDefinition& req) {
  Experiment& e = experiment_of(cx);
  e.define_variable({.number = req.number, .name = req.name, .initial_value = req.initial_value,
                         .builtin = req.builtin});
  return Reply::ok();
}

HandlerResult on_tracepoint_enable(Context& cx, const protocol::TracepointLocation& req, bool enable) {
  Experiment& e = experiment_of(cx);
  auto tp = tracepoint_of(e, req.number, req.address);
  if (!tp) {
    return tp.error();
  }
  (*tp)->enabled = enable;
  if (e.running()) {
    if (auto ok = place(cx, e); !ok) {
      return ok.error();
    }
  }
  return Reply::ok();
}

HandlerResult on_tracepoint_enable(Context& cx, const protocol::TracepointLocation& req) {
  return on_tracepoint_enable(cx, req, true);
}

HandlerResult on_tracepoint_disable(Context& cx, const protocol::TracepointLocation& req) {
  return on_tracepoint_enable(cx, req, false);
}

HandlerResult on_trace_readonly(Context& cx, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
  cx.server.trace_readonly = ranges;
  return Reply::ok();
}

HandlerResult on_trace_buffer_setting(Context& cx, const protocol::TraceBufferSetting& req) {
  Experiment& e = experiment_of(cx);
  if (req.circular) {
    e.buffer().set_circular(*req.circular);
  }
  if (req.size) {
    if (e.running()) {
      return base::make_error(base::Errc::invalid, "the trace buffer cannot change size during a run");
    }
    e.buffer().reset(*req.size < 0 ? tracer::trace::kDefaultBufferSize : static_cast<std::uint64_t>(*req.size));
  }
  return Reply::ok();
}

HandlerResult on_trace_notes(Context& cx, const protocol::TraceNotes& req) {
  Experiment& e = experiment_of(cx);
  if (req.user) {
    e.user = *req.user;
  }
  if (req.notes) {
    e.notes = *req.notes;
  }
  if (req.stop_note) {
    e.stop_note = *req.stop_note;
  }
  return Reply::ok();
}

HandlerResult on_use_agent(Context& cx, const bool& on) {
  experiment_of(cx).use_agent = on;
  return Reply::ok();
}

HandlerResult on_trace_disconnected(Context& cx, const bool& on) {
  Experiment& e = experiment_of(cx);
  e.disconnected_tracing = on;
  return Reply::ok();
}

HandlerResult on_trace_start(Context& cx, std::string_view /*body*/) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  Experiment& e = experiment_of(cx);
  cx.state.trace_frame.reset();
  e.start(tracer::trace::timestamp_now());
  if (auto ok = place(cx, e); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

HandlerResult on_trace_stop(Context& cx, std::string_view /*body*/) {
  end_trace_run(cx, tracer::trace::StopReason::Requested);
  return Reply::ok();
}

void end_trace_run(Context& cx, tracer::trace::StopReason why) {
  Experiment* e = cx.target.experiment();
  if (e == nullptr || !e->running()) {
    return;
  }
  e->stop(why, tracer::trace::timestamp_now());
  (void)cx.target.place_tracepoints();
}

HandlerResult on_trace_status(Context& cx, std::string_view /*body*/) {
  Experiment& e = experiment_of(cx);
  const Experiment& x = e;
  using R = tracer::trace::StopReason;
  protocol::TraceStatusReply s;
  s.running = x.running();
  switch (x.stop_reason()) {
    case R::NotRun: s.stop_reason = "tnotrun"; break;
    case R::Requested: s.stop_reason = "tstop"; s.stop_text = x.stop_note; break;
    case R::PassCount: s.stop_reason = "tpasscount"; break;
    case R::BufferFull: s.stop_reason = "tfull"; break;
    case R::Disconnected: s.stop_reason = "tdisconnected"; break;
    case R::Error: s.stop_reason = "terror"; s.stop_text = x.error_text(); break;
  }
  s.stopping_tracepoint = x.stopping_tracepoint();
  s.frames = x.buffer().count();
  s.created = x.buffer().created();
  s.buffer_free = x.buffer().free();
  s.buffer_size = x.buffer().size();
  s.circular = x.buffer().circular();
  s.disconnected_tracing = x.disconnected_tracing;
  s.start_time = x.start_time();
  s.stop_time = x.stop_time();
  s.user = x.user;
  s.notes = x.notes;
  return Reply::packet(protocol::encode_trace_status(s));
}

HandlerResult on_tracepoint_status(Context& cx, const protocol::TracepointLocation& req) {
  Experiment& e = experiment_of(cx);
  auto tp = tracepoint_of(e, req.number, req.address);
  if (!tp) {
    return tp.error();
  }
  return Reply::packet(fmt::format("V{:x}:{:x}", (*tp)->hits, (*tp)->frame_bytes));
}

HandlerResult on_trace_variable_value(Context& cx, const std::uint32_t& n) {
  Experiment& e = experiment_of(cx);
  std::optional<std::int64_t> value;
  if (cx.state.trace_frame) {
    if (const tracer::trace::Frame* f = e.buffer().find(*cx.state.trace_frame)) {
      value = f->variable(n);
    }
  } else {
    value = e.variable_value(n);
  }
  return Reply::packet(value ? fmt::format("V{:x}", static_cast<std::uint64_t>(*value)) : "U");
}

namespace {

HandlerResult next_upload_piece(Context& cx) {
  if (cx.state.trace_upload_pos >= cx.state.trace_upload.size()) {
    return Reply::packet("l");
  }
  return Reply::packet(cx.state.trace_upload[cx.state.trace_upload_pos++]);
}

}  // namespace

HandlerResult on_tracepoint_first(Context& cx, std::string_view /*body*/) {
  Experiment& e = experiment_of(cx);
  cx.state.trace_upload.clear();
  cx.state.trace_upload_pos = 0;
  for (const tracer::trace::Tracepoint& tp : e.tracepoints()) {
    protocol::TracepointDefinitionReply d{.number = tp.number, .address = tp.address, .enabled = tp.enabled,
                                          .step_count = tp.step_count, .pass_count = tp.pass_count,
                                          .fast_length = tp.fast_length, .condition = tp.condition};
    for (const auto& a : tp.actions) {
      d.actions.push_back(a.text);
    }
    for (const auto& a : tp.step_actions) {
      d.step_actions.push_back(a.text);
    }
    for (const auto& src : tp.sources) {
      d.sources.emplace_back(src.type, src.text);
    }
    for (std::string& piece : protocol::encode_tracepoint_definition(d)) {
      cx.state.trace_upload.push_back(std::move(piece));
    }
  }
  return next_upload_piece(cx);
}

HandlerResult on_tracepoint_next(Context& cx, std::string_view /*body*/) { return next_upload_piece(cx); }

HandlerResult on_trace_variable_first(Context& cx, std::string_view /*body*/) {
  Experiment& e = experiment_of(cx);
  cx.state.trace_upload.clear();
  cx.state.trace_upload_pos = 0;
  // Newest first, as gdbserver lists them (GDB then creates them in their first order).
  const auto& variables = e.variables();
  for (auto it = variables.rbegin(); it != variables.rend(); ++it) {
    const tracer::trace::Variable& v = it->second;
    cx.state.trace_upload.push_back(protocol::encode_trace_variable(v.number, v.initial_value, v.builtin, v.name));
  }
  return next_upload_piece(cx);
}

HandlerResult on_trace_variable_next(Context& cx, std::string_view /*body*/) { return next_upload_piece(cx); }

}  // namespace server
