#include <catch2/catch.hpp>

#include "protocol/inferior_args.hpp"

using protocol::join_inferior_args;
using protocol::split_inferior_args;
using Args = std::vector<std::string>;

TEST_CASE("split_inferior_args: blanks separate, quotes group, a backslash escapes as in a POSIX shell") {
  CHECK(split_inferior_args("") == Args{});
  CHECK(split_inferior_args("  a\tb  c ") == Args{"a", "b", "c"});
  CHECK(split_inferior_args(R"('a b' "c d" e\ f)") == Args{"a b", "c d", "e f"});
  CHECK(split_inferior_args(R"(x'y z'w)") == Args{"xy zw"});
  CHECK(split_inferior_args(R"('' "")") == Args{"", ""});
  CHECK(split_inferior_args(R"("it's" 'say "hi"')") == Args{"it's", R"(say "hi")"});
  CHECK(split_inferior_args(R"(a\"b 'c\d' "e\f\"g\$")") == Args{R"(a"b)", R"(c\d)", R"(e\f"g$)"});
  CHECK(split_inferior_args("one\\\ntwo") == Args{"onetwo"});  // backslash-newline
  CHECK(split_inferior_args("$HOME *.c") == Args{"$HOME", "*.c"});  // no expansion
  CHECK(split_inferior_args("end\\") == Args{"end"});                // a lone backslash at the end
}

TEST_CASE("join_inferior_args: the shell reads each argument back as it was") {
  CHECK(join_inferior_args({}) == "");
  CHECK(join_inferior_args({"a", "b"}) == "a b");
  CHECK(join_inferior_args({"a b", "", "$HOME", "*.c"}) == R"(a\ b '' \$HOME \*.c)");
  CHECK(join_inferior_args({"it's", R"("q")"}) == R"(it\'s \"q\")");
  CHECK(join_inferior_args({"line\nnext"}) == "line'\n'next");
}

TEST_CASE("join_inferior_args then split_inferior_args give the arguments back (no newlines: GDB's split keeps quotes' newlines)") {
  const Args args = GENERATE(Args{"plain"}, Args{"a b", "c\td"}, Args{"", "x"}, Args{R"(\ ' " $ * ; | &)"},
                             Args{"--flag=1", "/path/with space/f"});
  CHECK(split_inferior_args(join_inferior_args(args)) == args);
}
