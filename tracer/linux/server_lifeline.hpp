// How a program the in-process recorder is in learns that the server died (SIGKILL, the OOM
// killer), when no ptrace stop will come again: through the kernel's robust futex lists. A
// thread of the server's that does nothing else has a robust list whose entries are the
// lifeline words of the recorder's thread blocks (recorder_api.h, lifeline_slot), each mapped
// here writable from the program's memfd and holding that thread's tid. When the server dies,
// the kernel walks the list and marks every word (FUTEX_OWNER_DIED); the cache's code meets the
// mark and the program's threads leave for native code for good: it runs on at full speed, as
// under gdbserver.
#pragma once

#include <memory>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

class LifelineWord {
 public:
  // The lifeline word of the block at `block` in pid (mapped from its descriptor fd, the block
  // at the descriptor's start), `link` its link's program address: on the list, marked alive.
  static base::Result<std::shared_ptr<LifelineWord>> watch(Pid pid, int fd, Addr block, Addr link);
  ~LifelineWord();  // off the list (the server lives on: the word is left as it is)
  LifelineWord(const LifelineWord&) = delete;
  LifelineWord& operator=(const LifelineWord&) = delete;

 private:
  LifelineWord(void* page, void* link) : page_(page), link_(link) {}
  void* page_;  // the block's first page, mapped here writable
  void* link_;  // the list entry in it
};

}  // namespace tracer
