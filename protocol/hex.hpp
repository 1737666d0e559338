// Hex encoding as the remote protocol uses it: lowercase, no 0x, no padding unless asked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace protocol {

using Bytes = std::vector<std::uint8_t>;
template <class T>
using Result = base::Result<T>;

// Value of one hex digit (either case), or -1.
int hex_digit_value(char c);
// Bytes to lowercase hex pairs ("m" replies, registers).
std::string to_hex(std::span<const std::uint8_t> bytes);
std::string to_hex(std::string_view text);
// Hex pairs to bytes; an odd length or a non-hex digit is Errc::malformed.
Result<Bytes> from_hex(std::string_view hex);
// Hex pairs to text (qRcmd, vRun arguments, vFile paths).
Result<std::string> from_hex_string(std::string_view hex);
// A hex number of 1..16 digits (addresses, lengths); empty, too long or non-hex is malformed.
Result<std::uint64_t> parse_hex_u64(std::string_view hex);
// A hex number with an optional leading '-' ("-1" in thread ids, vFile results).
Result<std::int64_t> parse_hex_i64(std::string_view hex);
// A number as minimal lowercase hex ("1f").
std::string hex_u64(std::uint64_t value);
// A number as exactly `digits` hex digits, zero padded (16 for watch: addresses).
std::string hex_fixed(std::uint64_t value, int digits);

}  // namespace protocol
