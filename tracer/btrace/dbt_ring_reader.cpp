#include "tracer/btrace/dbt_ring_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tracer/btrace/dbt_ring.h"

namespace tracer {
namespace {

const hs_dbt_ring_header& header_of(const void* map) { return *static_cast<const hs_dbt_ring_header*>(map); }

// The recorder stores head after the sample it counts (x86 keeps stores in order): a load
// that the compiler neither caches nor moves does for the reader.
std::uint64_t load(const std::uint64_t& field) {
  return std::atomic_ref<const std::uint64_t>(field).load(std::memory_order_acquire);
}

}  // namespace

base::Result<DbtRing> DbtRing::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return base::make_error(base::Errc::system, path + ": " + std::strerror(errno));
  }
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= HS_DBT_RING_HEADER_SIZE;
  void* map = sized ? ::mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) {
    return base::make_error(base::Errc::system, path + ": not a ring (too short or unmappable)");
  }
  DbtRing ring(map, static_cast<std::size_t>(st.st_size));
  const auto& h = header_of(map);
  const std::uint64_t cap = h.capacity;
  const bool fits = cap != 0 && (cap & (cap - 1)) == 0 && h.header_size == HS_DBT_RING_HEADER_SIZE &&
                    cap <= (ring.size_ - HS_DBT_RING_HEADER_SIZE) / sizeof(hs_dbt_sample);
  if (load(h.magic) != HS_DBT_RING_MAGIC || h.version != HS_DBT_RING_VERSION || !fits) {
    return base::make_error(base::Errc::system, path + ": not a ring of this version");
  }
  return ring;
}

DbtRing::~DbtRing() {
  if (map_ != nullptr) {
    ::munmap(const_cast<void*>(map_), size_);
  }
}

DbtRing::DbtRing(DbtRing&& other) noexcept : map_(other.map_), size_(other.size_) { other.map_ = nullptr; }

DbtRing& DbtRing::operator=(DbtRing&& other) noexcept {
  std::swap(map_, other.map_);
  std::swap(size_, other.size_);
  return *this;
}

int DbtRing::pid() const { return static_cast<int>(header_of(map_).pid); }
int DbtRing::tid() const { return static_cast<int>(header_of(map_).tid); }
std::uint64_t DbtRing::capacity() const { return header_of(map_).capacity; }
std::uint64_t DbtRing::head() const { return load(header_of(map_).head); }
std::uint64_t DbtRing::gaps() const { return load(header_of(map_).gaps); }
bool DbtRing::exited() const { return load(header_of(map_).state) == HS_DBT_RING_EXITED; }
std::uint64_t DbtRing::born_ns() const { return load(header_of(map_).born_ns); }
std::uint64_t DbtRing::exited_ns() const { return load(header_of(map_).exited_ns); }

std::vector<BranchSample> DbtRing::samples_since(std::uint64_t since, std::uint64_t* lost) const {
  const std::uint64_t cap = capacity();
  const std::uint64_t head_before = head();
  const std::uint64_t first = std::max(since, head_before > cap ? head_before - cap : 0);
  const auto* samples = reinterpret_cast<const hs_dbt_sample*>(static_cast<const char*>(map_) + HS_DBT_RING_HEADER_SIZE);
  std::vector<BranchSample> out;
  out.reserve(head_before > first ? head_before - first : 0);
  for (std::uint64_t n = first; n < head_before; ++n) {
    const hs_dbt_sample& s = samples[n & (cap - 1)];
    out.push_back(BranchSample{s.from, s.to});
  }
  // What the recorder wrote meanwhile may have overwritten the oldest of them.
  const std::uint64_t head_after = head();
  const std::uint64_t valid_from = head_after > cap ? head_after - cap : 0;
  std::uint64_t dropped = 0;
  if (valid_from > first) {
    dropped = std::min<std::uint64_t>(valid_from - first, out.size());
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(dropped));
  }
  if (lost != nullptr) {
    *lost = (first > since ? first - since : 0) + dropped;
  }
  return out;
}

std::vector<TimeMark> DbtRing::time_marks() const {
  const auto& h = header_of(map_);
  const std::uint64_t cap = capacity();
  const std::uint64_t marks_cap = load(h.marks_capacity);
  const std::size_t room = size_ - HS_DBT_RING_HEADER_SIZE;
  std::vector<TimeMark> out;
  if (marks_cap == 0 || (marks_cap & (marks_cap - 1)) != 0 || cap > room / sizeof(hs_dbt_sample) ||
      marks_cap > (room - cap * sizeof(hs_dbt_sample)) / sizeof(hs_dbt_time_mark)) {
    return out;
  }
  const auto* marks = reinterpret_cast<const hs_dbt_time_mark*>(static_cast<const char*>(map_) +
                                                                HS_DBT_RING_HEADER_SIZE + cap * sizeof(hs_dbt_sample));
  const std::uint64_t head = load(h.marks_head);
  const std::uint64_t ring_head = this->head();
  auto keep = [&](std::uint64_t position, std::uint64_t t_ns) {
    const bool in_order = out.empty() || (position >= out.back().position && t_ns >= out.back().t_ns);
    if (t_ns != 0 && position <= ring_head && in_order && (out.empty() || out.back() != TimeMark{position, t_ns})) {
      out.push_back(TimeMark{position, t_ns});
    }
  };
  for (std::uint64_t n = head > marks_cap ? head - marks_cap : 0; n < head; ++n) {
    const hs_dbt_time_mark& m = marks[n & (marks_cap - 1)];
    keep(m.position, m.t_ns);
  }
  keep(load(h.latest_position), load(h.latest_ns));
  return out;
}

std::vector<std::string> dbt_ring_paths(const std::string& dir, int pid) {
  const std::string prefix = std::string(HS_DBT_RING_PREFIX) + std::to_string(pid) + ".";
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.find_first_not_of("0123456789", prefix.size()) != std::string::npos) {
      continue;  // hsdbt.PID.signals and the like: not a ring
    }
    const int tid = std::atoi(name.c_str() + prefix.size());
    found.emplace_back(tid == pid ? 0 : tid, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [key, path] : found) {
    out.push_back(std::move(path));
  }
  return out;
}

}  // namespace tracer
