// The one routing table: packet name -> parser -> handler, errors encoded in one place.
#pragma once

#include <string_view>
#include <vector>

#include "server/features.hpp"
#include "server/handlers/context.hpp"

namespace server {

// Handles one packet payload (framing already removed). Never throws: a malformed packet
// gets an error reply, an unknown one the empty reply.
Reply dispatch_packet(Context& cx, std::string_view payload);

// The qSupported features of the routes, each with when it is available (features.hpp).
std::vector<Feature> route_features();

}  // namespace server
