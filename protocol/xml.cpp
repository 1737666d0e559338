// qXfer documents: threads and libraries-svr4, plus the m/l slicing every qXfer read uses.
#include "protocol/xml.hpp"

#include "protocol/framing.hpp"

namespace protocol {

namespace {

std::string hex_attr(std::uint64_t value) { return "0x" + hex_u64(value); }

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
        break;
    }
  }
  return out;
}

std::string threads_xml(const std::vector<XmlThread>& threads, bool multiprocess) {
  std::string out = "<threads>\n";
  for (const XmlThread& t : threads) {
    out += "<thread id=\"" + format_thread_id(t.id, multiprocess) + "\"";
    if (t.core >= 0) {
      out += " core=\"" + std::to_string(t.core) + "\"";
    }
    if (!t.name.empty()) {
      out += " name=\"" + xml_escape(t.name) + "\"";
    }
    out += "/>\n";
  }
  out += "</threads>\n";
  return out;
}

std::string libraries_svr4_xml(std::uint64_t main_lm, const std::vector<XmlLibrary>& libraries) {
  std::string out = "<library-list-svr4 version=\"1.0\"";
  if (main_lm != 0) {
    out += " main-lm=\"" + hex_attr(main_lm) + "\"";
  }
  out += ">";
  for (const XmlLibrary& lib : libraries) {
    out += "<library name=\"" + xml_escape(lib.name) + "\" lm=\"" + hex_attr(lib.lm) + "\" l_addr=\"" +
           hex_attr(lib.l_addr) + "\" l_ld=\"" + hex_attr(lib.l_ld) + "\" lmid=\"" + hex_attr(lib.lmid) +
           "\"/>";
  }
  out += "</library-list-svr4>";
  return out;
}

std::string xfer_slice(std::string_view doc, std::uint64_t offset, std::uint64_t length) {
  if (offset >= doc.size()) {
    return "l";
  }
  std::string_view rest = doc.substr(static_cast<std::size_t>(offset));
  bool last = length >= rest.size();
  std::string out = last ? "l" : "m";
  out += escape_binary(last ? rest : rest.substr(0, static_cast<std::size_t>(length)));
  return out;
}

std::string osdata_xml(std::string_view type, const std::vector<OsdataRow>& rows) {
  std::string out = "<osdata type=\"" + xml_escape(type) + "\">\n";
  for (const auto& row : rows) {
    out += "<item>";
    for (const auto& [name, value] : row) {
      out += "<column name=\"" + xml_escape(name) + "\">" + xml_escape(value) + "</column>";
    }
    out += "</item>";
  }
  return out + "</osdata>\n";
}

}  // namespace protocol
