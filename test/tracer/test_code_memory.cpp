// CodeMemory (tracer/linux/code_memory.hpp) against a model: plants, unplants, writes, reads and
// step-overs from every owner, interleaved at random, over memory held in a vector. The program's
// view always equals the model, memory holds an int3 exactly where a site is, and once every
// owner has let go memory equals the model with no int3 at all.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "tracer/linux/code_memory.hpp"

using tracer::Addr;
using tracer::Bytes;
using tracer::CodeMemory;
using tracer::SiteOwner;

namespace {

constexpr Addr kBase = 0x1000;
constexpr std::size_t kSize = 64;

// Memory as a vector; writes can be made to fail.
class VectorMemory final : public tracer::RawMemory {
 public:
  explicit VectorMemory(Bytes bytes) : bytes_(std::move(bytes)) {}
  base::Result<Bytes> read(Addr addr, std::size_t len) const override {
    if (unmapped || addr < kBase || addr >= kBase + bytes_.size()) {
      return base::sys_error("read memory", 5);
    }
    const std::size_t from = addr - kBase;
    const std::size_t n = std::min(len, bytes_.size() - from);
    return Bytes(bytes_.begin() + static_cast<std::ptrdiff_t>(from),
                 bytes_.begin() + static_cast<std::ptrdiff_t>(from + n));
  }
  base::Result<void> write(Addr addr, const Bytes& data) const override {
    if (fail_writes || addr < kBase || addr + data.size() > kBase + bytes_.size()) {
      return base::sys_error("write memory", 5);
    }
    std::copy(data.begin(), data.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(addr - kBase));
    return base::success();
  }
  const Bytes& bytes() const { return bytes_; }
  bool fail_writes = false;
  bool unmapped = false;  // the program unmapped it all

 private:
  mutable Bytes bytes_;
};

Bytes random_bytes(std::mt19937& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) {
    // Some 0xCC of the program's own: they are not ours and must stay as written.
    b = rng() % 8 == 0 ? tracer::kInt3 : static_cast<std::uint8_t>(rng());
  }
  return out;
}

constexpr SiteOwner kOwners[] = {SiteOwner::Gdb, SiteOwner::Collector, SiteOwner::Range};

}  // namespace

TEST_CASE("CodeMemory: random plants, unplants, writes and step-overs match a model", "[code_memory]") {
  const auto seed = GENERATE(range(1u, 41u));
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  Bytes model = random_bytes(rng, kSize);  // what the program sees
  VectorMemory raw(model);
  CodeMemory code(raw);
  std::set<std::pair<Addr, SiteOwner>> claims;

  auto check = [&] {
    auto all = code.read(kBase, kSize);
    REQUIRE(all);
    REQUIRE(*all == model);
    for (std::size_t i = 0; i < kSize; ++i) {
      const Addr a = kBase + i;
      if (code.contains(a) && code.lifted() != a) {
        REQUIRE(raw.bytes()[i] == tracer::kInt3);
      } else {
        REQUIRE(raw.bytes()[i] == model[i]);
      }
    }
  };

  for (int step = 0; step < 400; ++step) {
    const Addr addr = kBase + rng() % kSize;
    const SiteOwner owner = kOwners[rng() % 3];
    switch (rng() % 7) {
      case 0:
      case 1:
        REQUIRE(code.plant(addr, owner));
        claims.insert({addr, owner});
        break;
      case 2:
        CHECK(code.unplant(addr, owner).value() == (claims.erase({addr, owner}) == 1));
        break;
      case 3: {
        const std::size_t len = 1 + rng() % 12;
        const Addr at = kBase + rng() % (kSize - len);
        const Bytes data = random_bytes(rng, len);
        raw.fail_writes = rng() % 5 == 0;
        auto ok = code.write(at, data);
        CHECK(static_cast<bool>(ok) == !raw.fail_writes);
        if (ok) {
          std::copy(data.begin(), data.end(), model.begin() + static_cast<std::ptrdiff_t>(at - kBase));
        }
        raw.fail_writes = false;
        break;
      }
      case 4: {
        const std::size_t len = 1 + rng() % 20;
        const Addr at = kBase + rng() % (kSize - len);
        auto got = code.read(at, len);
        REQUIRE(got);
        CHECK(*got == Bytes(model.begin() + static_cast<std::ptrdiff_t>(at - kBase),
                            model.begin() + static_cast<std::ptrdiff_t>(at - kBase + len)));
        break;
      }
      case 5:
        if (!code.lifted() && code.contains(addr)) {
          REQUIRE(code.lift(addr));  // a step-over in place begins
        }
        break;
      case 6:
        code.reinstate();  // ... and ends
        break;
    }
    check();
  }
  code.reinstate();
  for (const auto& [addr, owner] : claims) {
    CHECK(code.unplant(addr, owner).value());
  }
  CHECK(code.empty());
  CHECK(raw.bytes() == model);  // no int3 of ours left, every byte the program wrote
}

