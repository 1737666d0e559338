// The help text's shape, shared by `hindsight --help` and `hindsight triage --help`: usage lines
// as GNU programs print them, and the sections after the options. The man pages are help2man's
// rendering of this text (doc/meson.build), so they say what --help says.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace server {

// "Usage: FIRST" and "  or:  OTHER" lines in place of CLI11's one usage line.
void use_usage_lines(CLI::App& app, std::vector<std::string> lines);

// "History collectors (--btrace...):" and a line per collector; auto_means: what auto picks.
std::string collectors_help(std::string_view auto_means);

}  // namespace server
