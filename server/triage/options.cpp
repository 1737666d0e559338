#include "server/triage/options.hpp"

#include "server/help_format.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>

namespace server::triage {

base::Result<Options> parse_options(const std::vector<std::string>& args) {
  Options o;
  CLI::App app{"Run PROG, and every process it starts, with branch history on; if one crashes, report how it "
               "got there.",
               "hindsight triage"};
  use_usage_lines(app, {"hindsight triage [OPTIONS] -- PROG [ARGS ...]"});
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.add_option("--btrace", o.btrace, "The history collector (below; default auto)")
      ->transform(CLI::CheckedTransformer(tracer::backend_names()).description(tracer::backend_choices()));
  app.add_option("--history", o.history, "Calls and returns shown per thread (default 64)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  app.add_option("--output", o.output, "Write the text report to FILE instead of stderr");
  app.add_option("--json", o.json, "Write the report as JSON (schema hindsight-triage/1) to FILE");
  app.add_option("--html", o.html, "Write the report as one self-contained HTML page to FILE");
  app.add_option("--serve", o.serve,
                 "After a crash, keep the program stopped at the fault and serve GDB on [HOST]:PORT, "
                 "history included");
  app.add_option("--serve-timeout", o.serve_timeout, "Give up serving when GDB has not connected in S seconds")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeout", o.timeout, "Stop a program still running after S seconds and report every thread")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--follow-fork,!--no-follow-fork", o.follow_fork,
               "Record every descendant (fork, exec) and report its crashes (the default); --no-follow-fork: the "
               "started program alone");
  app.add_flag("--github-annotations", o.github_annotations,
               "Print a GitHub Actions ::error line at the crash's source line (on by itself when GITHUB_ACTIONS=true)");
  app.add_option("--color", o.color, "Colour the text report: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--ring-size", o.ring_bytes, "Branch history kept per thread, in bytes (K, M suffixes; default 4M)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::uint64_t{4096}, std::uint64_t{1} << 32));
  app.add_option("--keep-rings", o.keep_rings,
                 "dbt: keep every process's branch rings (tracer/btrace/dbt_ring.h) in DIR, new or empty, after "
                 "the run (default: each process's go when it ends)");
  std::string order;
  for (const tracer::Backend backend : tracer::kAutoUnattended) {
    order += (order.empty() ? "" : ", else ") + std::string(tracer::backend_name(backend));
  }
  app.footer(collectors_help("the fastest that can run PROG: " + order) +
             "\n"
             "Exit status:\n"
             "  N      PROG's own, when it exits\n"
             "  128+N  PROG died of signal N (after the report)\n"
             "  124    --timeout stopped it (every thread reported)\n"
             "  125    hindsight itself could not do its work\n"
             "  2      a bad command line\n"
             "\n"
             "Environment:\n"
             "  HINDSIGHT_DBT_LIB  the dbt recorder's folder (a VALGRIND_LIB) instead of the installed one\n"
             "  NO_COLOR           no colours in the text report (with --color=auto)\n"
             "  GITHUB_ACTIONS     when 'true', GitHub annotations as with --github-annotations\n"
             "  GITHUB_WORKSPACE   the folder annotations' paths are made relative to\n"
             "\n"
             "Examples:\n"
             "  $ hindsight triage -- ./test\n"
             "  $ hindsight triage --json report.json --timeout 600 -- make check\n"
             "  $ hindsight triage --serve :1234 -- ./test\n"
             "\n"
             "With --serve, GDB finds the program stopped at the crash: target remote :1234.\n");

  auto dashes = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> options(args.begin(), dashes);
  if (dashes != args.end()) {
    o.program.assign(dashes + 1, args.end());
  } else {
    // Without `--`, the program starts at the first word that is not an option.
    auto first = std::find_if(options.begin(), options.end(), [](const std::string& a) { return !a.starts_with("-"); });
    o.program.assign(first, options.end());
    options.erase(first, options.end());
  }
  try {
    std::vector<std::string> reversed(options.rbegin(), options.rend());  // CLI11 parses a reversed vector
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.text = app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    return base::make_error(base::Errc::malformed, e.what());
  }
  if (o.program.empty()) {
    return base::make_error(base::Errc::malformed, "no program to run: hindsight triage [OPTIONS] -- PROG [ARGS...]");
  }
  return o;
}

}  // namespace server::triage
