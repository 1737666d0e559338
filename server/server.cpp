#include "server/server.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

#include "base/log.hpp"
#include "server/btrace_progress.hpp"
#include "server/session.hpp"

namespace server {

namespace asio = boost::asio;
using asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

namespace {

// The programs the server starts must not inherit its sockets: a detached program that
// outlives the server would hold its port.
void close_on_exec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0) {
    (void)::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

void say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// Writes everything or gives up on a dead peer; GDB reads promptly, so blocking is fine.
template <class Stream>
void write_all(Stream& stream, std::string_view bytes) {
  boost::system::error_code ec;
  asio::write(stream, asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec) {
    base::logf(base::LogCat::session, "write to GDB failed: {}", ec.message());
  }
}

}  // namespace

struct Server::Impl {
  Endpoint endpoint;
  bool once;
  bool bound = false;
  // What run() serves.
  tracer::Target* target_ = nullptr;
  tracer::HostIo* host_ = nullptr;
  const ServerOptions* options_ = nullptr;
  ServerState* server_ = nullptr;
  tracer::Target& target() { return *target_; }
  ServerState& server() { return *server_; }

  asio::io_context io;
  asio::posix::stream_descriptor target_events{io};
  asio::signal_set stop_signals{io, SIGINT, SIGTERM, SIGHUP};
  asio::steady_timer connection_deadline{io};
  asio::steady_timer accept_retry{io};
  asio::steady_timer progress_timer{io};
  std::optional<BtraceProgress> progress;
  bool accept_failing = false;
  bool connected_once = false;
  std::unique_ptr<tcp::acceptor> tcp_acceptor;
  std::unique_ptr<unix_socket::acceptor> unix_acceptor;

  // The live connection, if any.
  std::unique_ptr<SessionState> state;
  std::unique_ptr<Context> context;
  std::unique_ptr<Session> session;
  std::function<void()> close_connection;
  int exit_code = 0;
  bool done = false;

  Impl(Endpoint e, bool one) : endpoint(std::move(e)), once(one) {}

  // False, said, when the process has no descriptor left for it.
  bool watch_target() {
    if (target().event_fd() < 0 || target_events.is_open()) {
      return true;
    }
    const int fd = ::fcntl(target().event_fd(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      say(std::string("Cannot watch the program's events: ") + std::strerror(errno) + ".");
      return false;
    }
    target_events.assign(fd);
    arm_target_watch();
    return true;
  }

  void arm_target_watch() {
    target_events.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code ec) {
      if (ec) {
        return;
      }
      if (session) {
        session->on_target_event();
        after_session_step();
      } else if (auto event = target().poll()) {
        // No GDB connected: keep the stop for the next one's '?'.
        server().last_stop = *event;
        if (!target().has_process() && !server().extended) {
          finish(0);
        }
      }
      if (!done) {
        arm_target_watch();
      }
    });
  }

  void start_session(std::function<void(std::string_view)> writer, std::function<void()> closer) {
    connected_once = true;
    state = std::make_unique<SessionState>();
    context = std::make_unique<Context>(Context{target(), *host_, *state, *options_, server(), {}, say});
    session = std::make_unique<Session>(*context, std::move(writer));
    close_connection = std::move(closer);
  }

  // A line of a software recording's progress: in GDB's console when GDB waits for the program
  // (all-stop), as gdbserver shows monitor output, and on our standard error (over stdio that
  // is GDB's terminal already: said once there).
  void say_progress(const std::string& line) {
    const bool in_gdb = session && session->console_output(line + "\n");
    if (!in_gdb || endpoint.kind != Endpoint::Kind::Stdio) {
      say(line);
    }
  }

  // Every few seconds while GDB waits for the program: how a software recording goes.
  void arm_progress() {
    progress_timer.expires_after(BtraceProgress::kPoll);
    progress_timer.async_wait([this](boost::system::error_code ec) {
      if (ec || done) {
        return;
      }
      if (session && target().has_process() && target().running()) {
        progress->tick(target(), BtraceProgress::Clock::now());
      } else {
        progress->stopped();
      }
      arm_progress();
    });
  }

  // After each batch of input or target event: end the connection when the session is over.
  void after_session_step() {
    if (session && session->ended()) {
      end_connection();
    }
  }

