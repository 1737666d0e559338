// The agent's printf (tracer/agent/printf, and the bytecode's printf op): what an agent-style
// dprintf prints, narrowing as C's printf would, strict about what it does not do.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "tracer/agent/bytecode.hpp"
#include "tracer/agent/printf.hpp"

using tracer::agent::execute;
using tracer::agent::format_printf;
using Code = std::vector<std::uint8_t>;
using Values = std::vector<std::uint64_t>;

namespace {

// No registers; memory: "hello" at 0x2000, then unmapped after 0x2010.
struct StringMachine : tracer::agent::Machine {
  std::string memory = std::string("hello\0world!!!!!", 16);
  std::string printed;
  base::Result<std::uint64_t> reg(int) override { return base::make_error(base::Errc::invalid, "no register"); }
  base::Result<std::uint64_t> read(tracer::Addr addr, std::size_t len) override {
    if (addr < 0x2000 || addr + len > 0x2000 + memory.size()) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    std::uint64_t v = 0;
    std::memcpy(&v, memory.data() + (addr - 0x2000), len);
    return v;
  }
  void print(std::string_view text) override { printed += text; }
};

std::string formatted(std::string_view format, const Values& values) {
  StringMachine m;
  auto text = format_printf(format, values, m);
  INFO(format << ": " << (text ? "ok" : text.error().message()));
  REQUIRE(text.ok());
  return *text;
}

std::string error_of(std::string_view format, const Values& values) {
  StringMachine m;
  auto text = format_printf(format, values, m);
  INFO(format);
  REQUIRE_FALSE(text.ok());
  return text.error().message();
}

// What GDB compiles for dprintf LOCATION,"FORMAT",ARGS...: the values pushed last to first,
// then the channel and the function, printf NARGS FORMAT, end.
Code printf_code(const std::string& format, const std::vector<std::uint8_t>& values_last_first) {
  Code code;
  for (std::uint8_t v : values_last_first) {
    code.insert(code.end(), {0x22, v});  // const8
  }
  code.insert(code.end(), {0x22, 0x00, 0x22, 0x00, 0x34, static_cast<std::uint8_t>(values_last_first.size())});
  const std::size_t len = format.size() + 1;
  code.push_back(static_cast<std::uint8_t>(len >> 8));
  code.push_back(static_cast<std::uint8_t>(len & 0xff));
  code.insert(code.end(), format.begin(), format.end());
  code.push_back(0);
  code.push_back(0x27);  // end
  return code;
}

}  // namespace

TEST_CASE("agent printf: integers narrowed as their length says, as C's printf", "[agent]") {
  CHECK(formatted("arg=%d, g=%d\n", {3, 7}) == "arg=3, g=7\n");
  CHECK(formatted("%d", {~std::uint64_t{0}}) == "-1");
  CHECK(formatted("%d", {0x100000005}) == "5");  // an int: the low 32 bits
  CHECK(formatted("%ld", {0x100000005}) == "4294967301");
  CHECK(formatted("%lld %jd %zd", {~std::uint64_t{0}, 2, 3}) == "-1 2 3");
  CHECK(formatted("%u", {~std::uint64_t{0}}) == "4294967295");
  CHECK(formatted("%lu", {~std::uint64_t{0}}) == "18446744073709551615");
  CHECK(formatted("%hhd %hd", {0x1ff, 0x18000}) == "-1 -32768");
  CHECK(formatted("%x %#X %08lx %o", {255, 255, 0xbeef, 8}) == "ff 0XFF 0000beef 10");
  CHECK(formatted("[%-5d|%+d|% d]", {42, 42, 42}) == "[42   |+42| 42]");
  CHECK(formatted("%c%c", {'o', 0x16b}) == "ok");
  CHECK(formatted("%p", {0x2000}) == "0x2000");
  CHECK(formatted("100%% sure", {}) == "100% sure");
  // GDB sends the format as typed: its escapes are ours to read.
  CHECK(formatted(R"(a\tb\n\"q\" \\ \e)", {}) == "a\tb\n\"q\" \\ \x1b");
}

TEST_CASE("agent printf: strings read from the program, bounded", "[agent]") {
  CHECK(formatted("<%s>", {0x2000}) == "<hello>");
  CHECK(formatted("<%.3s>", {0x2000}) == "<hel>");
  CHECK(formatted("<%8s|%-6s>", {0x2000, 0x2001}) == "<   hello|ello  >");
  CHECK(formatted("<%s>", {0}) == "<(null)>");
  // A string that runs into unmapped memory, one that starts there.
  CHECK_THAT(error_of("%s", {0x2006}), Catch::Contains("cannot read the string at 0x2006"));
  CHECK_THAT(error_of("%s", {0x10}), Catch::Contains("cannot read the string at 0x10"));
}

TEST_CASE("agent printf: what it does not do is an error, never a guess", "[agent]") {
  for (const char* format : {"%f", "%n", "%*d", "%.*d", "%lc", "%ls", "%Lf", "%a", "%lllld", "%", "abc%l", R"(\q)",
                             "\\"}) {
    CHECK_THAT(error_of(format, {1, 2}), Catch::Contains("agent printf"));
  }
  CHECK_THAT(error_of("%d %d", {1}), Catch::Contains("wants more than the 1 values"));
  CHECK_THAT(error_of("%d", {1, 2}), Catch::Contains("uses 1 of the 2 values"));
  CHECK_THAT(error_of("%99999d", {1}), Catch::Contains("too large"));
}

TEST_CASE("agent bytecode printf: a dprintf's command prints; a bad one faults", "[agent]") {
  StringMachine m;
  // dprintf foo,"arg=%d, g=%d\n",arg,g with arg 3 and g 7: g pushed first.
  const Code code = printf_code("arg=%d, g=%d\n", {7, 3});
  REQUIRE(tracer::agent::validate(code).ok());
  REQUIRE(execute(code, m).ok());
  CHECK(m.printed == "arg=3, g=7\n");
  // A value too few on the stack, a format without its NUL, one running past the end.
  Code short_stack = printf_code("%d %d", {1, 2});
  short_stack.erase(short_stack.begin(), short_stack.begin() + 2);
  CHECK_THAT(execute(short_stack, m).error().message(), Catch::Contains("stack underflow"));
  Code no_nul = printf_code("x", {});
  no_nul[no_nul.size() - 2] = 'y';
  CHECK_FALSE(tracer::agent::validate(no_nul).ok());
  Code past_end = printf_code("x", {});
  past_end[7] = 0x40;
  CHECK_FALSE(tracer::agent::validate(past_end).ok());
  // The format asks for more than the op was given.
  CHECK_THAT(execute(printf_code("%d %d", {1}), m).error().message(), Catch::Contains("wants more"));
  // A condition still needs its value: end on an empty stack is an error there.
  CHECK_FALSE(tracer::agent::evaluate(printf_code("x", {}), m).ok());
}
