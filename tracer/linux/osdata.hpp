// `info os` tables of this Linux host, read from /proc as gdbserver reads them: the same
// columns, in the same order, so GDB shows the same tables.
#pragma once

#include <string>
#include <vector>

#include "tracer/host_io.hpp"

namespace tracer::osdata {

std::vector<OsRow> processes();
std::vector<OsRow> process_groups();
std::vector<OsRow> threads();
std::vector<OsRow> files();
std::vector<OsRow> sockets();
std::vector<OsRow> shared_memory();
std::vector<OsRow> semaphores();
std::vector<OsRow> message_queues();
std::vector<OsRow> modules();
std::vector<OsRow> cpus();

// Parsers of the /proc texts, for tests.
// /proc/net/tcp-style lines: "0100007F:0929" -> "127.0.0.1", 2345 (IPv4 or IPv6).
std::string socket_address(const std::string& hex);
// /proc/sysvipc/* text: one map per line after the header, column name -> value.
std::vector<std::vector<std::pair<std::string, std::string>>> parse_table(const std::string& text);

}  // namespace tracer::osdata
