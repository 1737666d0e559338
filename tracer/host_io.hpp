// Host file access for GDB's vFile packets: GDB reads the executable and the shared
// libraries through these when it has no local copy. Also what `info os` lists. Linux flags and errno values here;
// the wire numbering is protocol/'s business.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct HostStat {
  std::uint64_t dev = 0, ino = 0, mode = 0, nlink = 0, uid = 0, gid = 0, rdev = 0;
  std::uint64_t size = 0, blksize = 0, blocks = 0;
  std::int64_t atime = 0, mtime = 0, ctime = 0;
};

// One row of `info os` (qXfer:osdata): column name and value, in the order shown.
using OsRow = std::vector<std::pair<std::string, std::string>>;

class HostIo {
 public:
  virtual ~HostIo() = default;
  // Resolve later paths in the mount namespace of pid (0: the server's own view).
  virtual base::Result<void> setfs(Pid pid) = 0;
  virtual base::Result<int> open(const std::string& path, int linux_flags, int mode) = 0;
  virtual base::Result<Bytes> pread(int fd, std::size_t count, std::uint64_t offset) = 0;
  virtual base::Result<std::size_t> pwrite(int fd, std::uint64_t offset, const Bytes& data) = 0;
  virtual base::Result<void> close(int fd) = 0;
  virtual base::Result<HostStat> fstat(int fd) = 0;
  // The file at path (resolved as open resolves it); of a symbolic link itself unless
  // follow_links.
  virtual base::Result<HostStat> stat(const std::string& path, bool follow_links) = 0;
  virtual base::Result<std::string> readlink(const std::string& path) = 0;
  virtual base::Result<void> unlink(const std::string& path) = 0;
  // The connection ended: every file GDB opened is closed and paths resolve in the server's
  // own view again, so a long-lived --multi server keeps no descriptor of a past session.
  virtual void end_session() = 0;
  // The rows of one `info os` table of the host: processes, procgroups, threads, files,
  // sockets, shm, semaphores, msg, modules, cpus. Errc::unsupported for any other type.
  virtual base::Result<std::vector<OsRow>> os_data(const std::string& type) {
    (void)type;
    return base::make_error(base::Errc::unsupported, "no operating system data here");
  }
};

}  // namespace tracer
