#include "tracer/btrace/collector_factories.hpp"

#include "tracer/btrace/inproc_collector.hpp"
#include "tracer/btrace/perf_bts_collector.hpp"
#include "tracer/btrace/soft_emulate.hpp"
#include "tracer/btrace/soft_step.hpp"

namespace tracer {
namespace {

struct FactoryRow {
  Backend backend;
  CollectorFactory make;
};

// One line per backend with a collector; each factory lives beside its collector. A table, not
// a registry each collector fills at start-up: static libraries drop objects nothing refers to.
constexpr FactoryRow kCollectorFactories[] = {
    {Backend::Bts, make_perf_bts_collector},
    {Backend::Soft, make_soft_emulate_collector},
    {Backend::Step, make_soft_step_collector},
    {Backend::Inproc, make_inproc_collector},
};

}  // namespace

CollectorFactory collector_factory(Backend backend) {
  for (const auto& row : kCollectorFactories) {
    if (row.backend == backend) {
      return row.make;
    }
  }
  return nullptr;
}

}  // namespace tracer
