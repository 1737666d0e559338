// libthread_db's view of one traced process: its memory, the registers of its stopped
// threads, and symbols from the files it maps (libdw).
#pragma once

#include <memory>
#include <string>

#include "tracer/symbols/symbolizer.hpp"
#include "tracer/thread_db/thread_db.hpp"

namespace tracer {

struct Process;

class ProcessThreadDbHost final : public ThreadDbHost {
 public:
  explicit ProcessThreadDbHost(Process& process) : process_(process) {}

  Pid pid() const override;
  bool read(Addr addr, void* out, std::size_t len) override;
  bool write(Addr addr, const void* data, std::size_t len) override;
  base::Result<Gprs> registers(Tid lwp) override;
  base::Result<Addr> thread_area(Tid lwp, int index) override;
  std::optional<Addr> symbol(std::string_view object, std::string_view name) override;

  // The directory the process's libc was mapped from ("" before it is): libthread_db's $pdir.
  std::string libc_directory() const;

 private:
  std::optional<Addr> lookup(std::string_view object, std::string_view name);

  Process& process_;
  std::unique_ptr<Symbolizer> symbols_;  // of the modules mapped when first asked
};

}  // namespace tracer
