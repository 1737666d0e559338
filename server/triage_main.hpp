// `hindsight triage [OPTIONS] -- PROG [ARGS...]` (docs/triage.md).
#pragma once

#include <string>
#include <vector>

namespace server {

// args: what follows `triage`. dbt_lib: the recorder's VALGRIND_LIB, empty when not built.
// Returns the exit status (the program's, 128+signal, or triage's own codes).
int triage_main(const std::vector<std::string>& args, const std::string& dbt_lib);

}  // namespace server