  void end_connection() {
    if (!session) {
      return;
    }
    bool exit_server = state->exit_server;
    session->on_disconnect();
    session.reset();
    context.reset();
    state.reset();
    if (close_connection) {
      close_connection();
      close_connection = nullptr;
    }
    // gdbserver's rule after GDB leaves: exit with --once, or when nothing is left to debug and
    // GDB never sent '!' (target remote, with or without --multi); else listen again.
    if (exit_server || once || endpoint.kind == Endpoint::Kind::Stdio || endpoint.kind == Endpoint::Kind::Device ||
        (!target().has_process() && !server().extended)) {
      finish(exit_code);
      return;
    }
    say("Remote side has terminated connection.  GDBserver will reopen the connection.");
    announce();
    accept_next();
  }

  void finish(int code) {
    exit_code = code;
    done = true;
    io.stop();
  }

  template <class Socket>
  void read_loop(std::shared_ptr<Socket> socket, std::shared_ptr<std::array<char, 65536>> buffer) {
    socket->async_read_some(asio::buffer(*buffer), [this, socket, buffer](boost::system::error_code ec, std::size_t n) {
      if (!session) {
        return;
      }
      if (ec) {
        base::logf(base::LogCat::session, "GDB disconnected: {}", ec.message());
        end_connection();
        return;
      }
      session->on_bytes(std::string_view(buffer->data(), n));
      after_session_step();
      if (session) {
        read_loop(socket, buffer);
      }
    });
  }

  template <class Socket>
  void serve(std::shared_ptr<Socket> socket) {
    start_session([socket](std::string_view bytes) { write_all(*socket, bytes); },
                  [socket] {
                    boost::system::error_code ignored;
                    socket->close(ignored);
                  });
    read_loop(socket, std::make_shared<std::array<char, 65536>>());
  }

  // An accept that failed (out of descriptors: EMFILE, ENFILE; a connection reset before it
  // was taken) is tried again a little later: the server never stops taking connections. The
  // first failure of a run is said once.
  bool accept_failed(const boost::system::error_code& ec) {
    if (!ec) {
      accept_failing = false;
      return false;
    }
    if (ec == asio::error::operation_aborted || done) {
      return true;
    }
    if (!std::exchange(accept_failing, true)) {
      say("warning: cannot accept a connection: " + ec.message() + "; trying again");
    }
    accept_retry.expires_after(std::chrono::milliseconds(100));
    accept_retry.async_wait([this](boost::system::error_code timer_ec) {
      if (!timer_ec && !session) {
        accept_next();
      }
    });
    return true;
  }

  void accept_next() {
    if (tcp_acceptor) {
      tcp_acceptor->async_accept([this](boost::system::error_code ec, tcp::socket socket) {
        if (accept_failed(ec)) {
          return;
        }
        close_on_exec(socket.native_handle());
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        auto peer = socket.remote_endpoint(ignored);
        say("Remote debugging from host " + peer.address().to_string() + ", port " + std::to_string(peer.port()));
        serve(std::make_shared<tcp::socket>(std::move(socket)));
      });
    } else if (unix_acceptor) {
      unix_acceptor->async_accept([this](boost::system::error_code ec, unix_socket::socket socket) {
        if (accept_failed(ec)) {
          return;
        }
        close_on_exec(socket.native_handle());
        say("Remote debugging using " + endpoint.path);
        serve(std::make_shared<unix_socket::socket>(std::move(socket)));
      });
    }
  }

