// GDB's signal numbering (gdb/signals.def) versus Linux's.
#pragma once

#include <string>

namespace protocol {

// Linux signal number -> GDB signal number (GDB_SIGNAL_UNKNOWN 143 when it has none).
int gdb_signal_from_host(int linux_signal);
// GDB signal number -> Linux signal number; 0 when Linux has no such signal.
int host_signal_from_gdb(int gdb_signal);
// GDB's name of a GDB signal number ("SIGABRT", "SIG34"), "?" when it has none, as GDB's
// gdb_signal_to_name.
std::string gdb_signal_name(int gdb_signal);

}  // namespace protocol
