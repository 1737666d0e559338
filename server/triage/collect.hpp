// Gathers what triage reports about one stopped process through the Target: each thread's
// registers, stack (libunwind), and branch history folded into calls (libdw for names).
#pragma once

#include <cstddef>

#include "server/triage/report.hpp"
#include "tracer/target.hpp"

namespace server::triage {

// Every thread of process pid, the one that stopped (crashed_tid) first. pid must be stopped;
// stopped_ns: when it was (CLOCK_MONOTONIC; 0: unknown), the latest any history entry can be.
std::vector<ThreadReport> collect_threads(tracer::Target& target, tracer::Pid pid, tracer::Tid crashed_tid,
                                          std::size_t history_entries, std::uint64_t stopped_ns);

// Source lines around the crashing thread's frames (the faulting one first), at most `count`.
std::vector<SourceExcerpt> collect_sources(const ThreadReport& crashed, std::size_t count);

}  // namespace server::triage
