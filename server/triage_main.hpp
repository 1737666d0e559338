// `hindsight triage [OPTIONS] -- PROG [ARGS...]` (docs/triage.md).
#pragma once

#include <string>
#include <vector>

#include "server/parts.hpp"

namespace server {

// args: what follows `triage`. parts: where the recorders are (the dbt one's folder empty when not built).
// Returns the exit status (the program's, 128+signal, or triage's own codes).
int triage_main(const std::vector<std::string>& args, const Parts& parts);

}  // namespace server
