// qsort of N ints (default 1,000,000) with a comparison function, natively or under the in-process
// recorder (tracer/inprocess/recorder): bench/recorder_proto.sh runs it.
//   recorder_qsort native|recorded|empty [N]
// empty: translated with no ring stores (what the translation alone costs). Prints one line:
//   MODE ms=WALL cpu_ms=CPU branches=B blocks=K cache_kb=C gaps=G
// and with RECORDER_MIX set, the kinds of the branches recorded last.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "tracer/inprocess/recorder/recorder.hpp"

namespace {

int compare(const void* a, const void* b) {
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

// The kinds of the last (up to a ring's worth of) branches recorded, by their opcode: what the
// cache paid for them (a return or an indirect call goes through the lookup table).
void print_mix() {
  const hs_recorder_ring& r = recorder::ring();
  const std::uint64_t n = r.head < r.capacity ? r.head : r.capacity;
  std::uint64_t ret = 0, call = 0, icall = 0, ijmp = 0, jmp = 0, jcc = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto* code = reinterpret_cast<const std::uint8_t*>(r.samples[HS_RECORDER_RING_SLOT(i, r.capacity)].from);
    while (*code == 0x3e || *code == 0xf2 || (*code & 0xf0) == 0x40) {  // notrack, bnd, REX
      ++code;
    }
    const unsigned reg = (code[1] >> 3) & 7;
    if (code[0] == 0xc3 || code[0] == 0xc2) {
      ++ret;
    } else if (code[0] == 0xe8) {
      ++call;
    } else if (code[0] == 0xff && reg == 2) {
      ++icall;
    } else if (code[0] == 0xff && reg == 4) {
      ++ijmp;
    } else if (code[0] == 0xe9 || code[0] == 0xeb) {
      ++jmp;
    } else {
      ++jcc;
    }
  }
  auto pct = [n](std::uint64_t k) {
    return n == 0 ? 0.0 : 100.0 * static_cast<double>(k) / static_cast<double>(n);
  };
  std::printf("mix of the last %llu: ret %.0f%% call %.0f%% icall %.0f%% ijmp %.0f%% jmp %.0f%% jcc %.0f%%\n",
              static_cast<unsigned long long>(n), pct(ret), pct(call), pct(icall), pct(ijmp), pct(jmp),
              pct(jcc));
}

// The thread's CPU time: steadier than the wall clock on a loaded machine.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
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
    if (const recorder::Failure failure = recorder::start_thread(); failure != nullptr) {
      std::fprintf(stderr, "recorder: %s\n", failure);
      return 3;
    }
    recorder::set_recording(std::strcmp(mode, "empty") != 0);
  }
  const double c0 = thread_cpu_ms();
  const auto t0 = std::chrono::steady_clock::now();
  if (native) {
    sort_all(&job);
  } else {
    recorder::run(sort_all, &job);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu = thread_cpu_ms() - c0;
  for (std::size_t i = 1; i < n; ++i) {
    if (v[i - 1] > v[i]) {
      std::fprintf(stderr, "not sorted at %zu\n", i);
      return 2;
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (native) {
    std::printf("%s ms=%.2f cpu_ms=%.2f\n", mode, ms, cpu);
  } else {
    std::printf("%s ms=%.2f cpu_ms=%.2f branches=%llu blocks=%llu cache_kb=%zu gaps=%llu\n", mode, ms, cpu,
                static_cast<unsigned long long>(recorder::ring().head),
                static_cast<unsigned long long>(recorder::stats().blocks), recorder::cache_bytes() / 1024,
                static_cast<unsigned long long>(recorder::stats().native_exits));
    if (std::getenv("RECORDER_MIX") != nullptr) {
      print_mix();
    }
  }
  return 0;
}
