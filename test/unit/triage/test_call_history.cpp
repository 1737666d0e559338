// Folding branch blocks into calls and returns (fold_calls) on hand-made histories, and the
// instruction classes that decide it (classify_transfer) on real encodings.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "tracer/symbols/call_history.hpp"

using arch::x86::Isa;
using tracer::BtraceBlock;
using tracer::Entered;
using tracer::SourceLocation;
using tracer::Transfer;

namespace {

// A made-up program: functions at 0x1000 (main), 0x2000 (prepare), 0x3000 (consume),
// 0x4000 (puts@plt), 0x5000 (puts); each block's last instruction is what `kinds` says.
struct Program {
  std::map<tracer::Addr, SourceLocation> functions{
      {0x1000, {"main", "/src/p.c", 10, "/bin/p", 0x1000}},   {0x2000, {"prepare", "/src/p.c", 20, "/bin/p", 0x2000}},
      {0x3000, {"consume", "/src/p.c", 30, "/bin/p", 0x3000}}, {0x4000, {"puts@plt", "", 0, "/bin/p", 0x4000}},
      {0x5000, {"puts", "", 0, "/lib/libc.so.6", 0x5000}},
  };
  std::map<tracer::Addr, Transfer> kinds;

  const SourceLocation& locate(tracer::Addr a) const { return functions.at(a & ~tracer::Addr{0xfff}); }
  Transfer classify(tracer::Addr a) const {
    auto it = kinds.find(a);
    return it != kinds.end() ? it->second : Transfer::Jump;
  }
  tracer::CallHistory fold(std::vector<BtraceBlock> oldest_first, std::size_t keep = 100,
                           std::vector<std::uint64_t> began_oldest_first = {}) const {
    std::vector<BtraceBlock> newest_first(oldest_first.rbegin(), oldest_first.rend());
    std::vector<std::uint64_t> began(began_oldest_first.rbegin(), began_oldest_first.rend());
    return tracer::fold_calls(
        newest_first, [this](tracer::Addr a) { return classify(a); },
        [this](tracer::Addr a) -> const SourceLocation& { return locate(a); }, keep, began);
  }
};

std::vector<std::string> names(const tracer::CallHistory& h) {
  std::vector<std::string> out;
  for (const auto& e : h.entries) {
    out.push_back(std::string(static_cast<std::size_t>(e.depth), ' ') + e.kind() + " " + e.where.function);
  }
  return out;
}

}  // namespace

TEST_CASE("fold_calls: calls and returns by depth, a cause that returned stays visible", "[triage][history]") {
  Program p;
  p.kinds = {{0x1010, Transfer::Call}, {0x2010, Transfer::Return}, {0x1020, Transfer::Call}};
  // main calls prepare, prepare returns, main calls consume (where the thread stops).
  auto h = p.fold({{0x1000, 0x1010}, {0x2000, 0x2010}, {0x1015, 0x1020}, {0x3000, 0x3004}});
  CHECK(names(h) == std::vector<std::string>{"call main", " call prepare", "return main", " call consume"});
  CHECK(h.entries.back().where.function == "consume");
  CHECK(h.entries.front().entered == Entered::Start);
  CHECK(h.branches == 3);
  CHECK(h.gaps == 0);
}

TEST_CASE("fold_calls: an entry takes the time of the block that entered it", "[triage][history]") {
  Program p;
  p.kinds = {{0x1010, Transfer::Call}, {0x2010, Transfer::Return}, {0x1020, Transfer::Call}};
  // main, prepare, back in main (a jump inside it: same entry), consume.
  auto h = p.fold({{0x1000, 0x1010}, {0x2000, 0x2010}, {0x1015, 0x1018}, {0x101c, 0x1020}, {0x3000, 0x3004}}, 100,
                  {0, 200, 300, 400, 500});
  REQUIRE(h.entries.size() == 4);
  CHECK(h.entries[0].t_ns == 0);  // where the history starts: unknown
  CHECK(h.entries[1].t_ns == 200);
  CHECK(h.entries[2].t_ns == 300);
  CHECK(h.entries[3].t_ns == 500);
  CHECK(p.fold({{0x1000, 0x1010}, {0x2000, 0x2010}}).entries.back().t_ns == 0);  // no times given
}

TEST_CASE("fold_calls: jumps inside a function are its branches; a jump to another is a tail call", "[triage][history]") {
  Program p;
  p.kinds = {{0x1010, Transfer::Call}};
  // main loops (two jumps to itself), calls puts@plt, which jumps into puts.
  auto h = p.fold({{0x1000, 0x1004}, {0x1000, 0x1004}, {0x1000, 0x1010}, {0x4000, 0x4000}, {0x5000, 0x5010}});
  REQUIRE(h.entries.size() == 3);
  CHECK(h.entries[0].branches == 2);
  CHECK(h.entries[1].where.function == "puts@plt");
  CHECK(h.entries[2].where.function == "puts");
  CHECK(h.entries[2].entered == Entered::Jump);
  CHECK(h.entries[2].depth == h.entries[1].depth);
}

