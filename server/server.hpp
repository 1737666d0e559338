// The event loop: accepts GDB connections, feeds them to a Session, watches the target's
// events. The only code that knows Boost.Asio.
#pragma once

#include <memory>

#include "server/comm.hpp"
#include "server/handlers/context.hpp"

namespace server {

class Server {
 public:
  Server(Endpoint endpoint, bool once);
  ~Server();
  // Binds COMM, before the program starts as gdbserver does; false, said in gdbserver's words
  // ("Can't bind address: ..."), when it cannot. run() binds when this was not called.
  bool listen();
  // Serves GDB for target until the work is done and returns the process exit code.
  int run(tracer::Target& target, tracer::HostIo& host, const ServerOptions& options, ServerState& state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace server
