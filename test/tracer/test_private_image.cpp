// The recorder's private image (tracer/linux/private_image.hpp, recorder_loader.hpp), read from
// the built libhindsight-recorder.so and its Zydis, and the refusals of what a private image
// cannot be. Pure: no process.
#include <catch2/catch.hpp>

#include <elf.h>

#include <cstring>

#include "tracer/linux/private_image.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/recorder_loader.hpp"

using Catch::Matchers::Contains;

TEST_CASE("private image: the recorder is a guest with no libc, no TLS, no initializers, and Zydis its one library",
          "[tracer][private_image]") {
  auto objects = tracer::read_recorder_objects(RECORDER_LIB);
  INFO((objects ? std::string("read") : objects.error().message()));
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 2);
  const tracer::ElfObject& image = objects->front();
  CHECK(image.needed.size() == 1);
  CHECK_THAT(image.needed.at(0), Catch::Matchers::StartsWith("libZydis.so"));
  CHECK_THAT(objects->back().name, Contains("libZydis.so"));
  CHECK_FALSE(image.has_tls);
  CHECK_FALSE(image.has_initializers);
  // What it exports: its entry points, its return gadget, and what Zydis takes of libc.
  for (const char* symbol : {"hs_recorder_setup", "hs_recorder_return_gadget", "memcpy", "memset", "strlen"}) {
    INFO(symbol);
    CHECK(image.exports.contains(symbol));
  }
  CHECK_FALSE(image.exports.contains("malloc"));

  const tracer::Addr base = 0x7f1234560000;
  auto linked = tracer::link_private_image(*objects, base);
  INFO((linked ? std::string("linked") : linked.error().message()));
  REQUIRE(linked.ok());
  CHECK(linked->span == tracer::image_span(*objects));
  CHECK(linked->span % 4096 == 0);
  REQUIRE(linked->objects.size() == 2);
  CHECK(linked->objects[0].base == base);
  CHECK(linked->objects[1].base == base + objects->front().span);
  const tracer::Addr gadget = linked->exports.at("hs_recorder_return_gadget");
  CHECK(gadget > base);
  CHECK(gadget < base + objects->front().span);
  // The gadget is `syscall` in the linked bytes.
  bool found = false;
  for (const auto& seg : linked->objects[0].segments) {
    if (gadget >= seg.vaddr && gadget + 2 <= seg.vaddr + seg.bytes.size()) {
      CHECK(seg.bytes[gadget - seg.vaddr] == 0x0f);
      CHECK(seg.bytes[gadget - seg.vaddr + 1] == 0x05);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("private image: what is not an object of its kind is refused in plain words", "[tracer][private_image]") {
  CHECK(tracer::read_elf_object(tracer::Bytes{}, "empty").error().message() == "empty: not an ELF file");
  CHECK(tracer::read_elf_object(tracer::Bytes(64, 0x7f), "junk").error().message() == "junk: not an ELF file");
  // An executable, not a shared object (the server's own tests are one).
  auto self = tracer::procfs::read_file("/proc/self/exe");
  REQUIRE(self.ok());
  Elf64_Ehdr eh{};
  std::memcpy(&eh, self->data(), sizeof eh);
  if (eh.e_type == ET_EXEC) {
    CHECK(tracer::read_elf_object(*self, "exe").error().message() == "exe: not an x86-64 shared object");
  }
  // Cut short anywhere: an error, never a crash.
  auto image = tracer::procfs::read_file(RECORDER_LIB);
  REQUIRE(image.ok());
  for (std::size_t size : {std::size_t{64}, std::size_t{200}, image->size() / 2, image->size() - 1}) {
    tracer::Bytes cut(image->begin(), image->begin() + static_cast<std::ptrdiff_t>(size));
    auto read = tracer::read_elf_object(cut, "cut");
    if (read.ok()) {
      // (What survives a cut must still link, or say why not.)
      auto linked = tracer::link_private_image({*read}, 0x10000);
      CHECK((linked.ok() || !linked.error().message().empty()));
    }
  }
}

TEST_CASE("private image: a symbol nothing defines, TLS and initializers are refused", "[tracer][private_image]") {
  tracer::ElfObject o;
  o.name = "x.so";
  o.span = 4096;
  o.segments.push_back({0, tracer::Bytes(4096, 0), 0});
  o.relocations.push_back({16, R_X86_64_GLOB_DAT, "malloc", false, 0});
  CHECK(tracer::link_private_image({o}, 0x10000).error().message() == "x.so: nothing in the private image defines malloc");
  o.relocations.back().weak = true;
  CHECK(tracer::link_private_image({o}, 0x10000).ok());
  o.relocations.push_back({4096, R_X86_64_RELATIVE, "", false, 8});
  CHECK_THAT(tracer::link_private_image({o}, 0x10000).error().message(), Contains("lies outside its segments"));
  o.relocations.pop_back();
  o.relocations.push_back({24, R_X86_64_IRELATIVE, "", false, 8});
  CHECK_THAT(tracer::link_private_image({o}, 0x10000).error().message(), Contains("is not one a private image takes"));
  o.relocations.pop_back();
  o.has_initializers = true;
  CHECK(tracer::link_private_image({o}, 0x10000).error().message() == "x.so: it has initializers, which nothing would run");
  o.has_initializers = false;
  o.has_tls = true;
  CHECK_THAT(tracer::link_private_image({o}, 0x10000).error().message(), Contains("thread-local storage"));
  // Applied where they say: RELATIVE is base + addend.
  o.has_tls = false;
  o.relocations = {{8, R_X86_64_RELATIVE, "", false, 0x40}};
  auto linked = tracer::link_private_image({o}, 0x10000);
  REQUIRE(linked.ok());
  std::uint64_t v = 0;
  std::memcpy(&v, linked->objects[0].segments[0].bytes.data() + 8, 8);
  CHECK(v == 0x10040);
}
