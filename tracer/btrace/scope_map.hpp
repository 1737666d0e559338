// ScopeMap: which code addresses are inside --btrace-scope, learnt mapping by mapping from the
// process's memory map (through the CollectorHost) and cached until the code changes.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "tracer/btrace/collector.hpp"
#include "tracer/btrace/scope.hpp"

namespace tracer {

class ScopeMap {
 public:
  explicit ScopeMap(BtraceScope scope) : scope_(std::move(scope)) {}

  bool everything() const { return scope_.all; }
  // Is the code at addr in scope? Unknown mappings are looked up once; an address nothing
  // maps counts as in scope (the CPU will fault there, and that is history worth keeping).
  bool contains(Addr addr, CollectorHost& host);
  void clear() { ranges_.clear(); exe_.reset(); }

 private:
  struct Range {
    Addr end = 0;
    bool in = false;
  };
  BtraceScope scope_;
  std::map<Addr, Range> ranges_;  // by start
  std::optional<std::string> exe_;
};

}  // namespace tracer
