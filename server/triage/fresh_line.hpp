// Where triage's own words start when the program's output may have left a line unfinished: on
// a line of their own, never after the program's last words.
#pragma once

namespace server::triage {

// Makes the next write to fd start a line. A regular file: a newline unless its last byte is
// one. A terminal, whose cursor cannot be read without asking it (and taking the program's
// input): a line of spaces as wide as the terminal, then a carriage return; from a line's start
// the cursor stays on that line, from anywhere else the terminal wraps it to the next (as zsh's
// PROMPT_SP). A pipe: nothing (what went through it last is not known).
void start_fresh_line(int fd);

}  // namespace server::triage
