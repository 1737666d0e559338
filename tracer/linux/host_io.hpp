// HostIo on the server's own filesystem, or on the inferior's mount namespace through
// /proc/PID/root after setfs(PID).
#pragma once

#include <set>
#include <string>

#include "tracer/host_io.hpp"

namespace tracer {

class LinuxHostIo final : public HostIo {
 public:
  LinuxHostIo() = default;
  ~LinuxHostIo() override;
  LinuxHostIo(const LinuxHostIo&) = delete;
  LinuxHostIo& operator=(const LinuxHostIo&) = delete;

  base::Result<void> setfs(Pid pid) override;
  base::Result<int> open(const std::string& path, int linux_flags, int mode) override;
  base::Result<Bytes> pread(int fd, std::size_t count, std::uint64_t offset) override;
  base::Result<std::size_t> pwrite(int fd, std::uint64_t offset, const Bytes& data) override;
  base::Result<void> close(int fd) override;
  base::Result<HostStat> fstat(int fd) override;
  base::Result<HostStat> stat(const std::string& path, bool follow_links) override;
  base::Result<std::string> readlink(const std::string& path) override;
  base::Result<void> unlink(const std::string& path) override;
  void end_session() override;
  base::Result<std::vector<OsRow>> os_data(const std::string& type) override;  // osdata.cpp

  // The path the next open() would use (for tests).
  std::string resolve(const std::string& path) const;

 private:
  base::Result<void> check_fd(int fd) const;

  std::string root_;      // "" or "/proc/PID/root"
  std::set<int> fds_;     // only files we opened may be read, written or closed
};

}  // namespace tracer
