#include "server/help_format.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracer/backend.hpp"

namespace server {
namespace {

class UsageLines : public CLI::Formatter {
 public:
  explicit UsageLines(std::vector<std::string> lines) : lines_(std::move(lines)) {}

  std::string make_usage(const CLI::App* /*app*/, std::string /*name*/) const override {
    std::string out;
    for (const auto& line : lines_) {
      out += (out.empty() ? "Usage: " : "  or:  ") + line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::string> lines_;
};

}  // namespace

void use_usage_lines(CLI::App& app, std::vector<std::string> lines) {
  app.formatter(std::make_shared<UsageLines>(std::move(lines)));
}

std::string collectors_help(std::string_view auto_means) {
  std::string out = "History collectors (--btrace; `hindsight --version` says which this machine has):\n";
  for (const auto& row : tracer::kBackends) {
    out += fmt::format("  {:<6} {}\n", row.name, row.backend == tracer::Backend::Auto ? auto_means : row.what);
  }
  return out;
}

}  // namespace server
