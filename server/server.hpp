// The event loop: accepts GDB connections, feeds them to a Session, watches the target's
// events. The only code that knows Boost.Asio.
#pragma once

#include <memory>

#include "server/comm.hpp"
#include "server/handlers/context.hpp"

namespace server {

class Server {
 public:
  Server(tracer::Target& target, tracer::HostIo& host, const ServerOptions& options, ServerState& server,
         Endpoint endpoint, bool once);
  ~Server();
  // Listens, serves GDB until the work is done, and returns the process exit code.
  int run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace server
