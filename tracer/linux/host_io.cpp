// vFile host I/O: plain syscalls on the files GDB names, with errno in every error.
#include "tracer/linux/host_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "tracer/linux/osdata.hpp"

namespace tracer {
namespace {

// Identity of a mount namespace: the inode behind /proc/X/ns/mnt.
base::Result<std::pair<dev_t, ino_t>> mount_ns(const std::string& proc) {
  struct stat st;
  const std::string path = proc + "/ns/mnt";
  if (::stat(path.c_str(), &st) != 0) {
    return base::sys_error("stat " + path);
  }
  return std::make_pair(st.st_dev, st.st_ino);
}

}  // namespace

LinuxHostIo::~LinuxHostIo() { end_session(); }

void LinuxHostIo::end_session() {
  for (int fd : fds_) {
    ::close(fd);
  }
  fds_.clear();
  root_.clear();
}

base::Result<void> LinuxHostIo::setfs(Pid pid) {
  if (pid == 0) {
    root_.clear();
    return base::success();
  }
  const std::string proc = "/proc/" + std::to_string(pid);
  auto theirs = mount_ns(proc);
  if (!theirs) {
    return std::move(theirs).error();
  }
  auto ours = mount_ns("/proc/self");
  if (ours && *ours == *theirs) {
    root_.clear();
  } else {
    root_ = proc + "/root";
  }
  return base::success();
}

std::string LinuxHostIo::resolve(const std::string& path) const {
  if (root_.empty() || path.empty() || path[0] != '/') {
    return path;
  }
  return root_ + path;
}

base::Result<void> LinuxHostIo::check_fd(int fd) const {
  if (fds_.count(fd) == 0) {
    return base::sys_error("bad file descriptor " + std::to_string(fd), EBADF);
  }
  return base::success();
}

base::Result<int> LinuxHostIo::open(const std::string& path, int linux_flags, int mode) {
  const std::string real = resolve(path);
  int fd = ::open(real.c_str(), linux_flags | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) {
    return base::sys_error("open " + path);
  }
  fds_.insert(fd);
  return fd;
}

base::Result<Bytes> LinuxHostIo::pread(int fd, std::size_t count, std::uint64_t offset) {
  if (auto ok = check_fd(fd); !ok) {
    return std::move(ok).error();
  }
  Bytes out(count);
  ssize_t n = ::pread(fd, out.data(), count, static_cast<off_t>(offset));
  if (n < 0) {
    return base::sys_error("pread");
  }
  out.resize(static_cast<std::size_t>(n));
  return out;
}

base::Result<std::size_t> LinuxHostIo::pwrite(int fd, std::uint64_t offset, const Bytes& data) {
  if (auto ok = check_fd(fd); !ok) {
    return std::move(ok).error();
  }
  ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
  if (n < 0) {
    return base::sys_error("pwrite");
  }
  return static_cast<std::size_t>(n);
}

base::Result<void> LinuxHostIo::close(int fd) {
  if (auto ok = check_fd(fd); !ok) {
    return ok;
  }
  fds_.erase(fd);
  if (::close(fd) != 0) {
    return base::sys_error("close");
  }
  return base::success();
}

namespace {

HostStat host_stat(const struct stat& st) {
  HostStat h;
  h.dev = st.st_dev;
  h.ino = st.st_ino;
  h.mode = st.st_mode;
  h.nlink = st.st_nlink;
  h.uid = st.st_uid;
  h.gid = st.st_gid;
  h.rdev = st.st_rdev;
  h.size = static_cast<std::uint64_t>(st.st_size);
  h.blksize = static_cast<std::uint64_t>(st.st_blksize);
  h.blocks = static_cast<std::uint64_t>(st.st_blocks);
  h.atime = st.st_atime;
  h.mtime = st.st_mtime;
  h.ctime = st.st_ctime;
  return h;
}

}  // namespace

base::Result<HostStat> LinuxHostIo::fstat(int fd) {
  if (auto ok = check_fd(fd); !ok) {
    return std::move(ok).error();
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return base::sys_error("fstat");
  }
  return host_stat(st);
}

base::Result<HostStat> LinuxHostIo::stat(const std::string& path, bool follow_links) {
  struct stat st;
  const std::string real = resolve(path);
  if ((follow_links ? ::stat(real.c_str(), &st) : ::lstat(real.c_str(), &st)) != 0) {
    return base::sys_error((follow_links ? "stat " : "lstat ") + path);
  }
  return host_stat(st);
}

base::Result<std::string> LinuxHostIo::readlink(const std::string& path) {
  std::string buf(PATH_MAX, '\0');
  ssize_t n = ::readlink(resolve(path).c_str(), buf.data(), buf.size());
  if (n < 0) {
    return base::sys_error("readlink " + path);
  }
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

base::Result<void> LinuxHostIo::unlink(const std::string& path) {
  if (::unlink(resolve(path).c_str()) != 0) {
    return base::sys_error("unlink " + path);
  }
  return base::success();
}

base::Result<std::vector<OsRow>> LinuxHostIo::os_data(const std::string& type) {
  using Reader = std::vector<OsRow> (*)();
  static const std::pair<const char*, Reader> kTables[] = {
      {"processes", osdata::processes}, {"procgroups", osdata::process_groups}, {"threads", osdata::threads},
      {"files", osdata::files},         {"sockets", osdata::sockets},           {"shm", osdata::shared_memory},
      {"semaphores", osdata::semaphores}, {"msg", osdata::message_queues},      {"modules", osdata::modules},
      {"cpus", osdata::cpus},
  };
  for (const auto& [name, read] : kTables) {
    if (type == name) {
      return read();
    }
  }
  return base::make_error(base::Errc::unsupported, "no such table: " + type);
}

}  // namespace tracer
