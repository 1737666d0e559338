// A kernel without IA-32 emulation (built without CONFIG_IA32_EMULATION, or booted with
// ia32_emulation=0) refuses every i386 program: exec fails with ENOEXEC, the shell says
// "cannot execute binary file: Exec format error", Valgrind "failed to start tool". Where a
// program does not start, this says why in plain words (launch.cpp, the dbt recorder's start).
#pragma once

#include <string>

#include "base/result.hpp"

namespace tracer {

// What is wrong and what to do, for the user.
std::string ia32_word();

// True when file is an i386 program (ELFCLASS32, EM_386) and this kernel refuses to exec it:
// found by exec'ing it in a child under PTRACE_TRACEME, which stops before its first
// instruction when the exec works (then it is killed: none of the program runs).
bool kernel_refuses_i386(const std::string& file);

// error, with ia32_word() on a line after it when program (found as exec finds it) is an i386
// program this kernel refuses.
base::Error with_ia32_word(base::Error error, const std::string& program);

}  // namespace tracer
