// --btrace-scope: parsing it and matching mapped objects.
#include <catch2/catch.hpp>

#include "tracer/btrace/scope.hpp"

using tracer::parse_btrace_scope;

TEST_CASE("parse_btrace_scope: all, exe, paths; nothing else", "[scope]") {
  auto all = parse_btrace_scope("all");
  REQUIRE(all);
  CHECK(all->all);
  CHECK(all->text() == "all");
  auto list = parse_btrace_scope("exe,libfoo.so,/opt/lib/libbar.so.2");
  REQUIRE(list);
  CHECK_FALSE(list->all);
  CHECK(list->exe);
  CHECK(list->paths == std::vector<std::string>{"libfoo.so", "/opt/lib/libbar.so.2"});
  CHECK(list->text() == "exe,libfoo.so,/opt/lib/libbar.so.2");
  CHECK_FALSE(parse_btrace_scope(""));
  CHECK_FALSE(parse_btrace_scope("exe,,libc.so"));
  CHECK_FALSE(parse_btrace_scope("exe,all"));
}

TEST_CASE("BtraceScope::covers: the executable, whole paths, file names, names up to a dot", "[scope]") {
  auto scope = *parse_btrace_scope("exe,libc.so,/opt/lib/libbar.so.2");
  const std::string exe = "/home/u/prog";
  CHECK(scope.covers("/home/u/prog", exe));
  CHECK(scope.covers("/usr/lib/x86_64-linux-gnu/libc.so.6", exe));   // libc.so names libc.so.6
  CHECK_FALSE(scope.covers("/usr/lib/x86_64-linux-gnu/libcrypt.so.1", exe));
  CHECK(scope.covers("/opt/lib/libbar.so.2", exe));
  CHECK_FALSE(scope.covers("/usr/lib/libbar.so.2", exe));             // an absolute path is one file
  CHECK_FALSE(scope.covers("", exe));                                 // anonymous: code made at run time
  CHECK_FALSE(scope.covers("[vdso]", exe));
  auto only_lib = *parse_btrace_scope("libc.so.6");
  CHECK_FALSE(only_lib.covers("/home/u/prog", exe));
  CHECK(parse_btrace_scope("all")->covers("", exe));
}
