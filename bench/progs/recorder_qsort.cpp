// qsort of N ints (default 1,000,000) with a comparison function, natively or under the in-process
// recorder (tracer/inprocess/recorder): bench/recorder_proto.sh runs it.
//   recorder_qsort native|recorded|empty [N]
// empty: translated with no ring stores (what the translation alone costs). Prints one line:
//   MODE ms=T branches=B blocks=K cache_kb=C
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tracer/inprocess/recorder/recorder.hpp"

namespace {

int compare(const void* a, const void* b) {
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

struct Job {
  std::vector<int>* v;
};

std::uint64_t sort_all(void* arg) {
  auto* job = static_cast<Job*>(arg);
  qsort(job->v->data(), job->v->size(), sizeof(int), compare);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "native";
  const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1000000;
  std::vector<int> v(n);
  unsigned seed = 1;
  for (auto& x : v) {
    seed = seed * 1103515245u + 12345u;
    x = static_cast<int>(seed >> 1);
  }
  Job job{&v};
  const bool native = std::strcmp(mode, "native") == 0;
  if (!native) {
    if (auto started = recorder::start_thread(); !started) {
      std::fprintf(stderr, "recorder: %s\n", started.error().message().c_str());
      return 3;
    }
    recorder::set_recording(std::strcmp(mode, "empty") != 0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (native) {
    sort_all(&job);
  } else {
    recorder::run(sort_all, &job);
  }
  const auto t1 = std::chrono::steady_clock::now();
  for (std::size_t i = 1; i < n; ++i) {
    if (v[i - 1] > v[i]) {
      std::fprintf(stderr, "not sorted at %zu\n", i);
      return 2;
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (native) {
    std::printf("%s ms=%.2f\n", mode, ms);
  } else {
    std::printf("%s ms=%.2f branches=%llu blocks=%llu cache_kb=%zu gaps=%llu\n", mode, ms,
                static_cast<unsigned long long>(recorder::ring().head),
                static_cast<unsigned long long>(recorder::stats().blocks), recorder::cache_bytes() / 1024,
                static_cast<unsigned long long>(recorder::stats().native_exits));
  }
  return 0;
}
