#include "server/handlers/context.hpp"

namespace server {

base::Result<void> require_process(Context& cx) {
  if (!cx.target.has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  return base::success();
}

base::Result<tracer::Tid> current_thread(Context& cx) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  tracer::Tid tid = cx.state.general_thread;
  if (tid > 0 && cx.target.thread_alive(tid)) {
    return tid;
  }
  auto threads = cx.target.threads();
  if (threads.empty()) {
    return base::make_error(base::Errc::no_thread, "process has no threads");
  }
  cx.state.general_thread = threads.front().tid;
  return threads.front().tid;
}

protocol::ThreadId wire_thread(Context& cx, tracer::Tid tid) {
  return protocol::ThreadId{cx.target.pid(), tid};
}

}  // namespace server
