// The one routing table: packet name -> parser -> handler, errors encoded in one place.
#pragma once

#include <string_view>
#include <vector>

#include "server/handlers/context.hpp"

namespace server {

// Handles one packet payload (framing already removed). Never throws: a malformed packet
// gets an error reply, an unknown one the empty reply.
Reply dispatch_packet(Context& cx, std::string_view payload);

// The features we announce in qSupported (after PacketSize), generated from the table.
std::vector<std::string_view> supported_features();

}  // namespace server