TEST_CASE("CodeMemory: a failed write changes nothing, a good one drops the slots it copied", "[code_memory]") {
  Bytes initial(kSize, 0x90);
  VectorMemory raw(initial);
  CodeMemory code(raw);
  REQUIRE(code.plant(kBase + 8, SiteOwner::Gdb));
  code.out_of_line().slots[kBase + 8] = {kBase + 48, 1};
  code.out_of_line().slots[kBase + 30] = {kBase + 56, 1};
  raw.fail_writes = true;
  CHECK_FALSE(code.write(kBase + 6, Bytes{1, 2, 3, 4}));
  raw.fail_writes = false;
  CHECK(code.read(kBase + 8, 1).value() == Bytes{0x90});  // the original is still the old byte
  CHECK(code.out_of_line().slots.size() == 2);
  REQUIRE(code.write(kBase + 6, Bytes{1, 2, 3, 4}));
  CHECK(code.read(kBase + 8, 1).value() == Bytes{3});
  CHECK(raw.bytes()[8] == tracer::kInt3);  // the breakpoint stays
  CHECK(code.out_of_line().slots.count(kBase + 8) == 0);  // its copy of the old instruction is gone
  CHECK(code.out_of_line().slots.count(kBase + 30) == 1);
}

TEST_CASE("CodeMemory: an int3 rewritten by the program is not ours to restore", "[code_memory]") {
  Bytes initial(kSize, 0x90);
  VectorMemory raw(initial);
  CodeMemory code(raw);
  REQUIRE(code.plant(kBase + 4, SiteOwner::Collector));
  REQUIRE(raw.write(kBase + 4, Bytes{0x55}));  // a library mapped there again
  CHECK(code.unplant(kBase + 4, SiteOwner::Collector).value());
  CHECK(raw.bytes()[4] == 0x55);
  // A detach takes every int3 out, but those a vfork sharer still has stay.
  Bytes other(kSize, 0x90);
  VectorMemory shared(other);
  CodeMemory parent(shared), child(shared);
  REQUIRE(parent.plant(kBase + 1, SiteOwner::Gdb));
  REQUIRE(parent.plant(kBase + 2, SiteOwner::Gdb));
  child.inherit(parent);
  (void)child.unplant(kBase + 2, SiteOwner::Gdb);  // (the child's GDB took that one out)
  parent.remove_all(&child);
  CHECK(shared.bytes()[1] == tracer::kInt3);
  CHECK(shared.bytes()[2] == 0x90);
  CHECK(parent.empty());
}

TEST_CASE("CodeMemory: GDB's int3s a vfork child planted in shared memory become the parent's when it leaves",
          "[code_memory]") {
  Bytes bytes(kSize, 0x90);
  bytes[3] = 0x55;
  VectorMemory shared(bytes);
  CodeMemory parent(shared), child(shared);
  REQUIRE(parent.plant(kBase + 1, SiteOwner::Gdb));
  REQUIRE(parent.plant(kBase + 2, SiteOwner::Collector));
  child.inherit(parent);
  // GDB takes its breakpoint out of the parent and puts it in through the child (what GDB 16
  // and 18 do around a vfork), and plants two more there; the child removes one of them again.
  REQUIRE(parent.unplant(kBase + 1, SiteOwner::Gdb).value());
  REQUIRE(child.plant(kBase + 1, SiteOwner::Gdb));
  REQUIRE(child.plant(kBase + 2, SiteOwner::Gdb));
  REQUIRE(child.plant(kBase + 3, SiteOwner::Gdb));
  REQUIRE(child.plant(kBase + 4, SiteOwner::Gdb));
  REQUIRE(child.unplant(kBase + 4, SiteOwner::Gdb).value());
  parent.adopt(child);
  CHECK(parent.owned_by(kBase + 1, SiteOwner::Gdb));
  CHECK(parent.owned_by(kBase + 2, SiteOwner::Gdb));  // one more owner of the collector's int3
  CHECK(parent.owned_by(kBase + 2, SiteOwner::Collector));
  CHECK(parent.owned_by(kBase + 3, SiteOwner::Gdb));
  CHECK_FALSE(parent.contains(kBase + 4));
  // The parent's view hides them, and GDB's z0 through the parent puts the program's bytes back.
  CHECK(parent.read(kBase, 5).value() == Bytes{0x90, 0x90, 0x90, 0x55, 0x90});
  for (Addr a : {kBase + 1, kBase + 2, kBase + 3}) {
    CHECK(parent.unplant(a, SiteOwner::Gdb).value());
  }
  parent.unplant_all(SiteOwner::Collector);
  CHECK(shared.bytes() == bytes);
}

