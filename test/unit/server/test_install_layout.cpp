// Where an installed hindsight finds its parts, what --version says of them, and the dbt
// recorder's reasons not to run.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "server/install_paths.h"
#include "server/parts.hpp"
#include "server/version.hpp"
#include "test/support/scoped_env.hpp"
#include "tracer/valgrind/dbt_problem.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// The recorder is built in this build tree (the sanitizer build makes only the server and the
// unit tests: it has none, and its servers are given the regular build's).
bool build_tree_has_recorder() {
  return HINDSIGHT_DBT_BUILT && std::filesystem::exists(HINDSIGHT_BUILD_DBT_LIB "/hsdbt-amd64-linux");
}

}  // namespace

TEST_CASE("an installed binary finds its parts beside it, by the install layout, wherever the tree lies", "[install]") {
  const test_support::ScopedEnv no_override("HINDSIGHT_DBT_LIB", std::nullopt);
  // A DESTDIR tree: the same relative places under /tmp/dest.
  const auto parts = server::parts_for("/tmp/dest" HINDSIGHT_INSTALL_BINDIR "/hindsight");
  CHECK(parts.agent == "/tmp/dest" HINDSIGHT_INSTALL_AGENT);
  CHECK(parts.dbt_lib == (HINDSIGHT_DBT_BUILT ? "/tmp/dest" HINDSIGHT_INSTALL_DBT_LIB : ""));
  // Installed in place.
  CHECK(server::parts_for(HINDSIGHT_INSTALL_BINDIR "/hindsight").agent == HINDSIGHT_INSTALL_AGENT);
  // Run from the build tree: the build tree's, never an installed copy's.
  const auto built = server::parts_for(HINDSIGHT_BUILD_EXE);
  CHECK(built.dbt_lib == HINDSIGHT_BUILD_DBT_LIB);
  CHECK(built.agent == HINDSIGHT_BUILD_AGENT);
}

TEST_CASE("HINDSIGHT_DBT_LIB names the recorder's folder over the installed one", "[install]") {
  const test_support::ScopedEnv lib("HINDSIGHT_DBT_LIB", "/somewhere/dbt");
  CHECK(server::parts_for("/usr/bin/hindsight").dbt_lib == "/somewhere/dbt");
  CHECK(server::parts_for(HINDSIGHT_BUILD_EXE).dbt_lib == "/somewhere/dbt");
}

TEST_CASE("the dbt recorder's problems, in the words the server falls back with", "[install]") {
  CHECK_THAT(*tracer::dbt_problem(""), Contains("the dbt recorder is not built"));
  CHECK_THAT(*tracer::dbt_problem("/nonexistent-dbt"),
             Contains("the dbt recorder is not installed (no /nonexistent-dbt/hsdbt-amd64-linux; install the "
                      "hindsight-dbt package)"));
  // A folder with the tool but not Valgrind's core files (Valgrind removed after).
  const auto dir = std::filesystem::temp_directory_path() / ("hs-dbt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "hsdbt-amd64-linux") << "tool";
  CHECK_THAT(*tracer::dbt_problem(dir.string()), Contains("Valgrind is not installed"));
  CHECK_THAT(*tracer::dbt_problem(dir.string(), arch::x86::Isa::I386),
             Contains("the dbt recorder for i386 programs is not built"));
  std::filesystem::remove_all(dir);
  if (build_tree_has_recorder()) {
    CHECK_FALSE(tracer::dbt_problem(HINDSIGHT_BUILD_DBT_LIB));
  }
}

TEST_CASE("--version: the version, and each collector this machine can use or why not", "[install]") {
  server::Parts parts{"/nonexistent-dbt", "/nonexistent/libhindsight-agent.so", "/nonexistent/libhindsight-recorder.so"};
  const std::string text = server::version_text(parts);
  CHECK_THAT(text, StartsWith("Hindsight " HINDSIGHT_VERSION));
  CHECK_THAT(text, Contains("History collectors on this machine (--btrace):\n  bts    "));
  CHECK_THAT(text, Contains("\n  dbt    no: " + *tracer::dbt_problem(parts.dbt_lib) + "\n"));
  CHECK_THAT(text, Contains("\n  soft   "));
  CHECK_THAT(text, Contains("\n  step   "));
  CHECK_THAT(text, Contains("\n  inproc no: no in-process recorder (libhindsight-recorder.so not at "
                            "/nonexistent/libhindsight-recorder.so)\n"));
  CHECK_THAT(text, Contains("Fast tracepoints: no agent (not at /nonexistent/libhindsight-agent.so)"));
  if (build_tree_has_recorder()) {
    const std::string built =
        server::version_text({HINDSIGHT_BUILD_DBT_LIB, HINDSIGHT_BUILD_AGENT, HINDSIGHT_BUILD_RECORDER});
    CHECK_THAT(built, Contains("\n  dbt    yes (" HINDSIGHT_BUILD_DBT_LIB ")\n"));
    CHECK_THAT(built, Contains("\n  inproc yes (" HINDSIGHT_BUILD_RECORDER ")\n"));
  }
}