TEST_CASE("fold_calls: depth is relative to the shallowest entry; keep_last drops the oldest", "[triage][history]") {
  Program p;
  p.kinds = {{0x3010, Transfer::Return}, {0x2010, Transfer::Return}, {0x1010, Transfer::Call}};
  // Starts deep: consume returns to prepare, which returns to main, which calls consume.
  auto h = p.fold({{0x3000, 0x3010}, {0x2000, 0x2010}, {0x1000, 0x1010}, {0x3000, 0x3008}});
  CHECK(names(h) == std::vector<std::string>{"  call consume", " return prepare", "return main", " call consume"});
  auto last_two = p.fold({{0x3000, 0x3010}, {0x2000, 0x2010}, {0x1000, 0x1010}, {0x3000, 0x3008}}, 2);
  CHECK(last_two.dropped == 2);
  CHECK(names(last_two) == std::vector<std::string>{"return main", " call consume"});
}

TEST_CASE("fold_calls: a gap is shown, never bridged with a made-up branch", "[triage][history]") {
  Program p;
  auto h = p.fold({{0x1000, 0x1010}, tracer::kGapBlock, {0x3000, 0x3008}});
  REQUIRE(h.entries.size() == 2);
  CHECK(h.entries[1].entered == Entered::Gap);
  CHECK(h.gaps == 1);
  CHECK(h.branches == 0);
}

TEST_CASE("fold_calls: a signal handler is entered like a call and left by sigreturn", "[triage][history]") {
  Program p;
  p.kinds = {{0x1010, Transfer::Other}, {0x2010, Transfer::Syscall}};
  auto h = p.fold({{0x1000, 0x1010}, {0x2000, 0x2010}, {0x1010, 0x1020}});
  REQUIRE(h.entries.size() == 3);
  CHECK(h.entries[1].entered == Entered::Signal);
  CHECK(h.entries[1].depth == 1);
  CHECK(h.entries[2].entered == Entered::Sigreturn);
  CHECK(std::string(h.entries[2].kind()) == "return");
}

TEST_CASE("fold_calls: an empty history has no entries", "[triage][history]") {
  Program p;
  CHECK(p.fold({}).entries.empty());
}

TEST_CASE("classify_transfer: call, ret, jmp, jcc, syscall, other, unreadable", "[triage][history]") {
  const std::vector<std::uint8_t> call{0xe8, 0, 0, 0, 0};
  const std::vector<std::uint8_t> call_indirect{0xff, 0xd0};  // call *%rax
  const std::vector<std::uint8_t> ret{0xc3};
  const std::vector<std::uint8_t> jmp{0xeb, 0x02};
  const std::vector<std::uint8_t> jne{0x75, 0x02};
  const std::vector<std::uint8_t> syscall{0x0f, 0x05};
  const std::vector<std::uint8_t> mov{0x48, 0x89, 0xc7};
  CHECK(tracer::classify_transfer(call, Isa::Amd64) == Transfer::Call);
  CHECK(tracer::classify_transfer(call_indirect, Isa::Amd64) == Transfer::Call);
  CHECK(tracer::classify_transfer(ret, Isa::Amd64) == Transfer::Return);
  CHECK(tracer::classify_transfer(jmp, Isa::Amd64) == Transfer::Jump);
  CHECK(tracer::classify_transfer(jne, Isa::Amd64) == Transfer::Jump);
  CHECK(tracer::classify_transfer(syscall, Isa::Amd64) == Transfer::Syscall);
  CHECK(tracer::classify_transfer(mov, Isa::Amd64) == Transfer::Other);
  CHECK(tracer::classify_transfer({}, Isa::Amd64) == Transfer::Unknown);
}

TEST_CASE("classify_transfer in i386 code: int $0x80 and sysenter enter the kernel; a call through gs: is a call",
          "[triage][history][i386]") {
  using Bytes = std::vector<std::uint8_t>;
  CHECK(tracer::classify_transfer(Bytes{0xcd, 0x80}, Isa::I386) == Transfer::Syscall);
  CHECK(tracer::classify_transfer(Bytes{0x0f, 0x34}, Isa::I386) == Transfer::Syscall);
  // glibc's way to __kernel_vsyscall, which emulation leaves to the CPU: still a call here.
  CHECK(tracer::classify_transfer(Bytes{0x65, 0xff, 0x15, 0x10, 0, 0, 0}, Isa::I386) == Transfer::Call);
  CHECK(tracer::classify_transfer(Bytes{0xff, 0xa3, 0x0c, 0, 0, 0}, Isa::I386) == Transfer::Jump);  // PIC PLT
  CHECK(tracer::classify_transfer(Bytes{0xc2, 0x04, 0x00}, Isa::I386) == Transfer::Return);
  // 0x48 is `dec %eax` in i386 code, no REX prefix: `48 ff d0` is no call there.
  CHECK(tracer::classify_transfer(Bytes{0x48, 0xff, 0xd0}, Isa::I386) == Transfer::Other);
  CHECK(tracer::classify_transfer(Bytes{0x48, 0xff, 0xd0}, Isa::Amd64) == Transfer::Call);
}
