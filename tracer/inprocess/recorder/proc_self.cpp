#include "tracer/inprocess/recorder/proc_self.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cstring>

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {

bool for_each_line(const char* path, LineFn fn, void* context) {
  const int fd = static_cast<int>(sys::open(path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) {
    return false;
  }
  char buffer[4096];
  char line[kLineBytes];
  std::size_t length = 0;
  bool ok = true;
  for (;;) {
    const long got = sys::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      ok = false;
      break;
    }
    if (got == 0) {
      break;
    }
    for (long i = 0; i < got; ++i) {
      if (buffer[i] == '\n') {
        fn(context, line, length);
        length = 0;
      } else if (length < kLineBytes - 1) {
        line[length++] = buffer[i];
      }
    }
  }
  if (length != 0) {
    fn(context, line, length);
  }
  sys::close(fd);
  return ok;
}

std::size_t thread_count() {
  std::size_t count = 0;
  for_each_line(
      "/proc/self/status",
      [](void* out, const char* line, std::size_t length) {
        constexpr char kKey[] = "Threads:";
        if (length > sizeof kKey - 1 && std::memcmp(line, kKey, sizeof kKey - 1) == 0) {
          std::size_t n = 0;
          for (std::size_t i = sizeof kKey - 1; i < length; ++i) {
            if (line[i] >= '0' && line[i] <= '9') {
              n = n * 10 + static_cast<std::size_t>(line[i] - '0');
            }
          }
          *static_cast<std::size_t*>(out) = n;
        }
      },
      &count);
  return count;
}

unsigned long auxv_value(unsigned long type) {
  const int fd = static_cast<int>(sys::open("/proc/self/auxv", O_RDONLY | O_CLOEXEC));
  if (fd < 0) {
    return 0;
  }
  unsigned long pair[2] = {};
  unsigned long value = 0;
  while (sys::read(fd, pair, sizeof pair) == static_cast<long>(sizeof pair) && pair[0] != 0) {
    if (pair[0] == type) {
      value = pair[1];
      break;
    }
  }
  sys::close(fd);
  return value;
}

}  // namespace recorder
