// The amd64-linux target description (qXfer:features:read:target.xml), generated from the
// register table so that the document and the `g` layout cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arch/x86/register_layout.hpp"

namespace arch::x86 {

// GDB feature name ("org.gnu.gdb.i386.core", ...).
std::string_view feature_name(Feature f);

// One self-contained document like gdbserver 13's: architecture i386:x86-64 (i386), osabi
// GNU/Linux, then core, sse, linux, segments (amd64 only) and, as XCR0 allows, avx, avx512,
// pkeys.
std::string target_xml(uint64_t xcr0, Isa isa = Isa::Amd64);

// The same for a layout already built (its features decide the document).
std::string target_xml(const RegisterLayout& layout);

}  // namespace arch::x86
