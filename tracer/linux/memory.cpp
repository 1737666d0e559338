// Inferior memory through process_vm_readv and /proc/PID/mem, never PTRACE_PEEKDATA.
#include "tracer/linux/memory.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <string>

#include "base/log.hpp"

namespace tracer {

base::Result<void> ProcessMemory::open(Pid pid) {
  close();
  const std::string path = "/proc/" + std::to_string(pid) + "/mem";
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return base::sys_error("open " + path);
  }
  pid_ = pid;
  fd_ = fd;
  return base::success();
}

void ProcessMemory::close() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
  fd_ = -1;
  pid_ = 0;
}

base::Result<Bytes> ProcessMemory::read(Addr addr, std::size_t len) const {
  if (pid_ == 0) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  Bytes out(len);
  if (len == 0) {
    return out;
  }
  std::size_t got = 0;
  iovec local{out.data(), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  ssize_t n = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  int err = errno;
  if (n > 0) {
    got = static_cast<std::size_t>(n);
  }
  // process_vm_readv stops at the first page it cannot read; /proc/PID/mem can read some
  // of those (e.g. pages without PROT_READ), so try the rest there.
  while (got < len && fd_ >= 0) {
    ssize_t m = ::pread(fd_, out.data() + got, len - got, static_cast<off_t>(addr + got));
    if (m <= 0) {
      if (m < 0) {
        err = errno;
      }
      break;
    }
    got += static_cast<std::size_t>(m);
  }
  if (got == 0) {
    return base::sys_error("read memory", err == 0 ? EIO : err);
  }
  out.resize(got);
  return out;
}

base::Result<void> ProcessMemory::write(Addr addr, const Bytes& data) const {
  if (pid_ == 0 || fd_ < 0) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                         static_cast<off_t>(addr + done));
    if (n <= 0) {
      return base::sys_error("write memory", n < 0 ? errno : EIO);
    }
    done += static_cast<std::size_t>(n);
  }
  base::logf(base::LogCat::ptrace, "pwrite /proc/{}/mem {:#x} len {}", pid_, addr, data.size());
  return base::success();
}

}  // namespace tracer
