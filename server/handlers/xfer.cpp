// qXfer: one table of objects (features, auxv, exec-file, threads, libraries-svr4, siginfo, osdata)
// that also gives qSupported its qXfer features.
// A document is built when GDB reads offset 0 and served from the cache for later offsets,
// so a multi-packet read sees one consistent snapshot.
#include <algorithm>

#include "protocol/hex.hpp"
#include "protocol/xml.hpp"
#include "server/features.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

std::string as_text(const tracer::Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }

base::Result<std::string> build_threads(Context& cx) {
  std::vector<protocol::XmlThread> threads;
  for (const auto& t : cx.target.threads()) {
    threads.push_back({protocol::ThreadId{t.pid, t.tid}, t.name, t.core});
  }
  return protocol::threads_xml(threads, cx.state.multiprocess);
}

// The whole list; or, with start=LM (augmented-libraries-svr4-read, GDB reading what was added
// after the entry `prev` it knows), the entries from LM on in its namespace, none if LM does not
// follow prev there (the list changed under GDB: it reads it all again), without main-lm.
base::Result<std::string> build_libraries(Context& cx, const std::string& annex) {
  auto from = protocol::parse_svr4_annex(annex);
  if (!from) {
    return from.error();
  }
  auto list = cx.target.libraries();
  if (!list) {
    return list.error();
  }
  const auto& all = list->libraries;
  auto first = all.begin();
  if (from->start != 0) {
    first = std::find_if(all.begin(), all.end(), [&](const tracer::LoadedLibrary& l) { return l.lm == from->start; });
    if (first != all.end() && first->l_prev != from->prev) {
      first = all.end();
    }
  }
  std::vector<protocol::XmlLibrary> libs;
  for (auto l = first; l != all.end() && (from->start == 0 || l->lmid == first->lmid); ++l) {
    libs.push_back({l->name, l->lm, l->l_addr, l->l_ld, l->lmid});
  }
  return protocol::libraries_svr4_xml(from->start == 0 ? list->main_lm : 0, libs);
}

base::Result<std::string> build_exec_file(Context& cx, const std::string& annex) {
  std::int64_t pid = 0;
  if (!annex.empty()) {
    auto parsed = protocol::parse_hex_i64(annex);
    if (!parsed) {
      return parsed.error();
    }
    pid = *parsed;
  }
  if (pid == 0 && !cx.target.has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  return cx.target.exec_file(static_cast<tracer::Pid>(pid));
}

base::Result<std::string> build_features(Context& cx, const std::string& annex) {
  return cx.target.target_description(annex);
}

base::Result<std::string> build_auxv(Context& cx, const std::string& /*annex*/) {
  auto auxv = cx.target.auxv();
  if (!auxv) {
    return auxv.error();
  }
  return as_text(*auxv);
}

// The selected thread's siginfo, with the thread.
struct ThreadSiginfo {
  tracer::Tid tid = 0;
  tracer::Bytes bytes;
};

base::Result<ThreadSiginfo> current_siginfo(Context& cx) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  auto info = cx.target.siginfo(*tid);
  if (!info) {
    return info.error();
  }
  return ThreadSiginfo{*tid, std::move(*info)};
}

base::Result<std::string> build_siginfo(Context& cx, const std::string& /*annex*/) {
  auto info = current_siginfo(cx);
  if (!info) {
    return info.error();
  }
  return as_text(info->bytes);
}

HandlerResult write_siginfo(Context& cx, const protocol::XferWrite& req) {
  auto info = current_siginfo(cx);
  if (!info) {
    return info.error();
  }
  auto& bytes = info->bytes;
  if (req.offset > bytes.size()) {
    return base::make_error(base::Errc::invalid, "siginfo write past its end");
  }
  std::size_t n = std::min<std::size_t>(req.data.size(), bytes.size() - req.offset);
  std::copy_n(req.data.begin(), n, bytes.begin() + static_cast<std::ptrdiff_t>(req.offset));
  if (auto ok = cx.target.write_siginfo(info->tid, bytes); !ok) {
    return ok.error();
  }
  return Reply::packet(protocol::hex_u64(n));
}

