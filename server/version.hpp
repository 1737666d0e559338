// `hindsight --version`: what this is (meson's version, the git commit it was built from) and
// which history collectors this machine can use, in the words the server falls back with.
#pragma once

#include <string>

#include "server/parts.hpp"

namespace server {

std::string version_text(const Parts& parts);

}  // namespace server
