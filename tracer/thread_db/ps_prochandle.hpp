// The process handle libthread_db passes back to our proc_service callbacks. Its layout is
// ours to choose (proc_service.h leaves it opaque).
#pragma once

#include "tracer/thread_db/thread_db.hpp"

struct ps_prochandle {
  tracer::ThreadDbHost* host = nullptr;
};
