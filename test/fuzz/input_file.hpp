// For fuzz targets whose parser reads a file: the input written to one temporary file per
// process (made once, rewritten for every input).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fuzz {

// The file's path, or "" when it could not be written.
inline std::string write_input(const char* name, const std::uint8_t* data, std::size_t size) {
  static const std::string path = [name] {
    std::string tmpl = std::string("/tmp/hs-fuzz-") + name + ".XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd >= 0) {
      ::close(fd);
    }
    return tmpl;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return "";
  }
  const bool whole = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && whole ? path : "";
}

}  // namespace fuzz
