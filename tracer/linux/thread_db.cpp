// Thread-local storage addresses (qGetTLSAddr) through libthread_db, per process.
#include "tracer/linux/linux_target.hpp"

namespace tracer {

Result<Addr> LinuxTarget::tls_address(Tid tid, Addr offset, Addr link_map) {
  auto at = stopped_thread(tid);
  if (!at) {
    return at.error();
  }
  Process& p = *at->process;
  if (!p.thread_db) {
    if (!p.thread_db_host) {
      p.thread_db_host = std::make_unique<ProcessThreadDbHost>(p);
    }
    // Not kept when it fails: the threads library may not be loaded yet.
    auto db = ThreadDb::load(*p.thread_db_host, thread_db_search_path_, p.thread_db_host->libc_directory());
    if (!db) {
      return db.error();
    }
    p.thread_db = std::move(*db);
  }
  return p.thread_db->tls_address(tid, link_map, offset);
}

void LinuxTarget::set_thread_db_search_path(const std::string& path) {
  thread_db_search_path_ = path.empty() ? std::string(kDefaultThreadDbSearchPath) : path;
  for (auto& [pid, p] : processes_) {
    p->thread_db.reset();  // loaded again, along the new path, when next asked
  }
}

}  // namespace tracer
