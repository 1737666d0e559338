// XML documents served through qXfer, and slicing any document into m/l replies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/thread_id.hpp"

namespace protocol {

// & < > " ' escaped for attribute values.
std::string xml_escape(std::string_view text);

struct XmlThread { ThreadId id; std::string name; int core = -1; };
// <threads>\n<thread id="p1.1" core="0" name="prog"/>\n</threads>\n
std::string threads_xml(const std::vector<XmlThread>& threads, bool multiprocess);

struct XmlLibrary { std::string name; std::uint64_t lm = 0, l_addr = 0, l_ld = 0, lmid = 0; };
// <library-list-svr4 version="1.0" main-lm="0x..."><library .../>...</library-list-svr4>
// (no main-lm attribute when main_lm is 0).
std::string libraries_svr4_xml(std::uint64_t main_lm, const std::vector<XmlLibrary>& libraries);

// One `info os` table: <osdata type="TYPE">\n<item><column name="N">V</column>...</item>...</osdata>\n
using OsdataRow = std::vector<std::pair<std::string, std::string>>;
std::string osdata_xml(std::string_view type, const std::vector<OsdataRow>& rows);

// The qXfer reply for doc[offset, offset+length): "m" + escaped data when more follows,
// "l" + escaped data at the end ("l" alone past the end).
std::string xfer_slice(std::string_view doc, std::uint64_t offset, std::uint64_t length);

}  // namespace protocol
