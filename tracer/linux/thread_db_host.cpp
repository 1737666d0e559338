#include "tracer/linux/thread_db_host.hpp"

#include <sys/reg.h>

#include <cstring>
#include <filesystem>

#include "tracer/linux/process.hpp"
#include "tracer/linux/procfs.hpp"

namespace tracer {

Pid ProcessThreadDbHost::pid() const { return process_.pid; }

bool ProcessThreadDbHost::read(Addr addr, void* out, std::size_t len) {
  auto bytes = process_.code.read(addr, len);
  if (!bytes || bytes->size() != len) {
    return false;
  }
  std::memcpy(out, bytes->data(), len);
  return true;
}

bool ProcessThreadDbHost::write(Addr addr, const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  return static_cast<bool>(process_.code.write(addr, Bytes(p, p + len)));
}

base::Result<ThreadDbHost::Gprs> ProcessThreadDbHost::registers(Tid lwp) {
  LinuxThread* t = process_.find(lwp);
  if (t == nullptr || !t->stopped()) {
    return base::make_error(base::Errc::no_thread, "thread " + std::to_string(lwp) + " is not stopped");
  }
  auto raw = t->regs.gprs(lwp);
  if (!raw) {
    return raw.error();
  }
  return (*raw)->gpr;
}

base::Result<Addr> ProcessThreadDbHost::thread_area(Tid lwp, int index) {
  if (process_.isa == arch::x86::Isa::I386) {
    return process_.kernel.thread_area_base(lwp, index);
  }
  if (index != FS && index != GS) {
    return base::make_error(base::Errc::invalid, "no thread area " + std::to_string(index));
  }
  auto gprs = registers(lwp);
  if (!gprs) {
    return std::move(gprs).error();
  }
  return Addr{(*gprs)[index == FS ? arch::x86::kFsBase : arch::x86::kGsBase]};
}

std::optional<Addr> ProcessThreadDbHost::symbol(std::string_view object, std::string_view name) {
  if (auto found = lookup(object, name)) {
    return found;
  }
  symbols_.reset();  // libraries may have come since the modules were read: read them again
  return lookup(object, name);
}

std::optional<Addr> ProcessThreadDbHost::lookup(std::string_view object, std::string_view name) {
  if (!symbols_) {
    auto made = Symbolizer::for_process(process_.pid);
    if (!made) {
      return std::nullopt;
    }
    symbols_ = std::move(*made);
  }
  // The library libthread_db names first; then anywhere (a static program holds it all).
  const std::string symbol(name);
  if (auto found = symbols_->find_symbol(std::string(object), symbol)) {
    return found;
  }
  return symbols_->find_symbol("", symbol);
}

std::string ProcessThreadDbHost::libc_directory() const {
  for (const auto& m : procfs::mappings(process_.pid)) {
    const std::filesystem::path path(m.path);
    if (path.is_absolute() && path.filename().string().starts_with("libc.so")) {
      return path.parent_path().string();
    }
  }
  return {};
}

}  // namespace tracer
