// Valgrind running a program under the dbt recorder with its gdbserver on, and vgdb, the link
// to that gdbserver: the work directory (rings, vgdb's FIFOs, Valgrind's log), what Valgrind
// said, and reaping the program when it ends or after a detach.
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"
#include "tracer/valgrind/rsp_link.hpp"
#include "tracer/valgrind/valgrind_log.hpp"

namespace tracer {

struct DbtOptions {
  std::string valgrind_lib;   // VALGRIND_LIB: Valgrind's files and the recorder
  std::uint64_t ring_bytes = 8u << 20;  // each thread's ring
  // Every descendant too, through fork and exec: each records its own rings, and one that a
  // signal is about to kill waits there for vgdb (tracer/btrace/dbt_ring.h: --follow-tree).
  bool follow_tree = false;
  // Where the rings go and stay after the run, every process's (empty: a directory of the
  // run's own, removed at its end, each process's rings dropped when it ends).
  std::string keep_rings_in = {};
};

class ValgrindProcess {
 public:
  explicit ValgrindProcess(DbtOptions options) : options_(std::move(options)) {}
  ~ValgrindProcess();  // reaps runs that went on after a detach; removes the directory
  ValgrindProcess(const ValgrindProcess&) = delete;
  ValgrindProcess& operator=(const ValgrindProcess&) = delete;

  struct Started {
    Pid pid = 0;
    RspLink link;
  };
  // The program under Valgrind, stopped before its first instruction, and vgdb linked to it.
  base::Result<Started> start(const LaunchSpec& spec);
  // vgdb linked to pid, a process of the tree waiting for it (at its start or a fatal signal).
  base::Result<RspLink> link(Pid pid) const;
  bool follows_tree() const { return options_.follow_tree; }
  // Following a tree: readable when a Valgrind of it said something; the processes that began
  // to wait at a fatal signal since the last call.
  int tree_log_fd() const { return log_.fd(); }
  std::vector<Pid> take_fatal_waits() { return log_.take_fatal_waits(); }
  // The rings, the signal table and vgdb's FIFOs are here.
  const std::string& dir() const { return dir_; }
  // Valgrind's last lines, for an error message ("" when it said nothing).
  std::string valgrind_log();
  // An instruction Valgrind cannot translate killed the program with SIGILL: say so.
  void explain_sigill();
  // The program ended or was killed (wait: reap it now, killing a Valgrind that has not gone
  // within 10 s), or runs on detached (reaped when this goes, as gdbserver joins a detached
  // child before it exits).
  void reap(Pid pid, bool wait);
  // What the program does with sig, from the table the recorder writes (Valgrind keeps the
  // program's sigactions to itself).
  SignalAction signal_action(Pid pid, int sig) const;

 private:
  void remove_work_dir();
  // vgdb's command line to link to pid.
  std::vector<std::string> vgdb_argv(Pid pid) const;

  DbtOptions options_;
  ValgrindLog log_;
  std::string dir_;
  std::vector<Pid> detached_;
};

}  // namespace tracer
