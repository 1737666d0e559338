// --btrace-scope=all|exe|PATH[,PATH...]: which objects' branches SoftEmulate records. A branch
// into code out of scope is recorded, then the thread runs there natively; a call out of scope
// traps once at its return address and shows as a call and a return (btrace.md, "Scope").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct BtraceScope {
  bool all = true;                 // every object (the default)
  bool exe = false;                // the main executable
  std::vector<std::string> paths;  // objects named by path or file name

  // Does the object mapped from `object` (a file path; empty or "[...]" for anonymous memory
  // and the vDSO) belong to the scope? exe_path: the process's executable.
  bool covers(std::string_view object, std::string_view exe_path) const;
  // The text --btrace-scope took ("all", "exe", "exe,libfoo.so").
  std::string text() const;
};

// "all", "exe", or a comma-separated list of "exe" and paths. A PATH matches an object by its
// whole path, by its file name (libfoo.so.1), or by the file name up to a dot (libfoo.so).
base::Result<BtraceScope> parse_btrace_scope(std::string_view text);

// An object mapped into the inferior: [start, end) and the file it comes from.
struct MappedObject {
  Addr start = 0;
  Addr end = 0;
  std::string path;  // empty for anonymous memory; "[vdso]" and the like as /proc shows them
  std::uint64_t offset = 0;  // of start in the file
};

}  // namespace tracer
