// Branch-trace documents and parsers (btrace.md §4, §5).
#include "protocol/btrace.hpp"

#include <utility>

#include "protocol/hex.hpp"

namespace protocol {

namespace {

constexpr std::uint64_t kMaxBtraceSize = 0xffffffff;  // gdbserver: strtoul result > UINT_MAX is bad

std::string hex_attr(std::uint64_t value) {
  return "0x" + hex_u64(value);
}


base::Error bad(std::string_view text) {
  return base::make_error(base::Errc::malformed, std::string(text));
}

}  // namespace

BtraceXml::BtraceXml(std::size_t expected_blocks)
    : out_("<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n") {
  out_.reserve(out_.size() + expected_blocks * 48 + 12);
}

void BtraceXml::block(std::uint64_t begin, std::uint64_t end) {
  out_ += "<block begin=\"";
  out_ += hex_attr(begin);
  out_ += "\" end=\"";
  out_ += hex_attr(end);
  out_ += "\"/>\n";
}

std::string BtraceXml::finish() && {
  out_ += "</btrace>\n";
  out_.push_back('\0');
  return std::move(out_);
}

std::string btrace_xml(std::span<const XmlBtraceBlock> blocks) {
  BtraceXml xml(blocks.size());
  for (const XmlBtraceBlock& b : blocks) {
    xml.block(b.begin, b.end);
  }
  return std::move(xml).finish();
}

Result<std::string> btrace_conf_xml(bool enabled, std::uint64_t bts_size) {
  if (!enabled) {
    return base::make_error(base::Errc::invalid, "Btrace not enabled.");
  }
  std::string out = "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n<btrace-conf version=\"1.0\">\n";
  out += "<bts size=\"" + hex_attr(bts_size) + "\" />\n";  // gdbserver's space before "/>"
  out += "</btrace-conf>\n";
  out.push_back('\0');
  return out;
}

Result<std::uint64_t> parse_btrace_conf_size(std::string_view body) {
  if (body.size() >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    body.remove_prefix(2);
  }
  if (body.empty()) {
    return bad("Bad size value.");
  }
  std::uint64_t value = 0;
  for (char c : body) {
    int digit = hex_digit_value(c);
    if (digit < 0) {
      return bad("Bad size value.");
    }
    value = value * 16 + static_cast<std::uint64_t>(digit);
    if (value > kMaxBtraceSize) {
      return bad("Bad size value.");
    }
  }
  return value;
}

Result<BtraceConfSize> parse_btrace_conf(std::string_view body) {
  constexpr std::string_view kBts = "bts:size=";
  constexpr std::string_view kPt = "pt:size=";
  BtraceConfSize req;
  if (body.starts_with(kBts)) {
    req.format = BtraceFormat::Bts;
    body.remove_prefix(kBts.size());
  } else if (body.starts_with(kPt)) {
    req.format = BtraceFormat::Pt;
    body.remove_prefix(kPt.size());
  } else {
    return bad("Bad Qbtrace configuration option.");
  }
  auto size = parse_btrace_conf_size(body);
  if (!size) {
    return std::move(size).error();
  }
  req.size = *size;
  return req;
}

Result<BtraceOp> parse_btrace_op(std::string_view body) {
  if (body == "bts") {
    return BtraceOp::Bts;
  }
  if (body == "pt") {
    return BtraceOp::Pt;
  }
  if (body == "off") {
    return BtraceOp::Off;
  }
  return bad("Bad Qbtrace operation.  Use bts, pt, or off.");
}

Result<BtraceAnnex> parse_btrace_annex(std::string_view annex) {
  if (annex == "all") {
    return BtraceAnnex::All;
  }
  if (annex == "new") {
    return BtraceAnnex::New;
  }
  if (annex == "delta") {
    return BtraceAnnex::Delta;
  }
  return bad("Bad annex.");
}

}  // namespace protocol
