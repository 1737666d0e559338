#include "server/dispatch.hpp"

#include <exception>

#include "protocol/errors.hpp"
#include "protocol/requests.hpp"
#include "server/features.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

using protocol::ErrStyle;
using RunFn = HandlerResult (*)(Context&, std::string_view);

// What a packet does that GDB's QAllow may forbid.
enum class Needs { Nothing, WriteRegisters, WriteMemory, InsertBreakpoints, InsertTracepoints };

struct Route {
  std::string_view prefix;
  bool exact;               // the packet is exactly the prefix (qC must not catch qCRC)
  ErrStyle style;
  std::string_view feature; // announced in qSupported when not empty (and available)
  RunFn run;
  Availability when = {};   // else the packet gets the empty reply, as from a server without it
  Needs needs = Needs::Nothing;
};

bool permitted(const protocol::Permissions& p, Needs needs) {
  switch (needs) {
    case Needs::Nothing: return true;
    case Needs::WriteRegisters: return p.write_registers;
    case Needs::WriteMemory: return p.write_memory;
    case Needs::InsertBreakpoints: return p.insert_breakpoints;
    case Needs::InsertTracepoints: return p.insert_tracepoints;
  }
  return true;
}

// Parse the body into a typed request, then call the handler with it.
template <auto Parse, auto Handle>
HandlerResult adapt(Context& cx, std::string_view body) {
  auto req = Parse(body);
  if (!req) {
    return req.error();
  }
  return Handle(cx, *req);
}

// Handlers that take the raw body.
template <auto Handle>
HandlerResult raw(Context& cx, std::string_view body) {
  return Handle(cx, body);
}

base::Result<std::string> parse_hex_path(std::string_view body) { return protocol::parse_vfile_path(body); }
base::Result<std::string> parse_monitor(std::string_view body) { return protocol::parse_qrcmd(body); }
base::Result<int> parse_reg(std::string_view body) { return protocol::parse_read_reg(body); }
base::Result<std::vector<std::string>> parse_supported(std::string_view body) {
  return protocol::parse_qsupported(body);
}
base::Result<protocol::LegacyResume> parse_plain_resume(std::string_view body) {
  return protocol::parse_legacy_resume(body, false);
}
base::Result<protocol::LegacyResume> parse_signal_resume(std::string_view body) {
  return protocol::parse_legacy_resume(body, true);
}

// qXfer:OBJECT:read:... and qXfer:OBJECT:write:... share one prefix.
HandlerResult on_xfer(Context& cx, std::string_view body) {
  auto colon = body.find(':');
  if (colon != std::string_view::npos && body.substr(colon + 1).starts_with("write:")) {
    return adapt<protocol::parse_xfer_write, on_xfer_write>(cx, body);
  }
  return adapt<protocol::parse_xfer_read, on_xfer_read>(cx, body);
}

// qXfer:btrace:read:... and qXfer:btrace-conf:read:... (body starts after "qXfer:btrace").
HandlerResult on_xfer_btrace_route(Context& cx, std::string_view body) {
  auto req = protocol::parse_xfer_read("btrace" + std::string(body));
  if (!req) {
    return req.error();
  }
  if (req->object != "btrace" && req->object != "btrace-conf") {
    return Reply::empty();
  }
  return on_xfer_btrace(cx, *req);
}

constexpr ErrStyle kCode = ErrStyle::Code;
constexpr ErrStyle kText = ErrStyle::Text;
using Caps = tracer::Capabilities;
constexpr Availability kNonStop{&Caps::non_stop};
constexpr Availability kBtrace{&Caps::branch_tracing};
constexpr Availability kTrace{&Caps::tracepoints};
constexpr Availability kFastTrace{&Caps::fast_tracepoints};

