// Z z: software and hardware breakpoints, watchpoints.
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

base::Result<tracer::BreakpointType> breakpoint_type(int z_type) {
  switch (z_type) {
    case 0: return tracer::BreakpointType::Software;
    case 1: return tracer::BreakpointType::Hardware;
    case 2: return tracer::BreakpointType::WriteWatch;
    case 3: return tracer::BreakpointType::ReadWatch;
    case 4: return tracer::BreakpointType::AccessWatch;
    default: return base::make_error(base::Errc::unsupported, "unknown breakpoint type");
  }
}

// An unsupported type gets the empty reply, so GDB falls back (Z3 -> Z4, Z0 -> X).
HandlerResult change_breakpoint(Context& cx, const protocol::BreakpointReq& req, bool insert) {
  auto type = breakpoint_type(req.type);
  if (!type) {
    return Reply::empty();
  }
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  if (!req.commands.empty() && !cx.target.capabilities().breakpoint_commands) {
    return base::make_error(base::Errc::invalid, "breakpoint commands are not run by this target");
  }
  auto done = insert ? cx.target.insert_breakpoint(*type, req.addr, req.kind)
                     : cx.target.remove_breakpoint(*type, req.addr, req.kind);
  if (done && insert && *type == tracer::BreakpointType::Software) {
    done = cx.target.set_breakpoint_conditions(req.addr, req.conditions);
    if (done) {
      done = cx.target.set_breakpoint_commands(req.addr, req.commands);
    }
    if (!done) {
      (void)cx.target.remove_breakpoint(*type, req.addr, req.kind);  // all or nothing
    }
  }
  if (!done) {
    if (done.error().code == base::Errc::unsupported) {
      return Reply::empty();
    }
    return done.error();
  }
  return Reply::ok();
}

}  // namespace

HandlerResult on_insert_breakpoint(Context& cx, const protocol::BreakpointReq& req) {
  return change_breakpoint(cx, req, true);
}

HandlerResult on_remove_breakpoint(Context& cx, const protocol::BreakpointReq& req) {
  return change_breakpoint(cx, req, false);
}

}  // namespace server
