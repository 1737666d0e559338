// A program's arguments as one line of text, as GDB holds them (`set args`) and sends them with
// single-inf-arg (vRun) or receives them (qExecAndArgs). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace protocol {

// Splits a line into arguments as GDB does without a shell: blanks separate; single and double
// quotes group (and are removed); a backslash takes the next character as it is, in quotes too.
std::vector<std::string> split_inferior_args(std::string_view line);

// The line whose shell reading gives these arguments back: each shell-special character is
// escaped with a backslash, an empty argument is '', a newline is quoted ('<newline>'), and
// arguments are joined by one space (GDB's form, which qExecAndArgs shows as `show args`).
std::string join_inferior_args(const std::vector<std::string>& args);

}  // namespace protocol
