#include "tracer/valgrind/valgrind_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <fstream>

namespace tracer {
namespace {

constexpr std::size_t kKept = 64 * 1024;

}  // namespace

std::optional<Pid> waits_at_fatal_signal(std::string_view line) {
  // ==1234== (action on fatal signal) vgdb me ...
  if (!line.starts_with("==") || line.find("(action on fatal signal) vgdb me") == std::string_view::npos) {
    return std::nullopt;
  }
  Pid pid = 0;
  const auto [end, ec] = std::from_chars(line.data() + 2, line.data() + line.size(), pid);
  if (ec != std::errc() || pid <= 0 || std::string_view(end, 2) != "==") {
    return std::nullopt;
  }
  return pid;
}

ValgrindLog::~ValgrindLog() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void ValgrindLog::use_file(const std::string& path) { path_ = path; }

base::Result<void> ValgrindLog::use_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) {
    return base::sys_error("mkfifo " + path);
  }
  // Read and write: a Valgrind opening it never waits for a reader, and the last one closing
  // it is no end of file.
  fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    return base::sys_error("open " + path);
  }
  path_ = path;
  return base::success();
}

void ValgrindLog::drain() {
  if (fd_ < 0) {
    return;
  }
  char buf[16384];
  ssize_t n = 0;
  while ((n = ::read(fd_, buf, sizeof buf)) > 0) {
    partial_.append(buf, static_cast<std::size_t>(n));
    kept_.append(buf, static_cast<std::size_t>(n));
  }
  if (kept_.size() > kKept) {
    kept_.erase(0, kept_.size() - kKept);
  }
  std::size_t start = 0;
  for (std::size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    if (auto pid = waits_at_fatal_signal(std::string_view(partial_).substr(start, nl - start))) {
      waiting_.push_back(*pid);
    }
    start = nl + 1;
  }
  partial_.erase(0, start);
}

std::vector<Pid> ValgrindLog::take_fatal_waits() {
  drain();
  return std::exchange(waiting_, {});
}

std::string ValgrindLog::text() {
  if (fd_ >= 0) {
    drain();
    return kept_;
  }
  std::ifstream in(path_);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace tracer
