// The recorder's private loader: the server reads libhindsight-recorder.so and the one library
// it uses (Zydis) from its own files, links them for a place in the program it reserves with a
// system call of its own (remote_syscalls.hpp), writes them there and sets their protections.
// The program's loader, allocator, libc and locks are never used: the recorder is in no link
// map, shows in /proc/PID/maps as anonymous memory, and needs no file in the program's mount
// namespace (a container).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/linux/private_image.hpp"
#include "tracer/linux/remote_syscalls.hpp"

namespace tracer {

// The image and its libraries, read and checked (no TLS, no initializers, nothing undefined):
// the image first. A library's own need of libc is answered by the image (freestanding.cpp).
base::Result<std::vector<ElfObject>> read_recorder_objects(const std::string& image_path);

struct MappedRecorder {
  Addr base = 0;
  std::uint64_t span = 0;
  std::map<std::string, Addr> exports;  // the image's defined symbols, absolute
};

// Reserves room in the program, links the objects for it, writes and protects them.
base::Result<MappedRecorder> map_recorder(RemoteSyscalls& calls, Kernel& kernel, Pid pid,
                                          const std::vector<ElfObject>& objects);

}  // namespace tracer
