// Catch2 2.x (Debian 12) has no SKIP. HS_SKIP(reason) ends the test case early and records it
// as skipped with its reason; test.sh counts these lines and reports them as skipped, not passed.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

namespace test_support {
inline void record_skip(const std::string& reason) {
  std::printf("HINDSIGHT-SKIP: %s: %s\n", Catch::getResultCapture().getCurrentTestName().c_str(),
              reason.c_str());
  std::fflush(stdout);
}
}  // namespace test_support

#define HS_SKIP(reason)                          \
  do {                                           \
    ::test_support::record_skip(reason);         \
    SUCCEED("skipped");                          \
    return;                                      \
  } while (0)
