#include "tracer/linux/server_lifeline.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "tracer/inprocess/recorder/recorder_api.h"

namespace tracer {
namespace {

constexpr std::size_t kPage = 4096;

// The list and the thread whose list it is (started once, never ends).
struct Lifeline {
  std::mutex lock;
  robust_list_head head{};
  std::atomic<pid_t> tid{0};

  Lifeline() {
    head.list.next = &head.list;
    head.futex_offset = HS_RECORDER_LIFELINE_WORD;
    head.list_op_pending = nullptr;
    // (Every signal blocked first, so that the server's own go to its other threads.)
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    std::thread([this] {
      if (::syscall(SYS_set_robust_list, &head, sizeof head) == 0) {
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
      } else {
        tid = -1;
      }
      tid.notify_all();
      for (;;) {
        ::pause();
      }
    }).detach();
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    tid.wait(0);
  }
};

Lifeline& lifeline() {
  static Lifeline* one = new Lifeline;  // (never destroyed: its thread outlives exit's destructors)
  return *one;
}

}  // namespace

base::Result<std::shared_ptr<LifelineWord>> LifelineWord::watch(Pid pid, int fd, Addr block, Addr link) {
  Lifeline& l = lifeline();
  if (l.tid <= 0) {
    return base::make_error(base::Errc::unsupported, "the server's lifeline thread has no robust list");
  }
  if (link < block || link + HS_RECORDER_LIFELINE_WORD + 4 > block + kPage) {
    return base::make_error(base::Errc::invalid, "the lifeline is not in the block's first page");
  }
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int local_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local_fd < 0) {
    return base::sys_error("open " + path);
  }
  void* page = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, local_fd, 0);
  ::close(local_fd);
  if (page == MAP_FAILED) {
    return base::sys_error("mmap " + path);
  }
  auto* entry = reinterpret_cast<robust_list*>(static_cast<std::uint8_t*>(page) + (link - block));
  auto* word = reinterpret_cast<std::atomic<std::uint32_t>*>(reinterpret_cast<std::uint8_t*>(entry) +
                                                             HS_RECORDER_LIFELINE_WORD);
  word->store(static_cast<std::uint32_t>(l.tid.load()));
  {
    std::lock_guard<std::mutex> hold(l.lock);
    entry->next = l.head.list.next;
    l.head.list.next = entry;
  }
  return std::shared_ptr<LifelineWord>(new LifelineWord(page, entry));
}

LifelineWord::~LifelineWord() {
  Lifeline& l = lifeline();
  {
    std::lock_guard<std::mutex> hold(l.lock);
    for (robust_list* at = &l.head.list; at->next != &l.head.list; at = at->next) {
      if (at->next == link_) {
        at->next = static_cast<robust_list*>(link_)->next;
        break;
      }
    }
  }
  ::munmap(page_, kPage);
}

}  // namespace tracer
