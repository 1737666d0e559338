// Whether the dbt recorder can record here, and if not why: the one owner of the words the
// server, triage and `--version` say when they cannot use it.
#pragma once

#include <optional>
#include <string>

#include "arch/x86/isa.hpp"

namespace tracer {

// The recorder's tool file for programs of an instruction set (Valgrind's launcher picks it by
// the program's ELF header, at each exec too).
const char* dbt_recorder_file(arch::x86::Isa isa);

// valgrind_lib: the recorder's VALGRIND_LIB folder (empty: this Hindsight was built without
// it). nullopt: it can record programs of that instruction set.
std::optional<std::string> dbt_problem(const std::string& valgrind_lib, arch::x86::Isa isa = arch::x86::Isa::Amd64);

}  // namespace tracer