constexpr Route kRoutes[] = {
    // connection set-up and queries
    {"qSupported", false, kCode, "", adapt<parse_supported, on_qsupported>},
    {"QStartNoAckMode", true, kCode, "QStartNoAckMode+", raw<on_start_no_ack>},
    {"!", true, kCode, "", raw<on_extended_mode>},
    {"?", true, kCode, "", raw<on_stop_reason>},
    {"H", false, kCode, "", adapt<protocol::parse_set_thread, on_set_thread>},
    {"T", false, kCode, "", adapt<protocol::parse_thread_id, on_thread_alive>},
    {"qC", true, kCode, "", raw<on_current_thread>, {nullptr, DisablePacket::QC}},
    {"qExecAndArgs", true, kCode, "", raw<on_exec_and_args>},
    {"qfThreadInfo", true, kCode, "", raw<on_thread_info_first>, {nullptr, DisablePacket::QfThreadInfo}},
    {"qsThreadInfo", true, kCode, "", raw<on_thread_info_next>, {nullptr, DisablePacket::QfThreadInfo}},
    {"qAttached", false, kCode, "", adapt<protocol::parse_optional_pid, on_attached>},
    {"QNonStop:", false, kCode, "QNonStop+", adapt<parse_flag, on_non_stop>, kNonStop},
    {"vStopped", true, kCode, "", raw<on_vstopped>, kNonStop},
    {"vCtrlC", true, kCode, "", raw<on_vctrlc>},
    {"QPassSignals:", false, kCode, "QPassSignals+", adapt<protocol::parse_signal_list, on_pass_signals>},
    {"QProgramSignals:", false, kCode, "QProgramSignals+", adapt<protocol::parse_signal_list, on_program_signals>},
    {"QThreadEvents:", false, kCode, "QThreadEvents+", adapt<parse_flag, on_thread_events>, {&Caps::thread_exit_events}},
    {"QThreadOptions;", false, kCode, "QThreadOptions=3", adapt<protocol::parse_thread_options, on_thread_options>, {&Caps::thread_options}},
    {"QCatchSyscalls:", false, kCode, "QCatchSyscalls+", adapt<protocol::parse_catch_syscalls, on_catch_syscalls>, {&Caps::catch_syscalls}},
    // how the next program starts
    {"QStartupWithShell:", false, kCode, "QStartupWithShell+", adapt<parse_flag, on_startup_with_shell>},
    {"QEnvironmentHexEncoded:", false, kCode, "QEnvironmentHexEncoded+", raw<on_environment_set>},
    {"QEnvironmentUnset:", false, kCode, "QEnvironmentUnset+", raw<on_environment_unset>},
    {"QEnvironmentReset", true, kCode, "QEnvironmentReset+", raw<on_environment_reset>},
    {"QSetWorkingDir:", false, kCode, "QSetWorkingDir+", raw<on_set_working_dir>},
    {"QDisableRandomization:", false, kCode, "QDisableRandomization+", adapt<parse_flag, on_disable_randomization>},
    {"QAllow:", false, kCode, "QAllow+", adapt<protocol::parse_qallow, on_permissions>},
    {"qSymbol:", false, kCode, "", raw<on_symbol>},
    {"qRcmd", false, kCode, "", adapt<parse_monitor, on_monitor>},
    {"qGetTLSAddr:", false, kCode, "", adapt<protocol::parse_tls_address, on_tls_address>},
    // registers and memory
    {"g", true, kCode, "", raw<on_read_registers>},
    {"G", false, kCode, "", raw<on_write_registers>, {}, Needs::WriteRegisters},
    {"p", false, kCode, "", adapt<parse_reg, on_read_register>},
    {"P", false, kCode, "", adapt<protocol::parse_write_reg, on_write_register>, {}, Needs::WriteRegisters},
    {"m", false, kCode, "", adapt<protocol::parse_read_mem, on_read_memory>},
    {"x", false, kCode, "binary-upload+", adapt<protocol::parse_read_mem, on_read_memory_binary>},
    {"M", false, kCode, "", adapt<protocol::parse_write_mem_hex, on_write_memory>, {}, Needs::WriteMemory},
    {"X", false, kCode, "", adapt<protocol::parse_write_mem_binary, on_write_memory>, {}, Needs::WriteMemory},
    {"Z", false, kCode, "ConditionalBreakpoints+", adapt<protocol::parse_breakpoint, on_insert_breakpoint>, {},
     Needs::InsertBreakpoints},
    {"z", false, kCode, "", adapt<protocol::parse_breakpoint, on_remove_breakpoint>},
    // running
    {"vCont?", true, kCode, "vContSupported+", raw<on_vcont_query>, {nullptr, DisablePacket::VCont}},
    {"vCont", false, kCode, "", adapt<protocol::parse_vcont, on_vcont>, {nullptr, DisablePacket::VCont}},
    {"c", false, kCode, "", adapt<parse_plain_resume, on_continue>},
    {"C", false, kCode, "", adapt<parse_signal_resume, on_continue>},
    {"s", false, kCode, "", adapt<parse_plain_resume, on_step>},
    {"S", false, kCode, "", adapt<parse_signal_resume, on_step>},
    // objects
    {"qXfer:", false, kCode, "", on_xfer},
    // branch tracing (E.text errors: GDB shows them)
    {"Qbtrace:", false, kText, "Qbtrace:bts+", adapt<protocol::parse_btrace_op, on_btrace_op>, kBtrace},
    {"Qbtrace-conf:", false, kText, "Qbtrace-conf:bts:size+", adapt<protocol::parse_btrace_conf, on_btrace_conf>, kBtrace},
    {"qXfer:btrace", false, kText, "qXfer:btrace:read+", on_xfer_btrace_route, kBtrace},
    // trace experiments (tracepoints.cpp) and their frames (trace_frames.cpp)
    {"QTinit", true, kCode, "", raw<on_trace_init>, kTrace},
    {"QTDP:", false, kCode, "ConditionalTracepoints+", adapt<protocol::parse_qtdp, on_tracepoint>, kTrace,
     Needs::InsertTracepoints},
    {"QTDPsrc:", false, kCode, "TracepointSource+", adapt<protocol::parse_qtdpsrc, on_tracepoint_source>, kTrace},
    {"QTDV:", false, kCode, "TraceStateVariables+", adapt<protocol::parse_qtdv, on_trace_variable>, kTrace},
    {"QTEnable:", false, kCode, "EnableDisableTracepoints+",
     adapt<protocol::parse_tracepoint_location, on_tracepoint_enable>, kTrace},
    {"QTDisable:", false, kCode, "", adapt<protocol::parse_tracepoint_location, on_tracepoint_disable>, kTrace},
    {"QTro", true, kCode, "", adapt<protocol::parse_qtro, on_trace_readonly>, kTrace},
    {"QTro:", false, kCode, "", adapt<protocol::parse_qtro, on_trace_readonly>, kTrace},
    {"QTBuffer:", false, kCode, "QTBuffer:size+", adapt<protocol::parse_qtbuffer, on_trace_buffer_setting>, kTrace},
    {"QTNotes:", false, kCode, "", adapt<protocol::parse_qtnotes, on_trace_notes>, kTrace},
    {"QTDisconnected:", false, kCode, "DisconnectedTracing+", adapt<parse_flag, on_trace_disconnected>, kTrace},
    {"QTStart", true, kCode, "InstallInTrace+", raw<on_trace_start>, kTrace},
    {"qTMinFTPILen", true, kCode, "FastTracepoints+", raw<on_fast_tracepoint_min_length>, kFastTrace},
    {"QAgent:", false, kCode, "QAgent+", adapt<parse_flag, on_use_agent>, kFastTrace},
    {"QTStop", true, kCode, "", raw<on_trace_stop>, kTrace},
    {"qTStatus", true, kCode, "", raw<on_trace_status>, kTrace},
    {"qTP:", false, kCode, "", adapt<protocol::parse_tracepoint_location, on_tracepoint_status>, kTrace},
    {"qTV:", false, kCode, "", adapt<protocol::parse_qtv, on_trace_variable_value>, kTrace},
    {"qTfP", true, kCode, "", raw<on_tracepoint_first>, kTrace},
    {"qTsP", true, kCode, "", raw<on_tracepoint_next>, kTrace},
    {"qTfV", true, kCode, "", raw<on_trace_variable_first>, kTrace},
    {"qTsV", true, kCode, "", raw<on_trace_variable_next>, kTrace},
    {"QTFrame:", false, kCode, "", adapt<protocol::parse_qtframe, on_trace_frame>, kTrace},
    {"qTBuffer:", false, kCode, "", adapt<protocol::parse_read_mem, on_trace_buffer_read>, kTrace},
    // host files
    {"vFile:setfs:", false, kCode, "", adapt<protocol::parse_vfile_number, on_vfile_setfs>},
    {"vFile:open:", false, kCode, "", adapt<protocol::parse_vfile_open, on_vfile_open>},
    {"vFile:pread:", false, kCode, "", adapt<protocol::parse_vfile_pread, on_vfile_pread>},
    {"vFile:pwrite:", false, kCode, "", adapt<protocol::parse_vfile_pwrite, on_vfile_pwrite>},
    {"vFile:close:", false, kCode, "", adapt<protocol::parse_vfile_number, on_vfile_close>},
    {"vFile:fstat:", false, kCode, "", adapt<protocol::parse_vfile_number, on_vfile_fstat>},
    {"vFile:readlink:", false, kCode, "", adapt<parse_hex_path, on_vfile_readlink>},
    {"vFile:stat:", false, kCode, "", adapt<parse_hex_path, on_vfile_stat>},
    {"vFile:lstat:", false, kCode, "", adapt<parse_hex_path, on_vfile_lstat>},
    {"vFile:unlink:", false, kCode, "", adapt<parse_hex_path, on_vfile_unlink>},
    // process life
    {"D", false, kCode, "", adapt<protocol::parse_optional_pid, on_detach>},
    {"k", true, kCode, "", raw<on_kill>},
    {"vKill", false, kCode, "", adapt<protocol::parse_optional_pid, on_vkill>},
    {"vRun", false, kCode, "", adapt<protocol::parse_vrun, on_vrun>},
    {"vAttach", false, kCode, "", adapt<protocol::parse_optional_pid, on_vattach>},
    {"R", false, kCode, "", raw<on_restart>},
};

