// The backend chain the server and triage share (tracer/open_target.hpp), and the one table of
// backend names. Pure: which backends a request tries, in order, and why it passes one over.
#include <catch2/catch.hpp>

#include "tracer/open_target.hpp"

using tracer::Backend;

namespace {

tracer::TargetRequest request(Backend backend, bool unattended, bool launch = true, bool follow = false) {
  tracer::TargetRequest r;
  r.backend = backend;
  r.unattended = unattended;
  r.follow_forks = follow;
  if (launch) {
    r.launch = tracer::LaunchSpec{};
    r.launch->program = "/bin/true";
  }
  return r;
}

std::vector<Backend> tries(const tracer::TargetRequest& r) {
  auto chain = tracer::backend_chain(r);
  REQUIRE(chain);
  return chain->tries;
}

}  // namespace

TEST_CASE("backends: one name table, every name back to its backend", "[backend]") {
  for (const auto& row : tracer::kBackends) {
    CHECK(tracer::backend_from_name(row.name) == row.backend);
    CHECK(tracer::backend_name(row.backend) == row.name);
  }
  CHECK(tracer::backend_names().size() == std::size(tracer::kBackends));
  CHECK_FALSE(tracer::backend_from_name("pt"));
}

TEST_CASE("backends: every collector's row says what it needs and costs, in the report's words", "[backend]") {
  for (const auto& row : tracer::kBackends) {
    INFO(row.name);
    CHECK(&tracer::backend_row(row.backend) == &row);
    CHECK_FALSE(row.what.empty());
    if (row.backend == Backend::Auto) {
      CHECK(row.needs == tracer::Needs::Nothing);  // it is whichever of the others works
      continue;
    }
    CHECK(row.needs != tracer::Needs::Nothing);  // --version probes it
    CHECK(row.cost.starts_with(std::string(row.name) + ": "));
    CHECK_FALSE((row.launch_only && row.scoped));  // a launch-only recorder is refused any scope
  }
}

TEST_CASE("backend chain: a GDB session", "[backend]") {
  // auto stays auto: BTS or soft is chosen as each thread starts recording.
  CHECK(tries(request(Backend::Auto, false)) == std::vector{Backend::Auto});
  CHECK(tries(request(Backend::Soft, false, false)) == std::vector{Backend::Soft});
  CHECK(tries(request(Backend::Bts, false)) == std::vector{Backend::Bts});
  // dbt: the software tracer when the recorder cannot run the program.
  CHECK(tries(request(Backend::Dbt, false)) == std::vector{Backend::Dbt, Backend::Soft});
  // dbt records only a program it starts (not --attach, not --multi).
  CHECK_FALSE(tracer::backend_chain(request(Backend::Dbt, false, false)));
}

TEST_CASE("backend chain: triage", "[backend]") {
  CHECK(tries(request(Backend::Auto, true)) == std::vector{Backend::Dbt, Backend::Soft, Backend::Step});
  CHECK(tries(request(Backend::Dbt, true)) == std::vector{Backend::Dbt});
  CHECK(tries(request(Backend::Step, true)) == std::vector{Backend::Step});
  // Following forks (triage's default): the recorder follows the whole tree by itself.
  auto followed = tracer::backend_chain(request(Backend::Auto, true, true, true));
  REQUIRE(followed);
  CHECK(followed->tries == std::vector{Backend::Dbt, Backend::Soft, Backend::Step});
  CHECK(followed->passed_over.empty());
  CHECK(tries(request(Backend::Dbt, true, true, true)) == std::vector{Backend::Dbt});
  // A GDB session's fork following needs ptrace: the recorder serves one process to GDB.
  auto refused = tracer::backend_chain(request(Backend::Dbt, false, true, true));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message(), Catch::Contains("--follow-fork needs a ptrace collector (soft or step)"));
}

TEST_CASE("open_target: a recorder that is not built is passed over for soft, and why", "[backend]") {
  auto r = request(Backend::Dbt, false);
  r.dbt_lib.clear();  // as in a build without Valgrind's headers
  auto opened = tracer::open_target(r);
  REQUIRE(opened);
  CHECK(opened->backend == Backend::Soft);
  REQUIRE(opened->not_used.size() == 1);
  CHECK(opened->not_used[0].backend == Backend::Dbt);
  CHECK_THAT(opened->not_used[0].why, Catch::Contains("not built"));
  REQUIRE(opened->pid);
  CHECK(opened->target->has_process());
  CHECK(opened->target->kill());
}

TEST_CASE("open_target: a program that cannot start ends the chain at once", "[backend]") {
  auto r = request(Backend::Auto, true);
  r.launch->program = "/nonexistent/program";
  r.launch->startup_with_shell = false;  // as triage starts it
  auto opened = tracer::open_target(r);
  REQUIRE_FALSE(opened);
  CHECK_THAT(opened.error().message(), Catch::Contains("/nonexistent/program"));
}
