#include "tracer/linux/code_memory.hpp"

#include <vector>

#include "arch/x86/instruction_length.hpp"
#include "base/log.hpp"

namespace tracer {
namespace {

// Before a process's memory is opened, or when it could not be.
class NoMemory final : public RawMemory {
 public:
  base::Result<Bytes> read(Addr, std::size_t) const override { return unopened(); }
  base::Result<void> write(Addr, const Bytes&) const override { return unopened(); }

 private:
  static base::Error unopened() { return base::make_error(base::Errc::no_process, "no process"); }
};

NoMemory no_memory;

}  // namespace

CodeMemory::CodeMemory() : raw_(&no_memory) {}

void CodeMemory::use(std::unique_ptr<RawMemory> memory) {
  own_ = std::move(memory);
  raw_ = own_ ? own_.get() : &no_memory;
}

base::Result<Bytes> CodeMemory::read(Addr addr, std::size_t len) const {
  auto data = raw_->read(addr, len);
  if (data) {
    sites_.hide(addr, *data);
    hide_jumps(addr, *data);
  }
  return data;
}

void CodeMemory::hide_jumps(Addr addr, Bytes& data) const {
  for (const auto& [at, jump] : jumps_) {
    for (std::size_t i = 0; i < jump.original.size(); ++i) {
      if (at + i >= addr && at + i < addr + data.size()) {
        data[at + i - addr] = jump.original[i];
      }
    }
  }
}

bool CodeMemory::occupied(Addr addr, std::size_t len) const {
  for (std::size_t i = 0; i < len; ++i) {
    if (sites_.contains(addr + i)) {
      return true;
    }
  }
  for (const auto& [at, jump] : jumps_) {
    if (at < addr + len && addr < at + jump.original.size()) {
      return true;
    }
  }
  return false;
}

base::Result<void> CodeMemory::place_jump(Addr addr, const Bytes& bytes, SiteOwner owner) {
  if (occupied(addr, bytes.size())) {
    return base::make_error(base::Errc::invalid, "an int3 or a jump of ours is there");
  }
  auto original = raw_->read(addr, bytes.size());
  if (!original) {
    return std::move(original).error();
  }
  if (original->size() != bytes.size()) {
    return base::make_error(base::Errc::invalid, "the instruction's bytes cannot be read");
  }
  if (auto ok = raw_->write(addr, bytes); !ok) {
    return ok;
  }
  jumps_[addr] = Jump{std::move(*original), owner};
  return base::success();
}

base::Result<bool> CodeMemory::remove_jump(Addr addr) {
  auto it = jumps_.find(addr);
  if (it == jumps_.end()) {
    return false;
  }
  Bytes original = std::move(it->second.original);
  jumps_.erase(it);
  if (auto ok = raw_->write(addr, original); !ok) {
    return std::move(ok).error();
  }
  return true;
}

base::Result<void> CodeMemory::jumps_give_way(Addr addr, std::size_t len) {
  for (auto it = jumps_.begin(); it != jumps_.end();) {
    const Addr at = it->first;
    if (!(at < addr + len && addr < at + it->second.original.size())) {
      ++it;
      continue;
    }
    const SiteOwner owner = it->second.owner;
    ++it;
    if (auto removed = remove_jump(at); !removed) {
      return std::move(removed).error();
    }
    base::logf(base::LogCat::ptrace, "the jump at {:#x} gives way: an int3 there instead", at);
    if (auto planted = plant(at, owner); !planted) {
      return std::move(planted).error();
    }
  }
  return base::success();
}

base::Result<void> CodeMemory::write(Addr addr, const Bytes& data) {
  if (auto ok = jumps_give_way(addr, data.size()); !ok) {
    return ok;
  }
  Bytes bytes = data;
  const auto replaced = sites_.absorb_write(addr, bytes);  // (what a failed write gives back)
  if (lifted_ && *lifted_ >= addr && *lifted_ < addr + bytes.size()) {
    bytes[*lifted_ - addr] = *sites_.original(*lifted_);  // it stays out while the step-over lasts
  }
  if (auto ok = raw_->write(addr, bytes); !ok) {
    sites_.undo_absorb(replaced);
    return ok;
  }
  // A slot copied what is written now: the next hit makes a new one.
  std::erase_if(out_of_line_.slots, [&](const auto& entry) {
    return entry.first < addr + data.size() && addr < entry.first + arch::x86::kMaxInstructionLength;
  });
  return base::success();
}

base::Result<CodeMemory::Planted> CodeMemory::plant(Addr addr, SiteOwner owner) {
  if (auto ok = jumps_give_way(addr, 1); !ok) {
    return std::move(ok).error();
  }
  if (sites_.contains(addr)) {
    sites_.add(addr, 0, owner);
    // ... unless a process sharing this memory (vfork) took the int3 out meanwhile.
    if (lifted_ != addr) {
      if (auto now = raw_->read(addr, 1); now && (*now)[0] != kInt3) {
        if (auto ok = raw_->write(addr, Bytes{kInt3}); !ok) {
          return std::move(ok).error();
        }
      }
    }
    return Planted::Present;
  }
  auto original = raw_->read(addr, 1);
  if (!original) {
    return std::move(original).error();
  }
  if (auto ok = raw_->write(addr, Bytes{kInt3}); !ok) {
    return std::move(ok).error();
  }
  sites_.add(addr, (*original)[0], owner);
  return Planted::Fresh;
}

base::Result<bool> CodeMemory::unplant(Addr addr, SiteOwner owner) {
  if (!sites_.owned_by(addr, owner)) {
    return false;
  }
  auto original = sites_.release(addr, owner);
  if (!original) {
    return true;  // another owner still wants it
  }
  if (lifted_ == addr) {
    lifted_.reset();  // its original is in memory already; the step-over ends without it
    return true;
  }
  if (auto ok = restore(addr, *original); !ok) {
    base::logf(base::LogCat::ptrace, "restoring {:#x} failed: {}", addr, ok.error().message());
    return std::move(ok).error();
  }
  return true;
}

void CodeMemory::unplant_all(SiteOwner owner) {
  std::vector<Addr> ours;
  for (const auto& [addr, site] : sites_.sites()) {
    if ((site.owners & static_cast<std::uint8_t>(owner)) != 0) {
      ours.push_back(addr);
    }
  }
  for (Addr addr : ours) {
    (void)unplant(addr, owner);  // (a failure is logged: the page went with its int3)
  }
}

void CodeMemory::remove_all(const CodeMemory* keep) {
  for (const auto& [addr, jump] : jumps_) {
    if (keep == nullptr || !keep->has_jump(addr)) {
      if (auto ok = raw_->write(addr, jump.original); !ok) {
        base::logf(base::LogCat::ptrace, "restoring {:#x} failed: {}", addr, ok.error().message());
      }
    }
  }
  jumps_.clear();
  for (const auto& [addr, site] : sites_.sites()) {
    if (lifted_ != addr && (keep == nullptr || !keep->contains(addr))) {
      if (auto ok = restore(addr, site.original); !ok) {
        base::logf(base::LogCat::ptrace, "restoring {:#x} failed: {}", addr, ok.error().message());
      }
    }
  }
  sites_.clear();
  lifted_.reset();
}

void CodeMemory::forget_all() {
  sites_.clear();
  jumps_.clear();
  lifted_.reset();
  out_of_line_ = OutOfLine{};
}

void CodeMemory::inherit(const CodeMemory& parent) {
  sites_ = parent.sites_;
  jumps_ = parent.jumps_;
  out_of_line_ = parent.out_of_line_;
}

void CodeMemory::adopt(const CodeMemory& vfork_child) {
  for (const auto& [addr, site] : vfork_child.sites()) {
    if (!vfork_child.owned_by(addr, SiteOwner::Gdb) || owned_by(addr, SiteOwner::Gdb)) {
      continue;
    }
    if (contains(addr)) {
      claim(addr, SiteOwner::Gdb);
      continue;
    }
    auto byte = raw_->read(addr, 1);
    if (byte && byte->size() == 1 && (*byte)[0] == kInt3) {
      sites_.add(addr, site.original, SiteOwner::Gdb);
    }
  }
}

bool CodeMemory::lift(Addr addr) {
  auto original = sites_.original(addr);
  if (!original || !raw_->write(addr, Bytes{*original})) {
    return false;
  }
  lifted_ = addr;
  return true;
}

void CodeMemory::reinstate() {
  const auto addr = std::exchange(lifted_, std::nullopt);
  if (addr && sites_.contains(*addr)) {
    (void)raw_->write(*addr, Bytes{kInt3});
  }
}

base::Result<void> CodeMemory::restore(Addr addr, std::uint8_t original) const {
  auto now = raw_->read(addr, 1);
  if (!now) {
    return std::move(now).error();
  }
  if ((*now)[0] != kInt3) {
    return base::success();
  }
  return raw_->write(addr, Bytes{original});
}

}  // namespace tracer
