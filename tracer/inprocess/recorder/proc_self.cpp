#include "tracer/inprocess/recorder/proc_self.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace recorder {

bool for_each_line(const char* path, LineFn fn, void* context) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  char buffer[4096];
  char line[kLineBytes];
  std::size_t length = 0;
  bool ok = true;
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      ok = false;
      break;
    }
    if (got == 0) {
      break;
    }
    for (ssize_t i = 0; i < got; ++i) {
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
  ::close(fd);
  return ok;
}

std::size_t thread_count() {
  std::size_t count = 0;
  for_each_line(
      "/proc/self/status",
      [](void* out, const char* line, std::size_t length) {
        constexpr char kKey[] = "Threads:";
        if (length > sizeof kKey - 1 && std::memcmp(line, kKey, sizeof kKey - 1) == 0) {
          char digits[32] = {};
          std::memcpy(digits, line + sizeof kKey - 1, std::min<std::size_t>(length - (sizeof kKey - 1), 31));
          *static_cast<std::size_t*>(out) = std::strtoul(digits, nullptr, 10);
        }
      },
      &count);
  return count;
}

}  // namespace recorder
