// One process's memory as the program sees it, and everything we plant in its code: GDB's
// breakpoints, collector sites, the int3 a range step runs to, out-of-line slots. Reads show
// the program's own bytes, never our int3s; writes fold into our sites (the int3s stay, the
// written bytes become their originals), drop the out-of-line slots that copied what changed,
// and change nothing when they fail; each int3 has owners, and its byte goes back when the
// last one lets go. Every read and write of inferior memory in tracer/linux goes through here.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>

#include "base/result.hpp"
#include "tracer/linux/memory.hpp"
#include "tracer/linux/software_breakpoints.hpp"
#include "tracer/types.hpp"

namespace tracer {

// Slots where the instruction under a breakpoint runs as a copy (arch/x86/out_of_line.hpp),
// in the unused end of the program's last page of code (out_of_line.cpp).
struct OutOfLine {
  bool looked = false;  // for the area below
  Addr begin = 0;       // the area: [begin, end), its free bytes [next, end)
  Addr next = 0;
  Addr end = 0;
  struct Slot {
    Addr at = 0;              // 0: the instruction must be stepped in place
    std::uint8_t length = 0;  // of the instruction
  };
  std::map<Addr, Slot> slots;  // by breakpoint address
};

class CodeMemory {
 public:
  CodeMemory();                                         // no memory yet: every access fails
  explicit CodeMemory(RawMemory& raw) : raw_(&raw) {}  // memory of another kind (tests)
  CodeMemory(const CodeMemory&) = delete;
  CodeMemory& operator=(const CodeMemory&) = delete;

  // The process's memory from now on (again after an exec: the old one shows the old image).
  void use(std::unique_ptr<RawMemory> memory);  // nullptr: none (every access fails)

  // --- the program's view ---------------------------------------------------------------
  // The readable prefix of [addr, addr + len), our int3s showing their original bytes.
  base::Result<Bytes> read(Addr addr, std::size_t len) const;
  // As the program would write it: where our int3s are, the bytes become their originals and
  // the int3s stay. All or nothing.
  base::Result<void> write(Addr addr, const Bytes& data);

  // --- our int3s --------------------------------------------------------------------------
  enum class Planted {
    Fresh,    // written now
    Present,  // ours already (another owner's, or its original is in memory for a step-over)
  };
  // An int3 at addr for owner.
  base::Result<Planted> plant(Addr addr, SiteOwner owner);
  // One more owner of the int3 at addr, with no I/O: only where one is (contains(addr)).
  void claim(Addr addr, SiteOwner owner) { sites_.add(addr, 0, owner); }
  // owner lets go of addr; the last owner's leaving puts the original byte back (where our
  // int3 still is: code rewritten or mapped again holds its own bytes). False: not owner's. An
  // error: the byte could not be put back (the page is gone); the site is forgotten all the same.
  base::Result<bool> unplant(Addr addr, SiteOwner owner);
  // owner lets go of every int3 it has.
  void unplant_all(SiteOwner owner);
  // Every int3 out of memory and out of the table (detach, a fork child let go); those
  // `keep` also has stay in memory (a vfork child or parent sharing these bytes).
  void remove_all(const CodeMemory* keep = nullptr);
  // The program was replaced (exec): nothing of ours is in its memory any more.
  void forget_all();
  // A fork child: its copy of memory holds its parent's int3s and slots.
  void inherit(const CodeMemory& parent);
  // A vfork child that shared this memory exits or execs: GDB's int3s it planted (or kept)
  // that are still in this memory become ours, as GDB thinks them the parent's now.
  void adopt(const CodeMemory& vfork_child);


  // A step-over in place: the original byte goes into memory while one thread runs it (the
  // site stays ours), then the int3 comes back if an owner still wants it.
  bool lift(Addr addr);
  void reinstate();
  std::optional<Addr> lifted() const { return lifted_; }

  bool contains(Addr addr) const { return sites_.contains(addr); }
  bool owned_by(Addr addr, SiteOwner owner) const { return sites_.owned_by(addr, owner); }
  bool empty() const { return sites_.empty(); }
  const std::map<Addr, SoftwareBreakpoints::Site>& sites() const { return sites_.sites(); }

  // Bytes as memory holds them, our int3s included (checking what a collector planted).
  base::Result<Bytes> read_raw(Addr addr, std::size_t len) const { return raw_->read(addr, len); }
  void hide(Addr addr, Bytes& data) const { sites_.hide(addr, data); }

  // --- jumps (fast tracepoints: arch/x86/jump_pad.hpp) ------------------------------------
  // Bytes of ours over the program's at addr, for owner: only where nothing of ours is (no
  // int3, no other jump). Reads show the program's bytes. Whatever later needs bytes under a
  // jump (an int3 planted, a write) takes it out, and owner gets an int3 at addr instead.
  base::Result<void> place_jump(Addr addr, const Bytes& bytes, SiteOwner owner);
  // The program's bytes back; false if no jump is there (it gave way, see above).
  base::Result<bool> remove_jump(Addr addr);
  bool has_jump(Addr addr) const { return jumps_.count(addr) != 0; }
  // Something of ours lies in [addr, addr + len): an int3 or a jump.
  bool occupied(Addr addr, std::size_t len) const;

  // --- out-of-line slots ------------------------------------------------------------------
  OutOfLine& out_of_line() { return out_of_line_; }
  const OutOfLine& out_of_line() const { return out_of_line_; }
  // A slot's bytes, in the free tail of the code (never under a site).
  base::Result<void> write_slot(Addr at, const Bytes& bytes) { return raw_->write(at, bytes); }

 private:
  base::Result<void> restore(Addr addr, std::uint8_t original) const;

  std::unique_ptr<RawMemory> own_;
  RawMemory* raw_;
  // A jump over [addr, addr + len) gives way: owner's int3 at its address instead.
  base::Result<void> jumps_give_way(Addr addr, std::size_t len);
  void hide_jumps(Addr addr, Bytes& data) const;

  SoftwareBreakpoints sites_;
  struct Jump {
    Bytes original;
    SiteOwner owner;
  };
  std::map<Addr, Jump> jumps_;
  std::optional<Addr> lifted_;
  OutOfLine out_of_line_;
};

}  // namespace tracer
