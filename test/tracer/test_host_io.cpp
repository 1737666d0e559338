// LinuxHostIo on the test's own filesystem.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "tracer/linux/host_io.hpp"

TEST_CASE("host io: write, read, stat, readlink, unlink a temporary file", "[hostio]") {
  tracer::LinuxHostIo io;
  REQUIRE(io.setfs(0).ok());
  char dir_template[] = "/tmp/hs-hostio-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string file = dir + "/f";

  auto fd = io.open(file, O_RDWR | O_CREAT | O_EXCL, 0600);
  REQUIRE(fd.ok());
  auto n = io.pwrite(*fd, 0, {'h', 'e', 'l', 'l', 'o'});
  REQUIRE(n.ok());
  CHECK(*n == 5);
  auto data = io.pread(*fd, 100, 1);
  REQUIRE(data.ok());
  CHECK(*data == tracer::Bytes{'e', 'l', 'l', 'o'});
  CHECK(io.pread(*fd, 10, 5)->empty());
  auto st = io.fstat(*fd);
  REQUIRE(st.ok());
  CHECK(st->size == 5);
  CHECK((st->mode & 0777) == 0600);
  CHECK(S_ISREG(st->mode));
  REQUIRE(io.close(*fd).ok());

  auto again = io.close(*fd);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().sys_errno == EBADF);
  CHECK(io.pread(0, 1, 0).error().sys_errno == EBADF);  // not ours: never touched

  REQUIRE(::symlink("f", (dir + "/link").c_str()) == 0);
  CHECK(io.readlink(dir + "/link").value_or("") == "f");
  REQUIRE(io.unlink(dir + "/link").ok());
  REQUIRE(io.unlink(file).ok());
  auto missing = io.open(file, O_RDONLY, 0);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == base::Errc::system);
  CHECK(missing.error().sys_errno == ENOENT);
  CHECK(io.unlink(file).error().sys_errno == ENOENT);
  ::rmdir(dir.c_str());
}

TEST_CASE("host io: setfs of a process in our namespace resolves paths directly", "[hostio]") {
  tracer::LinuxHostIo io;
  REQUIRE(io.setfs(::getpid()).ok());
  CHECK(io.resolve("/etc/hostname") == "/etc/hostname");
  auto bad = io.setfs(999999999);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().sys_errno == ENOENT);
  auto fd = io.open("just probing", O_RDONLY, 0);
  REQUIRE_FALSE(fd.ok());
  CHECK(fd.error().sys_errno == ENOENT);
}
