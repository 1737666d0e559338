// Where this hindsight's other files are: the dbt recorder and the fast tracepoint agent. An
// installed binary finds them from where it runs, by the install layout's relative paths (so a
// DESTDIR tree works where it lies); a binary run from the build tree finds the build tree's.
#pragma once

#include <string>

namespace server {

struct Parts {
  std::string dbt_lib;  // the recorder's VALGRIND_LIB folder ("": this build has no recorder)
  std::string agent;    // libhindsight-agent.so
  std::string recorder;  // libhindsight-recorder.so (--btrace=inproc)
};

// exe: this binary's path. The environment's HINDSIGHT_DBT_LIB and HINDSIGHT_RECORDER_LIB, when
// set, are the dbt_lib and the recorder.
Parts parts_for(const std::string& exe);

// parts_for(/proc/self/exe)
Parts this_binary_parts();

}  // namespace server
