// The one place that turns an Error into an error reply.
#pragma once

#include <string>

#include "base/result.hpp"

namespace protocol {

enum class ErrStyle {
  Code,  // "E01".."Eff": m M p P g G Z z H vCont and most others
  Text,  // "E.message": Qbtrace*, qXfer:btrace*; GDB shows the text to the user
};

std::string encode_error(const base::Error& error, ErrStyle style);

}  // namespace protocol
