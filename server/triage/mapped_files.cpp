#include "server/triage/mapped_files.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "tracer/linux/procfs.hpp"

namespace server::triage {

MappedFiles::MappedFiles(const std::string& maps) : mappings_(tracer::procfs::parse_maps(maps)) {
}

base::Result<tracer::Bytes> MappedFiles::read(tracer::Addr addr, std::size_t len) const {
  auto m = std::find_if(mappings_.begin(), mappings_.end(),
                        [&](const tracer::MappedObject& o) { return addr >= o.start && addr < o.end; });
  if (m == mappings_.end() || !m->path.starts_with("/")) {
    return base::make_error(base::Errc::invalid, "no file was mapped there");
  }
  std::ifstream file(m->path, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(m->offset + (addr - m->start)));
  tracer::Bytes out(std::min<std::size_t>(len, m->end - addr));
  file.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
  out.resize(file ? out.size() : static_cast<std::size_t>(std::max<std::streamsize>(0, file.gcount())));
  if (out.empty()) {
    return base::make_error(base::Errc::invalid, m->path + " cannot be read there");
  }
  return out;
}

arch::x86::Isa MappedFiles::isa() const {
  for (const auto& m : mappings_) {
    if (m.path.starts_with("/")) {
      if (auto isa = tracer::procfs::file_isa(m.path)) {
        return *isa;
      }
    }
  }
  return arch::x86::Isa::Amd64;
}

std::string read_maps(tracer::Pid pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace server::triage