  // Binds COMM. Errors are printed in gdbserver's words (test harnesses look for them).
  bool listen() {
    if (bound) {
      return true;
    }
    bound = true;
    boost::system::error_code ec;
    if (endpoint.kind == Endpoint::Kind::Tcp) {
      auto address = asio::ip::make_address(endpoint.host, ec);
      if (ec) {
        tcp::resolver resolver(io);
        auto results = resolver.resolve(endpoint.host, "", ec);
        if (ec || results.empty()) {
          say("Can't resolve host '" + endpoint.host + "': " + ec.message());
          return false;
        }
        address = results.begin()->endpoint().address();
      }
      tcp::endpoint where(address, endpoint.port);
      tcp_acceptor = std::make_unique<tcp::acceptor>(io);
      tcp_acceptor->open(where.protocol(), ec);
      if (!ec) {
        close_on_exec(tcp_acceptor->native_handle());
        tcp_acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
        tcp_acceptor->bind(where, ec);
      }
      if (!ec) {
        tcp_acceptor->listen(1, ec);
      }
      if (ec) {
        say("Can't bind address: " + ec.message() + ".");
        say("Exiting");
        return false;
      }
      if (!endpoint.loopback_only) {
        say("warning: listening on " + endpoint.host +
            ": anyone who can reach this address can run code as this user. "
            "Use :PORT to listen on the loopback interface only.");
      }
      return true;
    }
    if (endpoint.kind == Endpoint::Kind::Unix) {
      struct stat st {};
      if (::lstat(endpoint.path.c_str(), &st) == 0) {
        say("Can't bind address: " + endpoint.path + " already exists; remove it or choose another path.");
        return false;
      }
      mode_t old_mask = ::umask(0177);  // the socket is created mode 0600
      unix_acceptor = std::make_unique<unix_socket::acceptor>(io);
      unix_acceptor->open(unix_socket(), ec);
      if (!ec) {
        close_on_exec(unix_acceptor->native_handle());
        unix_acceptor->bind(unix_socket::endpoint(endpoint.path), ec);
      }
      ::umask(old_mask);
      if (!ec) {
        unix_acceptor->listen(1, ec);
      }
      if (ec) {
        say("Can't bind address: " + ec.message() + ".");
        return false;
      }
      return true;
    }
    return true;
  }

  // Where GDB may connect, said each time the server waits for a connection (harnesses wait
  // for these words).
  void announce() {
    boost::system::error_code ec;
    if (tcp_acceptor) {
      say("Listening on port " + std::to_string(tcp_acceptor->local_endpoint(ec).port()));
    } else if (unix_acceptor) {
      say("Listening on " + endpoint.path);
    }
  }

  // GDB on descriptors rather than a listening socket: stdin/stdout, or a serial device.
  void serve_descriptors(int in_fd, int out_fd, const std::string& name) {
    auto input = std::make_shared<asio::posix::stream_descriptor>(io, ::dup(in_fd));
    auto output = std::make_shared<asio::posix::stream_descriptor>(io, ::dup(out_fd));
    close_on_exec(input->native_handle());
    close_on_exec(output->native_handle());
    say("Remote debugging using " + name);
    start_session([output](std::string_view bytes) { write_all(*output, bytes); },
                  [input, output] {
                    boost::system::error_code ignored;
                    input->close(ignored);
                    output->close(ignored);
                  });
    read_loop(input, std::make_shared<std::array<char, 65536>>());
  }

  int run(tracer::Target& t, tracer::HostIo& h, const ServerOptions& o, ServerState& s) {
    target_ = &t;
    host_ = &h;
    options_ = &o;
    server_ = &s;
    ::signal(SIGPIPE, SIG_IGN);
    // Every descriptor of our own is open before "Listening on port": from then on only
    // connections take new ones (a harness may count on that).
    if (!listen() || !watch_target()) {
      return 1;
    }
    announce();
    progress.emplace([this](const std::string& line) { say_progress(line); }, o.dbt_built);
    arm_progress();
    stop_signals.async_wait([this](boost::system::error_code ec, int signo) {
      if (!ec) {
        base::logf(base::LogCat::session, "signal {}: shutting down", signo);
        finish(128 + signo);
      }
    });
    if (options_->first_connection_timeout > 0) {
      connection_deadline.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options_->first_connection_timeout)));
      connection_deadline.async_wait([this](boost::system::error_code ec) {
        if (!ec && !connected_once) {
          say("No GDB connected in time; giving up.");
          finish(exit_code);
        }
      });
    }
    if (endpoint.kind == Endpoint::Kind::Stdio) {
      serve_descriptors(STDIN_FILENO, STDOUT_FILENO, "stdio");
    } else if (endpoint.kind == Endpoint::Kind::Device) {
      serve_descriptors(endpoint.device_fd, endpoint.device_fd, endpoint.path);
      ::close(std::exchange(endpoint.device_fd, -1));
    } else {
      accept_next();
    }
    io.run();
    if (endpoint.kind == Endpoint::Kind::Unix) {
      ::unlink(endpoint.path.c_str());
    }
    return exit_code;
  }
};

Server::Server(Endpoint endpoint, bool once) : impl_(std::make_unique<Impl>(std::move(endpoint), once)) {}

Server::~Server() = default;

bool Server::listen() { return impl_->listen(); }

int Server::run(tracer::Target& target, tracer::HostIo& host, const ServerOptions& options, ServerState& state) {
  return impl_->run(target, host, options, state);
}

}  // namespace server
