// Reading the program's own /proc/self files from inside it without allocating: the recorder
// runs there on its private stack, where the program's malloc may be held by the thread it
// interrupted. Only each line's first kLineBytes are seen.
#pragma once

#include <cstddef>

namespace recorder {

inline constexpr std::size_t kLineBytes = 256;

using LineFn = void (*)(void* context, const char* line, std::size_t length);
// Calls fn for each line of `path` (without its newline); false if the file could not be read.
bool for_each_line(const char* path, LineFn fn, void* context);
// How many threads the process has now (/proc/self/status), 0 if unknown.
std::size_t thread_count();
// A value of the process's auxiliary vector (/proc/self/auxv), 0 if it has none.
unsigned long auxv_value(unsigned long type);

}  // namespace recorder
