// vFile: host file I/O. GDB reads the executable and the shared libraries through these when
// it has no local copy. Results are "F<hex>" or "F-1,<gdb errno>", never E replies.
#include <fcntl.h>

#include "protocol/file_io.hpp"
#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

Reply file_error(const base::Error& error) {
  int err = error.sys_errno != 0 ? error.sys_errno : EINVAL;
  return Reply::packet("F-1," + protocol::hex_u64(static_cast<std::uint64_t>(protocol::gdb_errno(err))));
}

Reply file_result(std::uint64_t value) { return Reply::packet("F" + protocol::hex_u64(value)); }

bool valid_fd(std::int64_t fd) { return fd >= 0 && fd <= 0x7fffffff; }

}  // namespace

HandlerResult on_vfile_setfs(Context& cx, const std::int64_t& pid) {
  if (pid < 0 || pid > 0x7fffffff) {
    return file_error(base::Error{base::Errc::invalid, EINVAL, "bad pid"});
  }
  if (auto ok = cx.host.setfs(static_cast<tracer::Pid>(pid)); !ok) {
    return file_error(ok.error());
  }
  return file_result(0);
}

HandlerResult on_vfile_open(Context& cx, const protocol::VFileOpen& req) {
  auto flags = protocol::host_open_flags(req.gdb_flags);
  if (!flags) {
    return file_error(base::Error{base::Errc::invalid, EINVAL, "bad open flags"});
  }
  auto fd = cx.host.open(req.path, *flags | O_CLOEXEC, req.mode);
  if (!fd) {
    return file_error(fd.error());
  }
  return file_result(static_cast<std::uint64_t>(*fd));
}

HandlerResult on_vfile_pread(Context& cx, const protocol::VFilePread& req) {
  if (!valid_fd(req.fd)) {
    return file_error(base::Error{base::Errc::invalid, EBADF, "bad fd"});
  }
  // Leave room for "F<count>;" and the frame; escaping may grow the data.
  constexpr std::size_t kRoom = protocol::kMaxPacketSize - 32;
  // GDB asks for a whole packet's worth and caches it, but mostly wants a few hundred bytes of
  // headers and sections: short reads keep session start-up fast (measured in bench/).
  constexpr std::size_t kReadChunk = 0x4000;
  std::size_t count = std::min<std::uint64_t>(req.count, kReadChunk);
  auto data = cx.host.pread(req.fd, count, req.offset);
  if (!data) {
    return file_error(data.error());
  }
  std::string escaped;
  std::size_t fitted = protocol::escape_binary_prefix(*data, kRoom, escaped);
  return Reply::packet("F" + protocol::hex_u64(fitted) + ";" + escaped);
}

HandlerResult on_vfile_pwrite(Context& cx, const protocol::VFilePwrite& req) {
  if (!valid_fd(req.fd)) {
    return file_error(base::Error{base::Errc::invalid, EBADF, "bad fd"});
  }
  auto written = cx.host.pwrite(req.fd, req.offset, req.data);
  if (!written) {
    return file_error(written.error());
  }
  return file_result(*written);
}

HandlerResult on_vfile_close(Context& cx, const std::int64_t& fd) {
  if (!valid_fd(fd)) {
    return file_error(base::Error{base::Errc::invalid, EBADF, "bad fd"});
  }
  if (auto ok = cx.host.close(static_cast<int>(fd)); !ok) {
    return file_error(ok.error());
  }
  return file_result(0);
}

namespace {

// F40;STRUCT: GDB's struct stat (64 bytes), binary.
HandlerResult stat_reply(const base::Result<tracer::HostStat>& st) {
  if (!st) {
    return file_error(st.error());
  }
  protocol::FileStat out{st->dev, st->ino, st->mode, st->nlink, st->uid, st->gid, st->rdev,
                         st->size, st->blksize, st->blocks, st->atime, st->mtime, st->ctime};
  return Reply::packet("F40;" + protocol::encode_gdb_stat(out));
}

}  // namespace

HandlerResult on_vfile_fstat(Context& cx, const std::int64_t& fd) {
  if (!valid_fd(fd)) {
    return file_error(base::Error{base::Errc::invalid, EBADF, "bad fd"});
  }
  return stat_reply(cx.host.fstat(static_cast<int>(fd)));
}

HandlerResult on_vfile_stat(Context& cx, const std::string& path) { return stat_reply(cx.host.stat(path, true)); }

HandlerResult on_vfile_lstat(Context& cx, const std::string& path) { return stat_reply(cx.host.stat(path, false)); }

HandlerResult on_vfile_readlink(Context& cx, const std::string& path) {
  auto target = cx.host.readlink(path);
  if (!target) {
    return file_error(target.error());
  }
  return Reply::packet("F" + protocol::hex_u64(target->size()) + ";" + protocol::escape_binary(*target));
}

HandlerResult on_vfile_unlink(Context& cx, const std::string& path) {
  if (auto ok = cx.host.unlink(path); !ok) {
    return file_error(ok.error());
  }
  return file_result(0);
}

}  // namespace server
