#include "server/triage/fresh_line.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <string>

namespace server::triage {
namespace {

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

// The last byte of the regular file fd writes to (opened again to read it: fd may be write-only).
bool ends_with_newline(int fd, off_t size) {
  const int reader = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC);
  if (reader < 0) {
    return true;  // (unknown: no newline added)
  }
  char last = '\n';
  const bool read = ::pread(reader, &last, 1, size - 1) == 1;
  ::close(reader);
  return !read || last == '\n';
}

}  // namespace

void start_fresh_line(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return;
  }
  if (S_ISREG(st.st_mode)) {
    if (st.st_size > 0 && !ends_with_newline(fd, st.st_size)) {
      write_all(fd, "\n");
    }
    return;
  }
  winsize size{};
  if (::isatty(fd) != 0 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    write_all(fd, std::string(size.ws_col, ' ') + "\r");
  }
}

}  // namespace server::triage
