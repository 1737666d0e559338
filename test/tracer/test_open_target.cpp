// The backend chain the server and triage share (tracer/open_target.hpp), and the one table of
// backend names. Pure: which backends a request tries, in order, and why it passes one over.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <span>

#include "tracer/btrace/collector_factories.hpp"
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

TEST_CASE("backends: every row but auto has one factory, a collector or a Target of its own", "[backend]") {
  for (const auto& row : tracer::kBackends) {
    INFO(row.name);
    const bool collector = tracer::collector_factory(row.backend) != nullptr;
    const bool own_target = tracer::has_own_target(row.backend);
    if (row.backend == Backend::Auto) {
      CHECK_FALSE(collector);  // a choice among the others
      CHECK_FALSE(own_target);
      continue;
    }
    CHECK(collector != own_target);
    // A session falls back to a backend that records wherever the program runs.
    if (row.session_fallback) {
      CHECK(tracer::collector_factory(*row.session_fallback) != nullptr);
      CHECK_FALSE(tracer::backend_row(*row.session_fallback).launch_only);
    }
  }
}

namespace {

// An auto order: rows that exist, each once, auto not among them.
void check_auto_order(std::span<const Backend> order) {
  std::set<Backend> seen;
  for (const Backend backend : order) {
    INFO(tracer::backend_name(backend));
    CHECK(backend != Backend::Auto);
    CHECK(tracer::backend_row(backend).backend == backend);  // backend_row's fall-back is auto's row
    CHECK(seen.insert(backend).second);
  }
}

bool has(std::span<const Backend> order, Backend backend) {
  return std::find(order.begin(), order.end(), backend) != order.end();
}

}  // namespace

TEST_CASE("backends: auto's order in a GDB session: BTS, else the in-process recorder, then collectors that take a scope",
          "[backend]") {
  check_auto_order(tracer::kAutoInSession);
  REQUIRE(std::size(tracer::kAutoInSession) >= 3);
  CHECK(tracer::kAutoInSession[0] == Backend::Bts);
  CHECK(tracer::kAutoInSession[1] == Backend::Inproc);  // where BTS is absent, at launch and attach
  // Chosen per process as it starts recording: only backends with a collector.
  for (const Backend backend : tracer::kAutoInSession) {
    INFO(tracer::backend_name(backend));
    CHECK(tracer::collector_factory(backend) != nullptr);
    CHECK_FALSE(tracer::backend_row(backend).launch_only);
  }
  // With --btrace-scope, auto still finds a collector, and it is the last resort.
  CHECK(tracer::backend_row(std::end(tracer::kAutoInSession)[-1]).scoped);
  // step is the reference, never auto's choice in a session.
  CHECK_FALSE(has(tracer::kAutoInSession, Backend::Step));
}

TEST_CASE("backends: auto's order in triage: the in-process recorder, then dbt, step last, BTS only when asked",
          "[backend]") {
  check_auto_order(tracer::kAutoUnattended);
  REQUIRE(std::size(tracer::kAutoUnattended) >= 3);
  CHECK(tracer::kAutoUnattended[0] == Backend::Inproc);  // no Valgrind start-up per process
  CHECK(tracer::kAutoUnattended[1] == Backend::Dbt);     // where it cannot come in (seccomp's strict mode)
  CHECK(std::end(tracer::kAutoUnattended)[-1] == Backend::Step);
  CHECK_FALSE(has(tracer::kAutoUnattended, Backend::Bts));
  // Without a program to start, the launch-only recorder is left out, silently.
  auto attach = request(Backend::Auto, true, false);
  auto chain = tracer::backend_chain(attach);
  REQUIRE(chain);
  CHECK(chain->tries == std::vector{Backend::Inproc, Backend::Soft, Backend::Step});
  CHECK(chain->passed_over.empty());
}

TEST_CASE("backend chain: a GDB session", "[backend]") {
  // auto stays auto: BTS or soft is chosen as each thread starts recording.
  CHECK(tries(request(Backend::Auto, false)) == std::vector{Backend::Auto});
  CHECK(tries(request(Backend::Soft, false, false)) == std::vector{Backend::Soft});
  CHECK(tries(request(Backend::Bts, false)) == std::vector{Backend::Bts});
  // dbt: the software tracer when the recorder cannot run the program.
  CHECK(tries(request(Backend::Dbt, false)) == std::vector{Backend::Dbt, Backend::Soft});
  // dbt records only a program it starts (not --attach, not --multi).
  auto attached = tracer::backend_chain(request(Backend::Dbt, false, false));
  REQUIRE_FALSE(attached);
  CHECK(attached.error().message() == "the dbt recorder records only a program it starts");
}

TEST_CASE("backend chain: triage", "[backend]") {
  CHECK(tries(request(Backend::Auto, true)) == std::vector{Backend::Inproc, Backend::Dbt, Backend::Soft, Backend::Step});
  CHECK(tries(request(Backend::Dbt, true)) == std::vector{Backend::Dbt});
  CHECK(tries(request(Backend::Step, true)) == std::vector{Backend::Step});
  // Following forks (triage's default): each follows the whole tree.
  auto followed = tracer::backend_chain(request(Backend::Auto, true, true, true));
  REQUIRE(followed);
  CHECK(followed->tries == std::vector{Backend::Inproc, Backend::Dbt, Backend::Soft, Backend::Step});
  CHECK(followed->passed_over.empty());
  CHECK(tries(request(Backend::Dbt, true, true, true)) == std::vector{Backend::Dbt});
  // A GDB session's fork following needs ptrace: the recorder serves one process to GDB.
  auto refused = tracer::backend_chain(request(Backend::Dbt, false, true, true));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message(), Catch::Contains("--follow-fork needs a ptrace collector (soft or step)"));
  // The in-process recorder: a GDB session's and triage's (a tree too), not a session's that
  // follows forks.
  CHECK(tries(request(Backend::Inproc, false)) == std::vector{Backend::Inproc});
  CHECK(tries(request(Backend::Inproc, true)) == std::vector{Backend::Inproc});
  CHECK(tries(request(Backend::Inproc, true, true, true)) == std::vector{Backend::Inproc});
  REQUIRE_FALSE(tracer::backend_chain(request(Backend::Inproc, false, true, true)));
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
