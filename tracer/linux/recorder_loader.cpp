#include "tracer/linux/recorder_loader.hpp"

#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tracer/linux/procfs.hpp"

namespace tracer {
namespace {

constexpr std::uint64_t kPageBytes = 4096;

// Libraries a private image's objects may name without the server mapping them: the image
// itself answers what they use of libc (freestanding.cpp), and a symbol nothing defines is
// refused when linking.
bool answered_by_image(const std::string& soname) {
  return soname == "libc.so.6" || soname.rfind("ld-linux", 0) == 0;
}

// The file of `soname` as this server's own process loaded it (the server links the same
// Zydis the image was built against), else in the usual library directories.
std::string library_path(const std::string& soname) {
  struct Search {
    const std::string* soname;
    std::string found;
  } search{&soname, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const auto slash = name.rfind('/');
        if (name.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos, *s->soname) == 0) {
          s->found = name;
          return 1;
        }
        return 0;
      },
      &search);
  if (!search.found.empty()) {
    return search.found;
  }
  for (const char* dir : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/usr/local/lib"}) {
    const std::string path = fmt::format("{}/{}", dir, soname);
    if (::access(path.c_str(), R_OK) == 0) {
      return path;
    }
  }
  return {};
}

base::Result<ElfObject> read_object(const std::string& path) {
  auto bytes = procfs::read_file(path);
  if (!bytes) {
    return base::make_error(base::Errc::unsupported, fmt::format("{} cannot be read: {}", path, bytes.error().message()));
  }
  return read_elf_object(*bytes, path);
}

}  // namespace

base::Result<std::vector<ElfObject>> read_recorder_objects(const std::string& image_path) {
  std::vector<ElfObject> objects;
  auto image = read_object(image_path);
  if (!image) {
    return image.error();
  }
  objects.push_back(std::move(*image));
  // Breadth first: the image's libraries, then theirs (each once).
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const std::vector<std::string> needed = objects[i].needed;
    for (const std::string& soname : needed) {
      if (answered_by_image(soname)) {
        continue;
      }
      const bool have = std::any_of(objects.begin(), objects.end(), [&](const ElfObject& o) {
        return o.name.size() >= soname.size() && o.name.compare(o.name.size() - soname.size(), soname.size(), soname) == 0;
      });
      if (have) {
        continue;
      }
      const std::string path = library_path(soname);
      if (path.empty()) {
        return base::make_error(base::Errc::unsupported,
                                fmt::format("{} needs {}, which is not installed", image_path, soname));
      }
      auto lib = read_object(path);
      if (!lib) {
        return lib.error();
      }
      lib->name = path.substr(0, path.rfind('/') + 1) + soname;
      objects.push_back(std::move(*lib));
    }
  }
  return objects;
}

base::Result<MappedRecorder> map_recorder(RemoteSyscalls& calls, Kernel& kernel, Pid pid,
                                          const std::vector<ElfObject>& objects) {
  const std::uint64_t span = image_span(objects);
  auto reserved = calls.run(SYS_mmap, {0, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                       static_cast<std::uint64_t>(-1), 0});
  if (!reserved) {
    return reserved.error();
  }
  if (*reserved < 0 && *reserved > -4096) {
    return base::Error{base::Errc::system, static_cast<int>(-*reserved),
                       fmt::format("the program's mmap of {} KiB for the recorder", span / 1024)};
  }
  const Addr base = static_cast<Addr>(*reserved);
  auto unreserve = [&](base::Error error) -> base::Error {
    (void)calls.run(SYS_munmap, {base, span});
    return error;
  };
  auto image = link_private_image(objects, base);
  if (!image) {
    return unreserve(image.error());
  }
  auto memory = kernel.memory(pid);
  if (!memory) {
    return unreserve(memory.error());
  }
  for (const PlacedObject& object : image->objects) {
    for (const ElfObject::Segment& seg : object.segments) {
      if (auto w = (*memory)->write(seg.vaddr, seg.bytes); !w) {
        return unreserve(w.error());
      }
    }
  }
  // Pages no segment covers (between them) stay as reserved; each segment's pages get its own.
  for (const PlacedObject& object : image->objects) {
    for (const ElfObject::Segment& seg : object.segments) {
      const Addr lo = seg.vaddr & ~(kPageBytes - 1);
      const Addr hi = (seg.vaddr + seg.bytes.size() + kPageBytes - 1) & ~(kPageBytes - 1);
      auto r = calls.run(SYS_mprotect, {lo, hi - lo, static_cast<std::uint64_t>(seg.prot)});
      if (!r) {
        return unreserve(r.error());
      }
      if (*r != 0) {
        return unreserve(base::Error{base::Errc::system, static_cast<int>(-*r), "the program's mprotect of the recorder"});
      }
    }
  }
  return MappedRecorder{base, span, image->exports};
}

}  // namespace tracer
