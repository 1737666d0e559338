#include "server/triage/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>

namespace server::triage {

base::Result<Options> parse_options(const std::vector<std::string>& args) {
  Options o;
  CLI::App app{"Run PROG with branch history on; if it crashes, report how it got there", "hindsight triage"};
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.add_option("--btrace", o.btrace,
                 "History collector: auto (dbt, else soft, else step), dbt (a Valgrind tool, ~5x native), "
                 "soft (int3 at branches), step (single-stepping), bts (Intel BTS)")
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
  app.footer(
      "Exit status: PROG's own when it exits; 128+N when it dies of signal N (after the report); 124 when\n"
      "--timeout stopped it; 125 when hindsight itself failed; 2 for a bad command line.");

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
