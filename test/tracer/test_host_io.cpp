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

#include <sys/ipc.h>
#include <sys/shm.h>

#include "tracer/linux/osdata.hpp"

namespace {

std::string column(const tracer::OsRow& row, const std::string& name) {
  for (const auto& [n, v] : row) {
    if (n == name) {
      return v;
    }
  }
  return "<none>";
}

}  // namespace

TEST_CASE("osdata: /proc texts parsed as the kernel writes them", "[hostio][osdata]") {
  CHECK(tracer::osdata::socket_address("0100007F") == "127.0.0.1");
  CHECK(tracer::osdata::socket_address("00000000") == "0.0.0.0");
  CHECK(tracer::osdata::socket_address("00000000000000000000000001000000") == "::1");
  auto table = tracer::osdata::parse_table("       key      shmid perms\n      1234          7   666\n");
  REQUIRE(table.size() == 1);
  CHECK(table[0] == std::vector<std::pair<std::string, std::string>>{{"key", "1234"}, {"shmid", "7"}, {"perms", "666"}});
}

TEST_CASE("osdata: this process, its thread, a descriptor and a shared-memory segment show", "[hostio][osdata]") {
  tracer::LinuxHostIo io;
  const std::string me = std::to_string(::getpid());
  auto processes = io.os_data("processes");
  REQUIRE(processes.ok());
  bool found = false;
  for (const auto& row : *processes) {
    found = found || (column(row, "pid") == me && column(row, "command").find("tracer_linux_unit") != std::string::npos);
  }
  CHECK(found);

  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto files = io.os_data("files");
  REQUIRE(files.ok());
  found = false;
  for (const auto& row : *files) {
    found = found || (column(row, "pid") == me && column(row, "file descriptor") == std::to_string(fd) &&
                      column(row, "name") == "/dev/null");
  }
  ::close(fd);
  CHECK(found);

  const key_t key = 0x4853'0000 + (::getpid() & 0xffff);
  const int shmid = ::shmget(key, 4096, IPC_CREAT | 0666);
  REQUIRE(shmid >= 0);
  auto shm = io.os_data("shm");
  ::shmctl(shmid, IPC_RMID, nullptr);
  REQUIRE(shm.ok());
  found = false;
  for (const auto& row : *shm) {
    found = found || (column(row, "shmid") == std::to_string(shmid) && column(row, "permissions") == "666" &&
                      column(row, "size") == "4096" && column(row, "key") == std::to_string(key));
  }
  CHECK(found);
  CHECK_FALSE(io.os_data("bogus").ok());
}
