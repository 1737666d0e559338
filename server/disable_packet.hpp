// --disable-packet (gdbserver's option for testing GDB): the packets the server can be told to
// behave as if it lacked. The one list of their names; each route, qXfer object and the stop
// reply say which of them removes them (server/features.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace server {

enum class DisablePacket : std::uint8_t {
  None,         // nothing removes it
  VCont,        // vCont and vCont?
  T,            // stop replies are S, not T
  Tthread,      // stop replies carry no thread:
  QC,           // qC
  QfThreadInfo, // qfThreadInfo, qsThreadInfo
  Threads,      // qXfer:threads
};

struct DisablePacketName {
  DisablePacket packet;
  std::string_view name;
};
inline constexpr DisablePacketName kDisablePacketNames[] = {
    {DisablePacket::VCont, "vCont"}, {DisablePacket::T, "T"},
    {DisablePacket::Tthread, "Tthread"}, {DisablePacket::QC, "qC"},
    {DisablePacket::QfThreadInfo, "qfThreadInfo"}, {DisablePacket::Threads, "threads"},
};

inline std::optional<DisablePacket> disable_packet_from_name(std::string_view name) {
  for (const auto& row : kDisablePacketNames) {
    if (row.name == name) {
      return row.packet;
    }
  }
  return std::nullopt;
}

inline std::vector<std::string> disable_packet_names() {
  std::vector<std::string> out;
  for (const auto& row : kDisablePacketNames) {
    out.emplace_back(row.name);
  }
  return out;
}

}  // namespace server
