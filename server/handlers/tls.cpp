// qGetTLSAddr: where a thread's copy of a thread-local variable is (`print errno`).
#include "base/log.hpp"
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {

HandlerResult on_tls_address(Context& cx, const protocol::TlsAddressQuery& query) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  tracer::Tid tid = query.thread.tid > 0 ? static_cast<tracer::Tid>(query.thread.tid) : 0;
  if (tid == 0) {
    auto current = current_thread(cx);
    if (!current) {
      return current.error();
    }
    tid = *current;
  }
  auto addr = cx.target.tls_address(tid, query.offset, query.link_map);
  if (!addr) {
    if (addr.error().code == base::Errc::unsupported) {
      return Reply::empty();  // this target cannot tell: as a server without the packet
    }
    base::logf(base::LogCat::session, "qGetTLSAddr: {}", addr.error().message());
    return addr.error();  // GDB: "Remote target failed to process qGetTLSAddr request"
  }
  return Reply::packet(protocol::hex_u64(*addr));
}

}  // namespace server
