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
  // The first thread of the current process, else of any.
  auto threads = cx.target.threads();
  if (threads.empty()) {
    return base::make_error(base::Errc::no_thread, "process has no threads");
  }
  auto pick = threads.front();
  for (const auto& t : threads) {
    if (t.pid == cx.target.pid()) {
      pick = t;
      break;
    }
  }
  cx.state.general_thread = pick.tid;
  (void)cx.target.select_process(pick.pid);
  return pick.tid;
}

protocol::ThreadId wire_thread(Context& cx, tracer::Tid tid) {
  const tracer::Pid pid = cx.target.process_of(tid);
  return protocol::ThreadId{pid != 0 ? pid : cx.target.pid(), tid};
}

base::Result<bool> parse_flag(std::string_view body) {
  if (body == "1") {
    return true;
  }
  if (body == "0") {
    return false;
  }
  return base::make_error(base::Errc::malformed, "expected 0 or 1");
}

}  // namespace server
