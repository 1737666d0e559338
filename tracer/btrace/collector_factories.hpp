// Which collector records for a backend that records through the ptrace core (LinuxTarget): one
// factory per row of tracer/backend.hpp that has a collector. auto has none (it is a choice among
// the others, kAutoInSession), nor has a backend with a Target of its own (dbt: open_target.cpp).
#pragma once

#include <memory>

#include "base/result.hpp"
#include "tracer/backend.hpp"
#include "tracer/btrace/collector.hpp"

namespace tracer {

// A backend's collector for a request, or why it cannot record that thread's process.
using CollectorFactory = base::Result<std::unique_ptr<Collector>> (*)(const CollectorRequest& request);

// The factory of backend's collector; nullptr when it has none.
CollectorFactory collector_factory(Backend backend);

}  // namespace tracer
