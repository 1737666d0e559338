// For hindsight triage: another exception nobody catches, thrown inside the standard library
// (std::map::at's std::out_of_range, from a template inlined here): a group of its own, and the
// report points at the program's line, not at <bits/stl_map.h>.
#include <cstdio>
#include <map>
#include <string>

namespace {

const std::map<std::string, int> kPorts = {{"http", 80}, {"https", 443}};

int port_of(const std::string& scheme) {
  return kPorts.at(scheme);  // the throw
}

}  // namespace

int main() {
  std::printf("%d\n", port_of("http") + port_of("gopher"));
  return 0;
}
