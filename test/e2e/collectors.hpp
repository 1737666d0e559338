// The history collectors an end-to-end test runs with, named on the server's command line
// (--btrace=COLLECTOR); dbt (the program under the dbt recorder) only where it is built.
#pragma once

#include <string_view>

#include "test/support/skip.hpp"

// Ends the test case, as skipped, for a collector this build does not have.
#define SKIP_IF_NOT_BUILT(collector)                                                            \
  if (std::string_view(collector) == "dbt" && !HS_DBT_BUILT) {                                \
    HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)"); \
  }