TEST_CASE("CodeMemory: a breakpoint whose page is gone cannot be removed, and says so", "[code_memory]") {
  Bytes initial(kSize, 0x90);
  VectorMemory raw(initial);
  CodeMemory code(raw);
  REQUIRE(code.plant(kBase + 8, SiteOwner::Gdb));
  raw.unmapped = true;  // munmap of its page (gdb.base/break-main-file-remove-fail.exp)
  auto removed = code.unplant(kBase + 8, SiteOwner::Gdb);
  CHECK_FALSE(removed);  // GDB warns "Error removing breakpoint"
  CHECK_FALSE(code.contains(kBase + 8));  // forgotten all the same
}

TEST_CASE("CodeMemory: a jump hides under reads, and gives way to an int3 or a write (its owner's int3 instead)",
          "[code_memory][trace]") {
  Bytes initial(kSize, 0x90);
  for (std::size_t i = 0; i < kSize; ++i) {
    initial[i] = static_cast<std::uint8_t>(i);
  }
  VectorMemory raw(initial);
  CodeMemory code(raw);
  const Bytes jump{0xe9, 1, 2, 3, 4};
  REQUIRE(code.place_jump(kBase + 8, jump, SiteOwner::Tracepoint));
  CHECK(Bytes(raw.bytes().begin() + 8, raw.bytes().begin() + 13) == jump);
  CHECK(code.read(kBase + 6, 10).value() == Bytes(initial.begin() + 6, initial.begin() + 16));
  CHECK(code.occupied(kBase + 12, 1));
  CHECK_FALSE(code.occupied(kBase + 13, 4));
  // Nothing of ours may lie under a jump.
  CHECK_FALSE(code.place_jump(kBase + 10, jump, SiteOwner::Tracepoint));
  REQUIRE(code.plant(kBase + 20, SiteOwner::Gdb));
  CHECK_FALSE(code.place_jump(kBase + 17, jump, SiteOwner::Tracepoint));

  SECTION("GDB's int3 inside it") {
    REQUIRE(code.plant(kBase + 10, SiteOwner::Gdb));
    CHECK_FALSE(code.has_jump(kBase + 8));
    CHECK(code.owned_by(kBase + 8, SiteOwner::Tracepoint));
    CHECK(raw.bytes()[8] == tracer::kInt3);
    CHECK(raw.bytes()[9] == 9);  // the program's bytes are back
    CHECK(raw.bytes()[10] == tracer::kInt3);
    CHECK(code.read(kBase + 8, 3).value() == Bytes{8, 9, 10});
  }
  SECTION("a write over it") {
    REQUIRE(code.write(kBase + 11, Bytes{0x77, 0x78}));
    CHECK_FALSE(code.has_jump(kBase + 8));
    CHECK(code.owned_by(kBase + 8, SiteOwner::Tracepoint));
    CHECK(code.read(kBase + 8, 5).value() == (Bytes{8, 9, 10, 0x77, 0x78}));
  }
  SECTION("taken out") {
    CHECK(code.remove_jump(kBase + 8).value());
    CHECK(raw.bytes() == [&] { Bytes b = initial; b[20] = tracer::kInt3; return b; }());
    CHECK_FALSE(code.remove_jump(kBase + 8).value());
  }
  SECTION("a detach, and a fork child's copy") {
    Bytes other = raw.bytes();
    VectorMemory child_raw(other);
    CodeMemory child(child_raw);
    child.inherit(code);
    CHECK(child.has_jump(kBase + 8));
    code.remove_all();
    CHECK(raw.bytes() == initial);
    child.remove_all();
    CHECK(child_raw.bytes() == initial);
  }
}
