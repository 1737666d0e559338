// Pure pieces of tracer/linux: the int3 table, /proc stat parsing; and ancestry in /proc.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/linux/procfs.hpp"
#include "tracer/linux/software_breakpoints.hpp"

using tracer::Bytes;
using tracer::SoftwareBreakpoints;

TEST_CASE("software breakpoints: add is idempotent, release gives the original", "[bp]") {
  SoftwareBreakpoints bps;
  CHECK(bps.add(0x1000, 0x55));
  CHECK_FALSE(bps.add(0x1000, 0xCC));  // second insert keeps the first original byte
  CHECK(bps.original(0x1000) == 0x55);
  CHECK(bps.release(0x1000) == 0x55);
  CHECK(bps.release(0x1000) == std::nullopt);
  CHECK(bps.empty());
}

TEST_CASE("software breakpoints: reads see originals, writes update them", "[bp]") {
  SoftwareBreakpoints bps;
  bps.add(0x1002, 0x48);
  bps.add(0x1010, 0x90);
  Bytes mem = {0, 1, 0xCC, 3};
  bps.hide(0x1000, mem);
  CHECK(mem == Bytes{0, 1, 0x48, 3});
  Bytes edge = {0xCC};
  bps.hide(0x1010, edge);
  CHECK(edge == Bytes{0x90});
  Bytes none = {0xCC};
  bps.hide(0x1011, none);
  CHECK(none == Bytes{0xCC});

  Bytes write = {7, 8, 9};
  bps.absorb_write(0x1001, write);
  CHECK(write == Bytes{7, 0xCC, 9});
  CHECK(bps.original(0x1002) == 8);
  Bytes empty;
  bps.absorb_write(0x1002, empty);
  CHECK(bps.original(0x1002) == 8);
}

TEST_CASE("procfs: stat parsing copes with odd thread names", "[procfs]") {
  std::string line = "1234 (a) b (c)) t 1 1234 1234 0 -1 4194560";
  for (int i = 10; i <= 38; ++i) {
    line += " " + std::to_string(i == 39 ? 0 : 100 + i);
  }
  line += " 5 0 0";
  // Fields after ')' start at 3; the 39th is "5" here only if the count is right.
  auto st = tracer::procfs::parse_stat(line);
  REQUIRE(st);
  CHECK(st->name == "a) b (c)");
  CHECK(st->state == 't');
  CHECK(st->parent == 1);
  CHECK(st->core == 5);
  CHECK_FALSE(tracer::procfs::parse_stat("garbage"));
}

TEST_CASE("procfs: a grandchild descends from us; we, init and a pid nobody has do not descend from it",
          "[procfs]") {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::fork() == 0) {  // the grandchild says its pid, then waits to be killed
      const pid_t me = ::getpid();
      (void)!::write(ready[1], &me, sizeof me);
      ::pause();
    }
    ::pause();
  }
  pid_t grandchild = 0;
  REQUIRE(::read(ready[0], &grandchild, sizeof grandchild) == sizeof grandchild);
  CHECK(tracer::procfs::descends_from(child, ::getpid()));
  CHECK(tracer::procfs::descends_from(grandchild, ::getpid()));
  CHECK(tracer::procfs::descends_from(grandchild, child));
  CHECK_FALSE(tracer::procfs::descends_from(::getpid(), grandchild));
  CHECK_FALSE(tracer::procfs::descends_from(1, ::getpid()));
  CHECK_FALSE(tracer::procfs::descends_from(0x7ffffff, ::getpid()));  // above any pid_max
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("find_mapping: the /proc/PID/maps line holding an address", "[scope]") {
  const std::string maps =
      "555555554000-555555555000 r--p 00000000 08:01 1234                       /home/u/prog\n"
      "555555555000-555555556000 r-xp 00001000 08:01 1234                       /home/u/prog\n"
      "7ffff7dd0000-7ffff7f25000 r-xp 00026000 08:01 99   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0                          [vvar]\n"
      "7ffff7ff0000-7ffff7ff1000 rwxp 00000000 00:00 0 \n";
  auto exe = tracer::procfs::find_mapping(maps, 0x555555555123);
  REQUIRE(exe);
  CHECK(exe->start == 0x555555555000);
  CHECK(exe->end == 0x555555556000);
  CHECK(exe->path == "/home/u/prog");
  auto libc = tracer::procfs::find_mapping(maps, 0x7ffff7dd0000);
  REQUIRE(libc);
  CHECK(libc->path == "/usr/lib/x86_64-linux-gnu/libc.so.6");
  auto anon = tracer::procfs::find_mapping(maps, 0x7ffff7ff0800);
  REQUIRE(anon);
  CHECK(anon->path.empty());
  CHECK(tracer::procfs::find_mapping(maps, 0x7ffff7fc1000)->path == "[vvar]");
  CHECK_FALSE(tracer::procfs::find_mapping(maps, 0x555555556000));  // end is exclusive
  CHECK_FALSE(tracer::procfs::find_mapping(maps, 0x1000));
}
