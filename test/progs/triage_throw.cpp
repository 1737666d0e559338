// For hindsight triage: an exception nobody catches (std::terminate, then SIGABRT).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5) {
    throw std::invalid_argument("bad port: '" + text + "'");
  }
  return std::stoi(text);
}

int configure(const std::vector<std::string>& words) {
  int sum = 0;
  for (const auto& w : words) {
    sum += parse_port(w);
  }
  return sum;
}

}  // namespace

int main() {
  std::printf("%d\n", configure({"80", "443", "1234567"}));
  return 0;
}
