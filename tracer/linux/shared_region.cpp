#include "tracer/linux/shared_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace tracer {

base::Result<std::shared_ptr<SharedRegion>> SharedRegion::map(Pid pid, int fd, Addr base, std::size_t size) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int local_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (local_fd < 0) {
    return base::sys_error("open " + path);
  }
  void* local = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, local_fd, 0);
  ::close(local_fd);  // (the mapping holds the file)
  if (local == MAP_FAILED) {
    return base::sys_error("mmap " + path);
  }
  return std::shared_ptr<SharedRegion>(new SharedRegion(local, base, size));
}

SharedRegion::~SharedRegion() {
  ::munmap(const_cast<void*>(local_), size_);
}

base::Result<void> SharedRegion::read_into(Addr addr, void* out, std::size_t len) const {
  if (!contains(addr, len)) {
    return base::make_error(base::Errc::invalid, "outside the shared region");
  }
  std::memcpy(out, static_cast<const std::uint8_t*>(local_) + (addr - base_), len);
  return base::success();
}

base::Result<Bytes> SharedRegion::read(Addr addr, std::size_t len) const {
  Bytes out(len);
  if (auto r = read_into(addr, out.data(), len); !r) {
    return r.error();
  }
  return out;
}

base::Result<void> SharedRegion::write(Addr /*addr*/, const Bytes& /*data*/) const {
  return base::make_error(base::Errc::unsupported, "the shared region is read-only here");
}

}  // namespace tracer
