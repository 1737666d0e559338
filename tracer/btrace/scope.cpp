// BtraceScope: parsing --btrace-scope and matching mapped objects against it.
#include "tracer/btrace/scope.hpp"

namespace tracer {
namespace {

std::string_view file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool names(std::string_view wanted, std::string_view object) {
  if (wanted == object || wanted.front() == '/') {
    return wanted == object;  // an absolute path names one file only
  }
  const std::string_view want = file_name(wanted);
  const std::string_view have = file_name(object);
  return have == want || (have.size() > want.size() && have.starts_with(want) && have[want.size()] == '.');
}

}  // namespace

bool BtraceScope::covers(std::string_view object, std::string_view exe_path) const {
  if (all) {
    return true;
  }
  if (object.empty() || object.front() == '[') {
    return false;  // anonymous memory (code written at run time), vDSO, vsyscall
  }
  if (exe && object == exe_path) {
    return true;
  }
  for (const auto& p : paths) {
    if (names(p, object)) {
      return true;
    }
  }
  return false;
}

std::string BtraceScope::text() const {
  if (all) {
    return "all";
  }
  std::string out = exe ? "exe" : "";
  for (const auto& p : paths) {
    out += (out.empty() ? "" : ",") + p;
  }
  return out;
}

base::Result<BtraceScope> parse_btrace_scope(std::string_view text) {
  BtraceScope scope;
  if (text == "all") {
    return scope;
  }
  scope.all = false;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty() || item == "all") {
      return base::make_error(base::Errc::malformed,
                              "--btrace-scope: 'all' alone, or a list of 'exe' and object paths");
    }
    if (item == "exe") {
      scope.exe = true;
    } else {
      scope.paths.emplace_back(item);
    }
  }
  if (!scope.exe && scope.paths.empty()) {
    return base::make_error(base::Errc::malformed, "--btrace-scope: empty");
  }
  return scope;
}

}  // namespace tracer