// `info os`: the list of tables (empty annex), or one table; an unknown one is empty, as
// with gdbserver (GDB then says "Empty data returned by target").
struct OsTable {
  std::string_view type;
  std::string_view xml_type;
  std::string_view description;
  std::string_view title;
};
constexpr OsTable kOsTables[] = {
    {"cpus", "cpus", "Listing of all cpus/cores on the system", "CPUs"},
    {"files", "files", "Listing of all file descriptors", "File descriptors"},
    {"modules", "modules", "Listing of all loaded kernel modules", "Kernel modules"},
    {"msg", "message queues", "Listing of all message queues", "Message queues"},
    {"processes", "processes", "Listing of all processes", "Processes"},
    {"procgroups", "process groups", "Listing of all process groups", "Process groups"},
    {"semaphores", "semaphores", "Listing of all semaphores", "Semaphores"},
    {"shm", "shared memory", "Listing of all shared-memory regions", "Shared-memory regions"},
    {"sockets", "I sockets", "Listing of all internet-domain sockets", "Sockets"},
    {"threads", "threads", "Listing of all threads", "Threads"},
};

base::Result<std::string> build_osdata(Context& cx, const std::string& annex) {
  if (annex.empty()) {
    std::vector<protocol::OsdataRow> types;
    for (const OsTable& t : kOsTables) {
      types.push_back({{"Type", std::string(t.type)},
                       {"Description", std::string(t.description)},
                       {"Title", std::string(t.title)}});
    }
    return protocol::osdata_xml("types", types);
  }
  for (const OsTable& t : kOsTables) {
    if (annex == t.type) {
      auto rows = cx.host.os_data(annex);
      if (!rows) {
        return rows.error();
      }
      return protocol::osdata_xml(t.xml_type, *rows);
    }
  }
  return std::string();
}

using Build = base::Result<std::string> (*)(Context&, const std::string& annex);
using Write = HandlerResult (*)(Context&, const protocol::XferWrite&);

// Every qXfer object but btrace's (dispatch.cpp routes those: their errors are text).
struct XferObject {
  std::string_view name;
  bool needs_process;
  Build read;
  Write write;  // nullptr: read only
  Availability when = {};
};
constexpr XferObject kXferObjects[] = {
    {"features", true, build_features, nullptr},
    {"auxv", true, build_auxv, nullptr},
    {"exec-file", false, build_exec_file, nullptr},
    {"threads", true, [](Context& cx, const std::string&) { return build_threads(cx); }, nullptr,
     {nullptr, DisablePacket::Threads}},
    {"libraries-svr4", true, build_libraries, nullptr},
    {"siginfo", true, build_siginfo, write_siginfo},
    {"osdata", false, build_osdata, nullptr},
    {"traceframe-info", false, build_traceframe_info, nullptr, {&tracer::Capabilities::tracepoints}},
};

// The object GDB names, if this session has it.
const XferObject* find_object(const Context& cx, std::string_view name) {
  for (const XferObject& o : kXferObjects) {
    if (o.name == name) {
      return available(cx, o.when) ? &o : nullptr;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<Feature> xfer_features() {
  std::vector<Feature> out;
  for (const XferObject& o : kXferObjects) {
    out.push_back({"qXfer:" + std::string(o.name) + ":read+", o.when});
    if (o.write != nullptr) {
      out.push_back({"qXfer:" + std::string(o.name) + ":write+", o.when});
    }
  }
  return out;
}

HandlerResult on_xfer_read(Context& cx, const protocol::XferRead& req) {
  const XferObject* object = find_object(cx, req.object);
  if (object == nullptr) {
    return Reply::empty();
  }
  std::string key = req.object + ":" + req.annex;
  auto cached = cx.state.xfer_cache.find(key);
  if (req.offset == 0 || cached == cx.state.xfer_cache.end()) {
    if (object->needs_process) {
      if (auto ok = require_process(cx); !ok) {
        return ok.error();
      }
    }
    auto doc = object->read(cx, req.annex);
    if (!doc) {
      return doc.error();
    }
    cached = cx.state.xfer_cache.insert_or_assign(key, std::move(*doc)).first;
  }
  return Reply::packet(protocol::xfer_slice(cached->second, req.offset, req.length));
}

HandlerResult on_xfer_write(Context& cx, const protocol::XferWrite& req) {
  const XferObject* object = find_object(cx, req.object);
  if (object == nullptr || object->write == nullptr) {
    return Reply::empty();
  }
  if (object->needs_process) {
    if (auto ok = require_process(cx); !ok) {
      return ok.error();
    }
  }
  return object->write(cx, req);
}

}  // namespace server
