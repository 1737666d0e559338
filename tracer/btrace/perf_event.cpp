// PerfEvent: perf_event_open for Intel BTS and the read-only ring (btrace.md §9.2-9.4).
#include "tracer/btrace/perf_event.hpp"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

#include "tracer/backend.hpp"
#include "tracer/btrace/bts_decode.hpp"

namespace tracer {

namespace {

constexpr int kSnapshotAttempts = 5;

const perf_event_mmap_page* control_page(void* map) {
  return static_cast<const perf_event_mmap_page*>(map);
}

perf_event_attr bts_attr() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
  attr.sample_period = 1;  // every branch: with this event the Intel driver switches to BTS
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.exclude_idle = 1;
  return attr;  // not disabled: recording starts at once; no inherit
}

}  // namespace

std::string perf_open_error_text(int err, int paranoid) {
  std::string text = "Intel BTS via perf_event_open failed: ";
  text += std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP: text += " (this machine or VM exposes no branch-sampling PMU)"; break;
    case EACCES:
    case EPERM:
      text += " (";
      if (paranoid > 2) {
        text += "/proc/sys/kernel/perf_event_paranoid is " + std::to_string(paranoid) +
                "; set it to 2 or less, e.g. sysctl kernel.perf_event_paranoid=2";
      } else {
        text +=
            "check /proc/sys/kernel/perf_event_paranoid (2 or less is needed) and, in a container, "
            "whether seccomp blocks perf_event_open";
      }
      text += ")";
      break;
    case ESRCH: text += " (the thread no longer exists)"; break;
    case EINVAL:
      text += " (the kernel does not accept a BTS event: sample_period 1 on branch-instructions)";
      break;
    case EMFILE:
      text += " (each traced thread holds one perf event file; raise `ulimit -n` or trace fewer threads)";
      break;
    case ENFILE: text += " (the system's file table is full: raise fs.file-max or close files)"; break;
    case ENOMEM:
      text += " (the kernel could not allocate the event; free memory or try a smaller "
              "set record btrace bts buffer-size)";
      break;
    case EBUSY: text += " (another user holds the branch-tracing hardware: a perf session or the VM host)"; break;
    default: break;
  }
  text += "; " + software_advice();
  return text;
}

std::string perf_map_error_text(int err) {
  std::string text = std::string("Failed to map the BTS trace buffer: ") + std::strerror(err);
  if (err == EPERM || err == ENOMEM) {
    text += " (the buffer counts against RLIMIT_MEMLOCK and /proc/sys/kernel/perf_event_mlock_kb; "
            "raise them or";
  } else {
    text += " (";
  }
  text += " try a smaller set record btrace bts buffer-size)";
  return text;
}

int read_perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int value = -100;
  if (!(in >> value)) {
    return -100;
  }
  return value;
}

base::Result<PerfEvent> PerfEvent::open_bts(Tid tid, std::uint64_t requested_bytes) {
  perf_event_attr attr = bts_attr();
  long fd = ::syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return base::make_error(base::Errc::unsupported, perf_open_error_text(err, read_perf_event_paranoid()));
  }

  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  int map_errno = 0;
  for (std::uint64_t pages = bts_data_pages(requested_bytes, page); pages >= 1; pages /= 2) {
    std::uint64_t data_bytes = pages * page;
    if (data_bytes > std::numeric_limits<std::uint32_t>::max()) {
      continue;  // gdbserver's limit: the size is reported as 32 bits
    }
    std::size_t len = static_cast<std::size_t>(data_bytes + page);
    void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, static_cast<int>(fd), 0);
    if (map == MAP_FAILED) {
      map_errno = errno;
      continue;
    }
    // Kernels since 4.1 say where the data area is; before that it follows the control page.
    const perf_event_mmap_page* pc = control_page(map);
    std::size_t data_offset = static_cast<std::size_t>(page);
    std::uint64_t data_size = data_bytes;
    if (pc->data_size != 0 && pc->data_offset != 0) {
      data_offset = static_cast<std::size_t>(pc->data_offset);
      data_size = pc->data_size;
    }
    return PerfEvent(static_cast<int>(fd), map, len, data_offset, data_size);
  }
  ::close(static_cast<int>(fd));
  return base::make_error(base::Errc::unsupported, perf_map_error_text(map_errno));
}

PerfEvent::PerfEvent(int fd, void* map, std::size_t map_len, std::size_t data_offset, std::uint64_t data_size)
    : fd_(fd), map_(map), map_len_(map_len), data_offset_(data_offset), data_size_(data_size) {
}

PerfEvent::PerfEvent(PerfEvent&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      map_(std::exchange(other.map_, nullptr)),
      map_len_(std::exchange(other.map_len_, 0)),
      data_offset_(std::exchange(other.data_offset_, 0)),
      data_size_(std::exchange(other.data_size_, 0)) {
}

PerfEvent& PerfEvent::operator=(PerfEvent&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    map_ = std::exchange(other.map_, nullptr);
    map_len_ = std::exchange(other.map_len_, 0);
    data_offset_ = std::exchange(other.data_offset_, 0);
    data_size_ = std::exchange(other.data_size_, 0);
  }
  return *this;
}

PerfEvent::~PerfEvent() {
  reset();
}

void PerfEvent::reset() {
  if (map_ != nullptr) {
    ::munmap(map_, map_len_);
    map_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

std::uint64_t PerfEvent::data_head() const {
  return __atomic_load_n(&control_page(map_)->data_head, __ATOMIC_ACQUIRE);
}

PerfSnapshot PerfEvent::snapshot() const {
  PerfSnapshot snap;
  snap.data.resize(static_cast<std::size_t>(data_size_));
  const auto* data = static_cast<const std::uint8_t*>(map_) + data_offset_;
  for (int attempt = 0; attempt < kSnapshotAttempts; ++attempt) {
    std::uint64_t before = data_head();
    std::memcpy(snap.data.data(), data, snap.data.size());
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    std::uint64_t after = data_head();
    snap.head = before;
    if (after == before) {
      snap.stable_from = 0;
      return snap;
    }
    // The kernel wrote (after - before) more bytes over the oldest part of the copy.
    snap.stable_from = after > data_size_ ? after - data_size_ : 0;
  }
  return snap;
}

}  // namespace tracer
