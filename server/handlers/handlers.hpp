// Every packet handler: typed request (or raw body) in, Reply out. Routed by server/dispatch.
#pragma once

#include <string_view>

#include "protocol/btrace.hpp"
#include "protocol/requests.hpp"
#include "protocol/tracepoint_requests.hpp"
#include "server/features.hpp"
#include "server/handlers/context.hpp"
#include "tracer/trace/experiment.hpp"

namespace server {

// query.cpp: connection set-up, threads, settings, monitor
HandlerResult on_qsupported(Context& cx, const std::vector<std::string>& gdb_features);
HandlerResult on_start_no_ack(Context& cx, std::string_view body);
HandlerResult on_set_thread(Context& cx, const protocol::SetThread& req);
HandlerResult on_thread_alive(Context& cx, const protocol::ThreadId& id);
HandlerResult on_current_thread(Context& cx, std::string_view body);
// qExecAndArgs: the program the server runs (or last ran) and its argument line, `U` if none.
HandlerResult on_exec_and_args(Context& cx, std::string_view body);
HandlerResult on_thread_info_first(Context& cx, std::string_view body);
HandlerResult on_thread_info_next(Context& cx, std::string_view body);
HandlerResult on_attached(Context& cx, const std::optional<std::int64_t>& pid);
HandlerResult on_non_stop(Context& cx, const bool& on);
HandlerResult on_vstopped(Context& cx, std::string_view body);
HandlerResult on_vctrlc(Context& cx, std::string_view body);
HandlerResult on_pass_signals(Context& cx, const std::vector<int>& signals);
HandlerResult on_program_signals(Context& cx, const std::vector<int>& signals);
HandlerResult on_thread_events(Context& cx, const bool& on);
HandlerResult on_thread_options(Context& cx, const std::vector<protocol::ThreadOptionsEntry>& entries);
HandlerResult on_catch_syscalls(Context& cx, const protocol::CatchSyscalls& req);
HandlerResult on_symbol(Context& cx, std::string_view body);
HandlerResult on_extended_mode(Context& cx, std::string_view body);

// environment.cpp: how the next program starts
HandlerResult on_startup_with_shell(Context& cx, const bool& on);
HandlerResult on_environment_set(Context& cx, std::string_view body);
HandlerResult on_environment_unset(Context& cx, std::string_view body);
HandlerResult on_environment_reset(Context& cx, std::string_view body);
HandlerResult on_set_working_dir(Context& cx, std::string_view body);
HandlerResult on_disable_randomization(Context& cx, const bool& on);
// QAllow: GDB's permissions (observer mode), checked by the dispatcher per packet.
HandlerResult on_permissions(Context& cx, const std::vector<protocol::PermissionChange>& changes);

// monitor.cpp: qRcmd
HandlerResult on_monitor(Context& cx, const std::string& command);

// tls.cpp: qGetTLSAddr
HandlerResult on_tls_address(Context& cx, const protocol::TlsAddressQuery& query);

// registers.cpp
HandlerResult on_read_registers(Context& cx, std::string_view body);
HandlerResult on_write_registers(Context& cx, std::string_view body);
HandlerResult on_read_register(Context& cx, const int& regno);
HandlerResult on_write_register(Context& cx, const protocol::WriteReg& req);

// memory.cpp
HandlerResult on_read_memory(Context& cx, const protocol::ReadMem& req);
// x: the same memory as binary data after a 'b' (binary-upload+, GDB 17 and later).
HandlerResult on_read_memory_binary(Context& cx, const protocol::ReadMem& req);
HandlerResult on_write_memory(Context& cx, const protocol::WriteMem& req);

// breakpoints.cpp
HandlerResult on_insert_breakpoint(Context& cx, const protocol::BreakpointReq& req);
HandlerResult on_remove_breakpoint(Context& cx, const protocol::BreakpointReq& req);

// resume.cpp
HandlerResult on_vcont_query(Context& cx, std::string_view body);
HandlerResult on_vcont(Context& cx, const std::vector<protocol::VContAction>& actions);
HandlerResult on_continue(Context& cx, const protocol::LegacyResume& req);
HandlerResult on_step(Context& cx, const protocol::LegacyResume& req);
HandlerResult on_stop_reason(Context& cx, std::string_view body);

// xfer.cpp
HandlerResult on_xfer_read(Context& cx, const protocol::XferRead& req);
HandlerResult on_xfer_write(Context& cx, const protocol::XferWrite& req);
// "qXfer:OBJECT:read+" (and write+) for every object above, with when each is available.
std::vector<Feature> xfer_features();

// vfile.cpp
HandlerResult on_vfile_setfs(Context& cx, const std::int64_t& pid);
HandlerResult on_vfile_open(Context& cx, const protocol::VFileOpen& req);
HandlerResult on_vfile_pread(Context& cx, const protocol::VFilePread& req);
HandlerResult on_vfile_pwrite(Context& cx, const protocol::VFilePwrite& req);
HandlerResult on_vfile_close(Context& cx, const std::int64_t& fd);
HandlerResult on_vfile_fstat(Context& cx, const std::int64_t& fd);
HandlerResult on_vfile_readlink(Context& cx, const std::string& path);
// vFile:stat (following links) and vFile:lstat (GDB 16, 17): a file by its name, as fstat.
HandlerResult on_vfile_stat(Context& cx, const std::string& path);
HandlerResult on_vfile_lstat(Context& cx, const std::string& path);
HandlerResult on_vfile_unlink(Context& cx, const std::string& path);

// btrace.cpp: branch tracing
HandlerResult on_btrace_op(Context& cx, const protocol::BtraceOp& op);
HandlerResult on_btrace_conf(Context& cx, const protocol::BtraceConfSize& conf);
HandlerResult on_xfer_btrace(Context& cx, const protocol::XferRead& req);
// `monitor btrace`: backend, ring size, records kept/lost per thread.
std::vector<std::string> btrace_status_lines(Context& cx);

// tracepoints.cpp: trace experiments (defined here, run by the Target)
HandlerResult on_trace_init(Context& cx, std::string_view body);
HandlerResult on_tracepoint(Context& cx, const protocol::TracepointPacket& req);
HandlerResult on_tracepoint_source(Context& cx, const protocol::TracepointSource& req);
HandlerResult on_trace_variable(Context& cx, const protocol::TraceVariableDefinition& req);
HandlerResult on_tracepoint_enable(Context& cx, const protocol::TracepointLocation& req);
HandlerResult on_tracepoint_disable(Context& cx, const protocol::TracepointLocation& req);
HandlerResult on_trace_readonly(Context& cx, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges);
HandlerResult on_trace_buffer_setting(Context& cx, const protocol::TraceBufferSetting& req);
HandlerResult on_trace_notes(Context& cx, const protocol::TraceNotes& req);
HandlerResult on_trace_disconnected(Context& cx, const bool& on);
// QAgent:1|0 (`set agent`): whether fast tracepoints may use the in-process agent.
HandlerResult on_use_agent(Context& cx, const bool& on);
HandlerResult on_trace_start(Context& cx, std::string_view body);
// qTMinFTPILen: the shortest instruction a fast tracepoint's jump replaces (0: no agent yet).
HandlerResult on_fast_tracepoint_min_length(Context& cx, std::string_view body);
HandlerResult on_trace_stop(Context& cx, std::string_view body);
// A running trace experiment stops (QTStop, detach, GDB gone without disconnected tracing):
// why is the status's stop reason; its int3s come out.
void end_trace_run(Context& cx, tracer::trace::StopReason why);
HandlerResult on_trace_status(Context& cx, std::string_view body);
HandlerResult on_tracepoint_status(Context& cx, const protocol::TracepointLocation& req);
HandlerResult on_trace_variable_value(Context& cx, const std::uint32_t& number);
HandlerResult on_tracepoint_first(Context& cx, std::string_view body);
HandlerResult on_tracepoint_next(Context& cx, std::string_view body);
HandlerResult on_trace_variable_first(Context& cx, std::string_view body);
HandlerResult on_trace_variable_next(Context& cx, std::string_view body);

// trace_frames.cpp: a trace frame GDB looks at (QTFrame) stands for the live program
HandlerResult on_trace_frame(Context& cx, const protocol::FrameSelection& req);
HandlerResult on_trace_buffer_read(Context& cx, const protocol::ReadMem& req);  // qTBuffer:OFFSET,LEN
// The selected frame (null: none, GDB looks at the live program).
const tracer::trace::Frame* selected_trace_frame(Context& cx);
HandlerResult frame_registers_reply(Context& cx, const tracer::trace::Frame& frame);
HandlerResult frame_register_reply(Context& cx, const tracer::trace::Frame& frame, int regno);
base::Result<tracer::Bytes> frame_memory(Context& cx, const tracer::trace::Frame& frame, std::uint64_t addr,
                                         std::size_t len);
base::Result<std::string> build_traceframe_info(Context& cx, const std::string& annex);

// process.cpp: detach, kill, run, attach
HandlerResult on_detach(Context& cx, const std::optional<std::int64_t>& pid);
HandlerResult on_kill(Context& cx, std::string_view body);
HandlerResult on_vkill(Context& cx, const std::optional<std::int64_t>& pid);
HandlerResult on_vrun(Context& cx, const std::vector<std::string>& argv);
HandlerResult on_vattach(Context& cx, const std::optional<std::int64_t>& pid);
HandlerResult on_restart(Context& cx, std::string_view body);

}  // namespace server

namespace server {

// stop.cpp: a tracer stop as a stop reply (reads the expedited registers, changes nothing).
std::string encode_stop_event(Context& cx, const tracer::StopEvent& event);
// GDB hears of event: in all-stop its thread becomes the Hg thread and its process the
// current one (GDB assumes it), and '?' answers with it from now on.
void record_reported_stop(Context& cx, const tracer::StopEvent& event);
// Both: the reply for a stop GDB is told of now.
std::string report_stop_event(Context& cx, const tracer::StopEvent& event);

}  // namespace server
