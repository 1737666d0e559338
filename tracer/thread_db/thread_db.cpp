#include "tracer/thread_db/thread_db.hpp"

#include <dlfcn.h>
#include <proc_service.h>
#include <thread_db.h>

#include <vector>

#include "base/log.hpp"
#include "tracer/thread_db/ps_prochandle.hpp"

namespace tracer {

// The libthread_db entry points we use, looked up in the loaded library.
struct ThreadDb::Api {
  td_err_e (*init)();
  td_err_e (*ta_new)(ps_prochandle*, td_thragent_t**);
  td_err_e (*ta_delete)(td_thragent_t*);
  td_err_e (*map_lwp2thr)(const td_thragent_t*, lwpid_t, td_thrhandle_t*);
  td_err_e (*tls_get_addr)(const td_thrhandle_t*, psaddr_t, size_t, psaddr_t*);
  td_err_e (*tlsbase)(const td_thrhandle_t*, unsigned long, psaddr_t*);
};

namespace {

// The callbacks live in their own file; this reference links them in wherever the loader is,
// for libthread_db to find (ps_symbols.list exports them).
[[gnu::used]] const void* const kProcService[] = {
    reinterpret_cast<const void*>(&ps_pdread),     reinterpret_cast<const void*>(&ps_pdwrite),
    reinterpret_cast<const void*>(&ps_lgetregs),   reinterpret_cast<const void*>(&ps_get_thread_area),
    reinterpret_cast<const void*>(&ps_pglobal_lookup), reinterpret_cast<const void*>(&ps_getpid),
};

const char* describe(td_err_e err) {
  switch (err) {
    case TD_NOLIBTHREAD: return "the program has no threads library (yet)";
    case TD_VERSION: return "libthread_db does not match the program's glibc";
    case TD_NOTHR:
    case TD_NOLWP: return "no such thread";
    case TD_TLSDEFER: return "the thread has not allocated thread-local storage for this module yet";
    case TD_NOTLS: return "the module has no thread-local storage";
    case TD_NOCAPAB: return "libthread_db cannot do this";
    case TD_DBERR: return "libthread_db could not read the program's memory";
    default: return "libthread_db failed";
  }
}

base::Error td_error(td_err_e err) {
  return base::make_error(base::Errc::invalid, std::string(describe(err)) + " (td_err " + std::to_string(err) + ")");
}

// Where to look for the library for one entry of the search path ("" for an empty entry, and
// for $pdir when the program's libc is not known).
std::string candidate(std::string_view entry, const std::string& libc_dir) {
  constexpr std::string_view kName = "libthread_db.so.1";
  if (entry.empty()) {
    return {};
  }
  if (entry == "$sdir") {
    return std::string(kName);  // the dynamic linker's search
  }
  if (entry == "$pdir") {
    return libc_dir.empty() ? std::string() : libc_dir + "/" + std::string(kName);
  }
  return std::string(entry) + "/" + std::string(kName);
}

template <class Fn>
bool find_entry(void* handle, const char* name, Fn*& out) {
  out = reinterpret_cast<Fn*>(dlsym(handle, name));
  return out != nullptr;
}

}  // namespace

base::Result<std::unique_ptr<ThreadDb>> ThreadDb::load(ThreadDbHost& host, std::string_view search_path,
                                                       const std::string& libc_dir) {
  std::string why = "no libthread_db.so.1 along \"" + std::string(search_path) + "\"";
  std::size_t start = 0;
  while (start <= search_path.size()) {
    std::size_t end = search_path.find(':', start);
    if (end == std::string_view::npos) {
      end = search_path.size();
    }
    const std::string path = candidate(search_path.substr(start, end - start), libc_dir);
    start = end + 1;
    if (path.empty()) {
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      base::logf(base::LogCat::session, "libthread_db: {}", dlerror());
      continue;
    }
    std::unique_ptr<ThreadDb> db(new ThreadDb());
    db->handle_ = handle;
    db->library_ = path;
    db->api_ = std::make_unique<Api>();
    Api& api = *db->api_;
    if (!find_entry(handle, "td_init", api.init) || !find_entry(handle, "td_ta_new", api.ta_new) ||
        !find_entry(handle, "td_ta_delete", api.ta_delete) ||
        !find_entry(handle, "td_ta_map_lwp2thr", api.map_lwp2thr) ||
        !find_entry(handle, "td_thr_tls_get_addr", api.tls_get_addr) ||
        !find_entry(handle, "td_thr_tlsbase", api.tlsbase)) {
      why = path + " lacks the functions we need";
      continue;  // the destructor closes it
    }
    db->ph_ = std::make_unique<ps_prochandle>();
    db->ph_->host = &host;
    td_thragent_t* agent = nullptr;
    td_err_e err = api.init();
    if (err == TD_OK) {
      err = api.ta_new(db->ph_.get(), &agent);
    }
    if (err != TD_OK) {
      why = path + ": " + describe(err);
      base::logf(base::LogCat::session, "libthread_db: {}", why);
      continue;
    }
    db->agent_ = agent;
    base::logf(base::LogCat::session, "libthread_db: {} loaded for process {}", path, host.pid());
    return db;
  }
  return base::make_error(base::Errc::invalid, why);
}

ThreadDb::~ThreadDb() {
  if (agent_ != nullptr) {
    api_->ta_delete(static_cast<td_thragent_t*>(agent_));
  }
  if (handle_ != nullptr) {
    dlclose(handle_);
  }
}

base::Result<Addr> ThreadDb::tls_address(Tid lwp, Addr link_map, Addr offset) {
  auto* agent = static_cast<td_thragent_t*>(agent_);
  td_thrhandle_t thread{};
  if (td_err_e err = api_->map_lwp2thr(agent, lwp, &thread); err != TD_OK) {
    return td_error(err);
  }
  psaddr_t addr = nullptr;
  td_err_e err = TD_OK;
  if (link_map == 0) {
    // No link map (a static program): the program's own block, module 1.
    err = api_->tlsbase(&thread, 1, &addr);
    if (err == TD_OK) {
      return reinterpret_cast<Addr>(addr) + offset;
    }
  } else {
    err = api_->tls_get_addr(&thread, reinterpret_cast<psaddr_t>(link_map), offset, &addr);
    if (err == TD_OK) {
      return reinterpret_cast<Addr>(addr);
    }
  }
  return td_error(err);
}

}  // namespace tracer
