// Gathers what triage reports about one stopped process through the Target: each thread's
// registers, stack (libunwind), and branch history folded into calls (libdw for names).
#pragma once

#include <cstddef>

#include "server/triage/report.hpp"
#include "tracer/target.hpp"

namespace server::triage {

// Every thread of process pid, the one that stopped (stopped_tid) first, marked got_signal when
// its stop is the fatal signal (not so at --timeout). pid must be stopped; stopped_ns: when it
// was (CLOCK_MONOTONIC; 0: unknown), the latest any history entry can be.
std::vector<ThreadReport> collect_threads(tracer::Target& target, tracer::Pid pid, tracer::Tid stopped_tid,
                                          bool got_signal, std::size_t history_entries, std::uint64_t stopped_ns);

// The threads of process pid, which ended before anything could be read from it (killed from
// outside): what each had recorded, named with the code and symbols of `maps` (its
// /proc/PID/maps while it lived). Each is `ended`, with no registers or stack.
std::vector<ThreadReport> collect_ended_threads(tracer::Target& target, tracer::Pid pid, const std::string& maps,
                                                std::size_t history_entries, std::uint64_t ended_ns);

// Source lines around the stopped thread's frames (the faulting one first), at most `count`.
std::vector<SourceExcerpt> collect_sources(const ThreadReport& stopped, std::size_t count);

}  // namespace server::triage
