// vFile support: GDB's open flags and errno numbering, and its big-endian struct stat.
#include "protocol/file_io.hpp"

#include <fcntl.h>

#include <cerrno>

#include "protocol/framing.hpp"

namespace protocol {

namespace {

// GDB file-I/O open flags (gdb/gdbsupport/fileio.h values).
constexpr int kGdbRdonly = 0x0;
constexpr int kGdbWronly = 0x1;
constexpr int kGdbRdwr = 0x2;
constexpr int kGdbAppend = 0x8;
constexpr int kGdbCreat = 0x200;
constexpr int kGdbTrunc = 0x400;
constexpr int kGdbExcl = 0x800;
constexpr int kGdbAccMode = 0x3;
constexpr int kGdbKnown = kGdbAccMode | kGdbAppend | kGdbCreat | kGdbTrunc | kGdbExcl;

constexpr int kGdbEunknown = 9999;

struct ErrnoPair {
  int host;
  int gdb;
};

// Values GDB's file-I/O protocol defines; they happen to equal Linux's except ENAMETOOLONG
// (91) and ENOSYS (88).
constexpr ErrnoPair kErrnos[] = {
    {EPERM, 1},   {ENOENT, 2},   {EINTR, 4},   {EIO, 5},     {EBADF, 9},   {EACCES, 13},
    {EFAULT, 14}, {EBUSY, 16},   {EEXIST, 17}, {ENODEV, 19}, {ENOTDIR, 20}, {EISDIR, 21},
    {EINVAL, 22}, {ENFILE, 23},  {EMFILE, 24}, {EFBIG, 27},  {ENOSPC, 28}, {ESPIPE, 29},
    {EROFS, 30},  {ENOSYS, 88},  {ENAMETOOLONG, 91},
};

void put_be(std::uint8_t*& p, std::uint64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    *p++ = static_cast<std::uint8_t>(value >> (8 * i));
  }
}

}  // namespace

Result<int> host_open_flags(int gdb_flags) {
  if ((gdb_flags & ~kGdbKnown) != 0) {
    return base::make_error(base::Errc::malformed, "unknown open flags");
  }
  int flags = 0;
  switch (gdb_flags & kGdbAccMode) {
    case kGdbRdonly:
      flags = O_RDONLY;
      break;
    case kGdbWronly:
      flags = O_WRONLY;
      break;
    case kGdbRdwr:
      flags = O_RDWR;
      break;
    default:
      return base::make_error(base::Errc::malformed, "bad open access mode");
  }
  if ((gdb_flags & kGdbAppend) != 0) {
    flags |= O_APPEND;
  }
  if ((gdb_flags & kGdbCreat) != 0) {
    flags |= O_CREAT;
  }
  if ((gdb_flags & kGdbTrunc) != 0) {
    flags |= O_TRUNC;
  }
  if ((gdb_flags & kGdbExcl) != 0) {
    flags |= O_EXCL;
  }
  return flags;
}

int gdb_errno(int host_errno) {
  for (const ErrnoPair& e : kErrnos) {
    if (e.host == host_errno) {
      return e.gdb;
    }
  }
  return kGdbEunknown;
}

std::string encode_gdb_stat(const FileStat& st) {
  std::uint8_t buf[64];
  std::uint8_t* p = buf;
  put_be(p, st.dev, 4);
  put_be(p, st.ino, 4);
  put_be(p, st.mode, 4);
  put_be(p, st.nlink, 4);
  put_be(p, st.uid, 4);
  put_be(p, st.gid, 4);
  put_be(p, st.rdev, 4);
  put_be(p, st.size, 8);
  put_be(p, st.blksize, 8);
  put_be(p, st.blocks, 8);
  put_be(p, static_cast<std::uint64_t>(st.atime), 4);
  put_be(p, static_cast<std::uint64_t>(st.mtime), 4);
  put_be(p, static_cast<std::uint64_t>(st.ctime), 4);
  return escape_binary(std::span<const std::uint8_t>(buf, sizeof buf));
}

}  // namespace protocol
