#include <catch2/catch.hpp>

#include "server/triage/options.hpp"

using server::triage::parse_options;

TEST_CASE("triage options: everything after -- is the program, untouched", "[triage][cli]") {
  auto o = parse_options({"--json", "r.json", "--history=10", "--timeout=2.5", "--", "./t", "--history", "x y"});
  REQUIRE(o);
  CHECK(o->json == "r.json");
  CHECK(o->history == 10);
  CHECK(o->timeout == 2.5);
  CHECK(o->program == std::vector<std::string>{"./t", "--history", "x y"});
  CHECK(o->btrace == tracer::Backend::Auto);
}

TEST_CASE("triage options: without --, the program starts at the first word", "[triage][cli]") {
  auto o = parse_options({"--btrace=soft", "./t", "a"});
  REQUIRE(o);
  CHECK(o->btrace == tracer::Backend::Soft);
  CHECK(o->program == std::vector<std::string>{"./t", "a"});
}

TEST_CASE("triage options: errors", "[triage][cli]") {
  CHECK_FALSE(parse_options({}));
  CHECK_FALSE(parse_options({"--"}));
  CHECK_FALSE(parse_options({"--btrace=fast", "--", "./t"}));
  CHECK_FALSE(parse_options({"--history=0", "--", "./t"}));
  CHECK_FALSE(parse_options({"--bogus", "--", "./t"}));
  auto help = parse_options({"--help"});
  REQUIRE(help);
  REQUIRE(help->text);
  CHECK(help->text->find("--serve") != std::string::npos);
  CHECK(help->text->find('\0') == std::string::npos);
  CHECK(help->text->find("{auto,bts,dbt,soft,step,inproc}") != std::string::npos);
}
