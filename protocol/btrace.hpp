// Branch-trace packets (btrace.md §4-5): the btrace and btrace-conf documents, and the pure
// parsers for Qbtrace:, Qbtrace-conf: and the qXfer:btrace:read annex. Error details are
// gdbserver's texts, so encode_error(..., ErrStyle::Text) sends exactly what gdbserver sends.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace protocol {

template <class T>
using Result = base::Result<T>;

// One BTS block: begin = first instruction (0: unknown), end = last instruction (inclusive).
struct XmlBtraceBlock {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

enum class BtraceAnnex { All, New, Delta };
enum class BtraceOp { Bts, Pt, Off };
enum class BtraceFormat { Bts, Pt };

// Qbtrace-conf:bts:size=N / Qbtrace-conf:pt:size=N
struct BtraceConfSize {
  BtraceFormat format = BtraceFormat::Bts;
  std::uint64_t size = 0;
};

// qXfer:btrace:read document for blocks given newest first, exactly as gdbserver writes it:
// DOCTYPE line, <btrace version="1.0">, one <block begin="0x.." end="0x.."/> per line,
// </btrace>, newline and one NUL byte (GDB ignores it).
std::string btrace_xml(std::span<const XmlBtraceBlock> blocks);

// The same document written block by block, so a history is turned into text without an
// intermediate copy: BtraceXml xml(n); xml.block(b, e) per block; std::move(xml).finish().
class BtraceXml {
 public:
  explicit BtraceXml(std::size_t expected_blocks);
  void block(std::uint64_t begin, std::uint64_t end);
  std::string finish() &&;

 private:
  std::string out_;
};

// qXfer:btrace-conf:read document: <bts size="0x.." /> inside <btrace-conf version="1.0">,
// ending in a NUL like gdbserver's. Not enabled: the error "Btrace not enabled.".
Result<std::string> btrace_conf_xml(bool enabled, std::uint64_t bts_size);

// The N of Qbtrace-conf:bts:size=N: hex, optional 0x (GDB always sends it), at most
// 0xffffffff; anything else is "Bad size value.".
Result<std::uint64_t> parse_btrace_conf_size(std::string_view body);

// Body after "Qbtrace-conf:": "bts:size=N" or "pt:size=N"; any other option is
// "Bad Qbtrace configuration option.".
Result<BtraceConfSize> parse_btrace_conf(std::string_view body);

// Body after "Qbtrace:": "bts", "pt" or "off"; else "Bad Qbtrace operation.  Use bts, pt, or off.".
Result<BtraceOp> parse_btrace_op(std::string_view body);

// qXfer:btrace:read annex: "all", "new" or "delta"; else "Bad annex.".
Result<BtraceAnnex> parse_btrace_annex(std::string_view annex);

}  // namespace protocol