const Route* find_route(std::string_view payload) {
  const Route* best = nullptr;
  for (const Route& r : kRoutes) {
    bool match = r.exact ? payload == r.prefix : payload.starts_with(r.prefix);
    if (match && (best == nullptr || r.prefix.size() > best->prefix.size())) {
      best = &r;
    }
  }
  return best;
}

}  // namespace

std::vector<Feature> route_features() {
  std::vector<Feature> out;
  for (const Route& r : kRoutes) {
    if (!r.feature.empty()) {
      out.push_back({std::string(r.feature), r.when});
    }
  }
  return out;
}

Reply dispatch_packet(Context& cx, std::string_view payload) {
  const Route* route = find_route(payload);
  if (route == nullptr || !available(cx, route->when)) {
    return Reply::empty();
  }
  if (!permitted(cx.state.permissions, route->needs)) {
    return Reply::packet(protocol::encode_error(
        base::make_error(base::Errc::invalid, "not allowed: GDB's QAllow forbids it (observer mode)"), route->style));
  }
  try {
    auto result = route->run(cx, payload.substr(route->prefix.size()));
    if (result) {
      return std::move(result).value();
    }
    return Reply::packet(protocol::encode_error(result.error(), route->style));
  } catch (const std::exception& e) {
    // A handler bug must not take the session down; report it like any other failure.
    return Reply::packet(protocol::encode_error(base::make_error(base::Errc::internal, e.what()), route->style));
  }
}

}  // namespace server
