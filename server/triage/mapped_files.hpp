// A dead process's code as it lay in the files it had mapped: a /proc/PID/maps text taken while
// it lived says which file and offset backs each address. What a program had in anonymous
// memory (JIT code) is gone with it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "arch/x86/isa.hpp"
#include "base/result.hpp"
#include "tracer/btrace/scope.hpp"
#include "tracer/types.hpp"

namespace server::triage {

class MappedFiles {
 public:
  explicit MappedFiles(const std::string& maps);
  // Up to len bytes at addr from the file mapped there, to the end of that mapping.
  base::Result<tracer::Bytes> read(tracer::Addr addr, std::size_t len) const;
  // The instruction set of the process's code: that of the first ELF file it had mapped (all
  // the code one process runs is of one set; amd64 when no file can tell).
  arch::x86::Isa isa() const;

 private:
  std::vector<tracer::MappedObject> mappings_;
};

// /proc/PID/maps now (empty when the process is gone).
std::string read_maps(tracer::Pid pid);

}  // namespace server::triage
