// qXfer reads (features, auxv, exec-file, libraries-svr4, threads, siginfo) and siginfo writes.
// A document is built when GDB reads offset 0 and served from the cache for later offsets,
// so a multi-packet read sees one consistent snapshot.
#include "protocol/hex.hpp"
#include "protocol/xml.hpp"
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

base::Result<std::string> build_libraries(Context& cx) {
  auto list = cx.target.libraries();
  if (!list) {
    return list.error();
  }
  std::vector<protocol::XmlLibrary> libs;
  for (const auto& l : list->libraries) {
    libs.push_back({l.name, l.lm, l.l_addr, l.l_ld, l.lmid});
  }
  return protocol::libraries_svr4_xml(list->main_lm, libs);
}

base::Result<std::string> build_document(Context& cx, const protocol::XferRead& req) {
  if (req.object == "exec-file") {
    std::int64_t pid = 0;
    if (!req.annex.empty()) {
      auto parsed = protocol::parse_hex_i64(req.annex);
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
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  if (req.object == "features") {
    return cx.target.target_description(req.annex);
  }
  if (req.object == "auxv") {
    auto auxv = cx.target.auxv();
    if (!auxv) {
      return auxv.error();
    }
    return as_text(*auxv);
  }
  if (req.object == "threads") {
    return build_threads(cx);
  }
  if (req.object == "libraries-svr4") {
    return build_libraries(cx);
  }
  if (req.object == "siginfo") {
    auto tid = current_thread(cx);
    if (!tid) {
      return tid.error();
    }
    auto info = cx.target.siginfo(*tid);
    if (!info) {
      return info.error();
    }
    return as_text(*info);
  }
  return base::make_error(base::Errc::unsupported, "unknown qXfer object");
}

bool is_readable_object(const std::string& object) {
  return object == "features" || object == "auxv" || object == "exec-file" || object == "threads" ||
         object == "libraries-svr4" || object == "siginfo";
}

}  // namespace

HandlerResult on_xfer_read(Context& cx, const protocol::XferRead& req) {
  if (!is_readable_object(req.object)) {
    return Reply::empty();
  }
  std::string key = req.object + ":" + req.annex;
  auto cached = cx.state.xfer_cache.find(key);
  if (req.offset == 0 || cached == cx.state.xfer_cache.end()) {
    auto doc = build_document(cx, req);
    if (!doc) {
      return doc.error();
    }
    cached = cx.state.xfer_cache.insert_or_assign(key, std::move(*doc)).first;
  }
  return Reply::packet(protocol::xfer_slice(cached->second, req.offset, req.length));
}

HandlerResult on_xfer_write(Context& cx, const protocol::XferWrite& req) {
  if (req.object != "siginfo") {
    return Reply::empty();
  }
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  auto info = cx.target.siginfo(*tid);
  if (!info) {
    return info.error();
  }
  if (req.offset > info->size()) {
    return base::make_error(base::Errc::invalid, "siginfo write past its end");
  }
  std::size_t n = std::min<std::size_t>(req.data.size(), info->size() - req.offset);
  std::copy_n(req.data.begin(), n, info->begin() + static_cast<std::ptrdiff_t>(req.offset));
  if (auto ok = cx.target.write_siginfo(*tid, *info); !ok) {
    return ok.error();
  }
  return Reply::packet(protocol::hex_u64(n));
}

}  // namespace server
