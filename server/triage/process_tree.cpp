#include "server/triage/process_tree.hpp"

#include <filesystem>
#include <map>

namespace server::triage {
namespace {

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

std::vector<TreeStep> tree_path(const std::vector<tracer::TraceEvent>& events, tracer::Pid root,
                                const std::string& root_program, tracer::Pid pid) {
  std::map<tracer::Pid, tracer::Pid> parent;
  std::map<tracer::Pid, std::string> name{{root, file_name(root_program)}};
  for (const auto& e : events) {  // in the order they happened: a child takes its parent's name
    if ((e.kind == "fork" || e.kind == "vfork") && e.number != 0) {
      parent[e.number] = e.pid;
      name[e.number] = name.count(e.pid) != 0 ? name[e.pid] : std::string();
    } else if (e.kind == "exec") {
      name[e.pid] = file_name(e.detail);
    }
  }
  std::vector<TreeStep> path;
  for (tracer::Pid at = pid; at != 0 && path.size() < 1024; at = parent.count(at) != 0 ? parent[at] : 0) {
    path.insert(path.begin(), TreeStep{name[at], at});
    if (at == root) {
      return path;
    }
  }
  return {TreeStep{name[root], root}};  // not a descendant the log knows of
}

std::string tree_text(const std::vector<TreeStep>& path) {
  std::string out;
  for (const auto& step : path) {
    out += (out.empty() ? "" : " -> ") + (step.name.empty() ? std::string("?") : step.name) + " " +
           std::to_string(step.pid);
  }
  return out;
}

}  // namespace server::triage
