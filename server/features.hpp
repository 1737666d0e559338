// When a packet or a qSupported feature is available: what the Target can do, what GDB
// negotiated, --disable-packet. Every route (dispatch.cpp), every qXfer object (xfer.cpp) and
// each feature of no single packet (features.cpp) carries one; qSupported, dispatch and
// --disable-packet read them and nothing else, so what is announced is what is served.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/disable_packet.hpp"
#include "server/handlers/context.hpp"

namespace server {

struct Availability {
  bool tracer::Capabilities::*needs = nullptr;  // the target must be able to (null: any target)
  DisablePacket disable = DisablePacket::None;  // --disable-packet removes it
};
bool available(const Context& cx, const Availability& when);

// One qSupported feature and when it is announced.
struct Feature {
  std::string name;
  Availability when;
  // A negotiated feature is announced only when GDB offered it; this session flag is then
  // set to whether it was agreed (null: announced whatever GDB offered).
  bool SessionState::*agreed = nullptr;
};

// Every feature the server has, from the route table, the qXfer table and the features of no
// single packet: each once.
std::vector<Feature> all_features();

// qSupported: records what GDB offered and what was agreed in cx.state, and returns the
// features to announce, in table order.
std::vector<std::string> negotiate_features(Context& cx, const std::vector<std::string>& gdb_features);

}  // namespace server
