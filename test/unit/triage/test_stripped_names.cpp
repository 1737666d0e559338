// Names for stripped code (tracer/symbols/symbolizer.hpp): a library stripped as distributions
// ship them (test/progs/stripped_lib.c) keeps only its exported functions' names; code in its
// own static functions gets the closest one before it and an offset, the same wherever the
// library is loaded, and so the same crash signature.
#include <catch2/catch.hpp>

#include <csignal>

#include "server/triage/signature.hpp"
#include "tracer/symbols/symbolizer.hpp"

using tracer::Symbolizer;

TEST_CASE("stripped code: the nearest exported symbol and an offset, the same at any load address", "[symbols]") {
  // Where the static function is, from the same library before it was stripped.
  auto full = Symbolizer::for_file(HS_STRIPPED_LIB_FULL, 0x10000000);
  REQUIRE(full);
  const auto entry = (*full)->find_symbol("", "stripped_entry");
  const auto hidden = (*full)->find_symbol("", "hidden_step");
  REQUIRE(entry);
  REQUIRE(hidden);
  REQUIRE(*hidden > *entry);  // laid out in source order: the exported function first
  const tracer::Addr in_hidden = *hidden - 0x10000000 + 4;  // an offset in the file

  std::vector<std::string> names;
  for (const tracer::Addr base : {0x10000000ull, 0x7f3a12345000ull}) {
    auto stripped = Symbolizer::for_file(HS_STRIPPED_LIB, base);
    REQUIRE(stripped);
    const auto& at = (*stripped)->locate(base + in_hidden);
    INFO("at " << std::hex << base + in_hidden);
    CHECK(at.function.empty());  // its own name is gone with .symtab
    CHECK(at.nearest_symbol == "stripped_entry");
    CHECK(at.nearest_offset == *hidden + 4 - *entry);
    CHECK(at.module_offset == in_hidden);
    // The exported function itself keeps its name.
    CHECK((*stripped)->locate(base + (*entry - 0x10000000)).function == "stripped_entry");

    server::triage::FrameReport frame;
    frame.pc = base + in_hidden;
    frame.where = at;
    server::triage::Outcome crashed;
    crashed.kind = server::triage::Outcome::Kind::Signal;
    crashed.signo = SIGSEGV;
    const auto sig = server::triage::crash_signature(crashed, {frame});
    REQUIRE(sig.frames.size() == 1);
    CHECK(sig.frames[0].find("??") == std::string::npos);
    names.push_back(sig.frames[0]);
  }
  CHECK(names[0] == names[1]);
  CHECK(names[0].starts_with("libstripped.so!stripped_entry+0x"));
}

TEST_CASE("demangle_type: a type_info's name as a person reads it, nothing for what is not one", "[symbols]") {
  CHECK(tracer::demangle_type("St16invalid_argument") == "std::invalid_argument");
  CHECK(tracer::demangle_type("N12_GLOBAL__N_19BadConfigE") == "(anonymous namespace)::BadConfig");
  CHECK(tracer::demangle_type("") == "");
  CHECK(tracer::demangle_type("not a type!") == "");
}
