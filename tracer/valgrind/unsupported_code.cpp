#include "tracer/valgrind/unsupported_code.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <span>

#include "arch/x86/isa_extensions.hpp"

namespace tracer {

std::optional<std::string> code_the_recorder_cannot_run(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  std::optional<std::string> why;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  const arch::x86::Isa isa = elf != nullptr && gelf_getclass(elf) == ELFCLASS32 ? arch::x86::Isa::I386 : arch::x86::Isa::Amd64;
  for (Elf_Scn* scn = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr && !why;
       scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_EXECINSTR) == 0) {
      continue;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) {
      continue;
    }
    if (arch::x86::uses_avx512(std::span(static_cast<const std::uint8_t*>(data->d_buf), data->d_size), isa)) {
      size_t names = 0;
      elf_getshdrstrndx(elf, &names);
      const char* name = elf_strptr(elf, names, sh.sh_name);
      why = std::string("it uses AVX-512 instructions (in ") + (name != nullptr ? name : "its code") +
            "), which Valgrind 3.19 cannot run";
    }
  }
  if (elf != nullptr) {
    elf_end(elf);
  }
  ::close(fd);
  return why;
}

}  // namespace tracer
