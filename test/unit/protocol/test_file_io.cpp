// vFile flags, errno numbering and struct stat.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <cerrno>

#include "protocol/file_io.hpp"
#include "protocol/framing.hpp"

TEST_CASE("host_open_flags", "[file_io]") {
  CHECK(*protocol::host_open_flags(0) == O_RDONLY);
  CHECK(*protocol::host_open_flags(1) == O_WRONLY);
  CHECK(*protocol::host_open_flags(2) == O_RDWR);
  CHECK(*protocol::host_open_flags(0x8 | 1) == (O_APPEND | O_WRONLY));
  CHECK(*protocol::host_open_flags(0x200 | 0x400 | 0x800 | 2) == (O_CREAT | O_TRUNC | O_EXCL | O_RDWR));
  for (int bad : {3, 0x4, 0x10, 0x100, 0x1000, 0x40, -1}) {
    INFO(bad);
    auto r = protocol::host_open_flags(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Errc::malformed);
  }
}

TEST_CASE("gdb_errno", "[file_io]") {
  struct Pair {
    int host;
    int gdb;
  };
  const Pair pairs[] = {
      {EPERM, 1},    {ENOENT, 2},   {EINTR, 4},    {EIO, 5},      {EBADF, 9},    {EACCES, 0xd},
      {EFAULT, 0xe}, {EBUSY, 0x10}, {EEXIST, 0x11}, {ENODEV, 0x13}, {ENOTDIR, 0x14}, {EISDIR, 0x15},
      {EINVAL, 0x16}, {ENFILE, 0x17}, {EMFILE, 0x18}, {EFBIG, 0x1b}, {ENOSPC, 0x1c}, {ESPIPE, 0x1d},
      {EROFS, 0x1e}, {ENOSYS, 0x58}, {ENAMETOOLONG, 0x5b},
  };
  for (const auto& p : pairs) {
    INFO(p.host);
    CHECK(protocol::gdb_errno(p.host) == p.gdb);
  }
  CHECK(protocol::gdb_errno(ELOOP) == 9999);
  CHECK(protocol::gdb_errno(0) == 9999);
  CHECK(protocol::gdb_errno(-5) == 9999);
}

TEST_CASE("encode_gdb_stat", "[file_io]") {
  protocol::FileStat st;
  st.dev = 0xfe00;
  st.ino = 0xa92745;
  st.mode = 0100755;
  st.nlink = 1;
  st.uid = 0x11223344;
  st.gid = 0x23;  // '#' must come out escaped
  st.rdev = 0x1'0000'0001;  // truncated to 4 bytes
  st.size = 0x4538;
  st.blksize = 0x1000;
  st.blocks = 0x28;
  st.atime = 0x6b027600;
  st.mtime = 0x6b0276d0;
  st.ctime = -1;
  std::string esc = protocol::encode_gdb_stat(st);
  auto raw = protocol::unescape_binary(esc);
  REQUIRE(raw.ok());
  REQUIRE(raw->size() == 64);
  protocol::Bytes expect = {
      0x00, 0x00, 0xfe, 0x00, 0x00, 0xa9, 0x27, 0x45, 0x00, 0x00, 0x81, 0xed, 0x00, 0x00, 0x00, 0x01,
      0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x45, 0x38, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x28, 0x6b, 0x02, 0x76, 0x00, 0x6b, 0x02, 0x76, 0xd0, 0xff, 0xff, 0xff, 0xff,
  };
  CHECK(*raw == expect);
  CHECK(esc.find('#') == std::string::npos);
  CHECK(esc.size() == 65);
}
