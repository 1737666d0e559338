// vFile numbering: GDB's file-I/O open flags, errno values and its big-endian struct stat.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/hex.hpp"

namespace protocol {

// GDB open flags (RDONLY 0, WRONLY 1, RDWR 2, APPEND 8, CREAT 0x200, TRUNC 0x400, EXCL 0x800)
// -> Linux O_* flags. Unknown bits are malformed.
Result<int> host_open_flags(int gdb_flags);
// Linux errno -> GDB file-I/O errno (anything unknown is 9999 = EUNKNOWN).
int gdb_errno(int host_errno);

struct FileStat {
  std::uint64_t dev = 0, ino = 0, mode = 0, nlink = 0, uid = 0, gid = 0, rdev = 0;
  std::uint64_t size = 0, blksize = 0, blocks = 0;
  std::int64_t atime = 0, mtime = 0, ctime = 0;
};
// The 64-byte big-endian struct GDB expects after "F40;" (fields truncated to their width).
std::string encode_gdb_stat(const FileStat& st);

}  // namespace protocol
