// A program's arguments as one line of text, as GDB holds them (`set args`) and sends them with
// single-inf-arg (vRun) or receives them (qExecAndArgs). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace protocol {

// Splits a line into arguments as GDB 18 does without a shell, with a POSIX shell's quoting but
// no expansion: blanks separate; quotes group and are removed; a backslash takes the next
// character as it is, except inside single quotes (where it is itself) and inside double quotes
// before anything but $ ` " \ and newline; a backslash-newline disappears.
std::vector<std::string> split_inferior_args(std::string_view line);

// The line whose shell reading gives these arguments back: each shell-special character is
// escaped with a backslash, an empty argument is '', a newline is quoted ('<newline>'), and
// arguments are joined by one space (GDB's form, which qExecAndArgs shows as `show args`).
std::string join_inferior_args(const std::vector<std::string>& args);

}  // namespace protocol
