// The bash completion (docs/completion/hindsight) against the binary's own --help: every name
// of every option offered, every option that takes a value known to take one, the choices
// offered where the help lists them. It reads --help itself; these cases keep it that way.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "test/e2e/gdb_session.hpp"
#include "test/support/skip.hpp"

namespace {

const char* const kBashCompletion = "/usr/share/bash-completion/bash_completion";

// What the completion offers at the end of LINE, typed after the binary, as bash calls it
// (COMP_WORDBREAKS makes '=' a word of its own).
std::set<std::string> complete(const std::string& line) {
  const std::string script = std::string("source ") + kBashCompletion + "; source " HS_SOURCE_DIR
                             "/docs/completion/hindsight\n"
                             "COMP_LINE=\"$1 $2\"; COMP_POINT=${#COMP_LINE}\n"
                             "read -ra rest <<<\"${2//=/ = }\"\n"
                             "[[ $COMP_LINE == *' ' || $COMP_LINE == *= ]] && rest+=('')\n"
                             "COMP_WORDS=(\"$1\" \"${rest[@]}\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                             "_hindsight \"$1\" \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                             "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  e2e::Child bash({.argv = {"/bin/bash", "-c", script, "bash", e2e::server_path(), line}});
  const auto status = bash.wait(e2e::Clock::now() + std::chrono::seconds(60));
  INFO(line << ": " << bash.err());
  REQUIRE(e2e::exit_code(status) == 0);
  std::set<std::string> out;
  std::istringstream words(bash.out());
  for (std::string w; std::getline(words, w);) {
    if (!w.empty()) {
      out.insert(w);
    }
  }
  return out;
}

struct HelpOption {
  std::string name;
  bool valued = false;
  std::string choices;  // "auto,bts,..." when the help lists them
};

// Every option name in the help ("  -h,--help", "  --follow-fork,--no-follow-fork{false}",
// "  --history UINT:...": a kind after the name takes a value).
std::vector<HelpOption> help_options(const std::vector<std::string>& args) {
  std::vector<std::string> argv{e2e::server_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--help");
  e2e::Child help({.argv = argv});
  REQUIRE(e2e::exit_code(help.wait(e2e::Clock::now() + std::chrono::seconds(30))) == 0);
  static const std::regex line(R"(^ +(-[^ {]+)(\{[^}]*\})?( [A-Z][A-Z]*(:\{([^}]*)\})?)?)");
  std::vector<HelpOption> out;
  std::istringstream text(help.out());
  for (std::string l; std::getline(text, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) {
      continue;
    }
    std::istringstream names(m[1].str());
    for (std::string n; std::getline(names, n, ',');) {
      out.push_back({n, m[3].matched, m[5].str()});
    }
  }
  return out;
}

bool is_hindsight() { return e2e::server_path().find("gdbserver") == std::string::npos; }

}  // namespace

TEST_CASE("bash completion: every option of --help and of triage --help, and only those", "[completion]") {
  if (!is_hindsight() || !std::filesystem::exists(kBashCompletion)) {
    HS_SKIP("needs Hindsight's --help and bash-completion (" + std::string(kBashCompletion) + ")");
  }
  for (const std::string prefix : {"", "triage "}) {
    const auto options = help_options(prefix.empty() ? std::vector<std::string>{} : std::vector<std::string>{"triage"});
    REQUIRE(options.size() > 10);
    std::set<std::string> long_names;
    for (const auto& o : options) {
      if (o.name.starts_with("--")) {
        long_names.insert(o.name);
      }
    }
    INFO(prefix);
    CHECK(complete(prefix + "--") == long_names);
  }
  CHECK(complete("triage --no") == std::set<std::string>{"--no-follow-fork"});
}

TEST_CASE("bash completion: triage's options that take a value take the next word; the server's take OPTION=VALUE",
          "[completion]") {
  if (!is_hindsight() || !std::filesystem::exists(kBashCompletion)) {
    HS_SKIP("needs Hindsight's --help and bash-completion (" + std::string(kBashCompletion) + ")");
  }
  int valued = 0;
  for (const auto& o : help_options({"triage"})) {
    if (!o.name.starts_with("--") || o.name == "--help") {
      continue;
    }
    INFO(o.name);
    // After a value, options again: the value is not taken for the program to run.
    const std::string after = o.valued ? o.name + " 4 --h" : o.name + " --h";
    CHECK(complete("triage " + after) == std::set<std::string>{"--help", "--history", "--html"});
    if (!o.choices.empty()) {
      std::set<std::string> choices;
      std::istringstream words(o.choices);
      for (std::string w; std::getline(words, w, ',');) {
        choices.insert(w);
      }
      CHECK(complete("triage " + o.name + " ") == choices);
      CHECK(complete("triage " + o.name + "=") == choices);
    }
    valued += o.valued ? 1 : 0;
  }
  CHECK(valued >= 10);
  // The server reads options up to its first other word, COMM, as gdbserver does.
  CHECK(complete("--btrace=") == std::set<std::string>{"auto", "bts", "dbt", "soft", "step", "inproc"});
  CHECK(complete("--btrace ").empty());
  CHECK(complete("--debug-format=t") == std::set<std::string>{"timestamp"});
}
