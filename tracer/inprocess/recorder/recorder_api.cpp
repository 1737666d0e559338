// libhindsight-recorder.so's entry points: what the server calls in the program it brought the
// recorder into (with an inferior call, tracer/linux/inferior_call.hpp). C names, exported by
// recorder.map and nothing else.
#include "tracer/inprocess/recorder/recorder_api.h"

extern "C" unsigned hs_recorder_abi_version(void) {
  return HS_RECORDER_ABI_VERSION;
}
