// FrameDecoder fed every split, bad checksums, overlong packets; RLE and binary escapes.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "protocol/framing.hpp"

using protocol::FrameDecoder;
using protocol::FrameEvent;
using Kind = protocol::FrameEvent::Kind;

namespace {

std::vector<FrameEvent> feed_all(std::string_view bytes) {
  FrameDecoder dec;
  std::vector<FrameEvent> out;
  dec.feed(bytes, out);
  return out;
}

// Feeds bytes in two pieces split at `at`.
std::vector<FrameEvent> feed_split(std::string_view bytes, std::size_t at) {
  FrameDecoder dec;
  std::vector<FrameEvent> out;
  dec.feed(bytes.substr(0, at), out);
  dec.feed(bytes.substr(at), out);
  return out;
}

// Feeds one byte at a time.
std::vector<FrameEvent> feed_bytewise(std::string_view bytes) {
  FrameDecoder dec;
  std::vector<FrameEvent> out;
  for (char c : bytes) {
    dec.feed(std::string_view(&c, 1), out);
  }
  return out;
}

std::string kinds(const std::vector<FrameEvent>& events) {
  std::string s;
  for (const auto& e : events) {
    switch (e.kind) {
      case Kind::Packet:
        s += "P(" + e.payload + ")";
        break;
      case Kind::BadChecksum:
        s += "B";
        break;
      case Kind::Overlong:
        s += "O";
        break;
      case Kind::Interrupt:
        s += "I";
        break;
      case Kind::Ack:
        s += "+";
        break;
      case Kind::Nack:
        s += "-";
        break;
    }
  }
  return s;
}

// GDB's reading of a reply: expands c*N (N = char - 29 more copies).
std::string hex2(std::uint8_t v) {
  char buf[3];
  std::snprintf(buf, sizeof buf, "%02x", v);
  return buf;
}

std::string as_string(const protocol::Bytes& b) { return std::string(b.begin(), b.end()); }

}  // namespace

TEST_CASE("checksum and encode_packet", "[framing]") {
  CHECK(protocol::checksum("") == 0);
  CHECK(protocol::checksum("OK") == 0x9a);
  CHECK(protocol::encode_packet("") == "$#00");
  CHECK(protocol::encode_packet("OK") == "$OK#9a");
  // From a-basic.log: GDB's own checksums.
  CHECK(protocol::encode_packet("vMustReplyEmpty") == "$vMustReplyEmpty#3a");
  CHECK(protocol::encode_packet("QStartNoAckMode") == "$QStartNoAckMode#b0");
  CHECK(protocol::encode_packet("Hgp0.0") == "$Hgp0.0#ad");
  CHECK(protocol::encode_packet("qXfer:auxv:read::0,1000") == "$qXfer:auxv:read::0,1000#6b");
  CHECK(protocol::encode_notification("Stop:T05") == "%Stop:T05#" + hex2(protocol::checksum("Stop:T05")));
}

TEST_CASE("encode_packet run-length encodes and checksums the encoded bytes", "[framing]") {
  std::string payload = "0000000000000000";
  std::string encoded = protocol::encode_packet(payload);
  std::string body = encoded.substr(1, encoded.size() - 4);
  CHECK(body == "0*,");  // 15 more copies: ',' is 15 + 29
  CHECK(encoded.substr(encoded.size() - 2) == hex2(protocol::checksum(body)));
  CHECK(protocol::encode_packet(payload, false) == "$" + payload + "#00");
}

TEST_CASE("run_length_encode follows gdbserver's rules", "[framing]") {
  CHECK(protocol::run_length_encode("") == "");
  CHECK(protocol::run_length_encode("aaa") == "aaa");
  CHECK(protocol::run_length_encode("aaaa") == "a* ");
  CHECK(protocol::run_length_encode("aaaaa") == "a*!");
  CHECK(protocol::run_length_encode("xaaaay") == "xa* y");
  // 7 chars would need count char '#' (6 + 29), 8 would need '$': both shortened to 6 chars.
  CHECK(protocol::run_length_encode(std::string(7, 'a')) == "a*\"a");
  CHECK(protocol::run_length_encode(std::string(8, 'a')) == "a*\"aa");
  CHECK(protocol::run_length_encode(std::string(9, 'a')) == "a*%");
  // A run is capped at 97 characters (count char '}').
  CHECK(protocol::run_length_encode(std::string(97, 'z')) == "z*}");
  CHECK(protocol::run_length_encode(std::string(98, 'z')) == "z*}z");
  // Framing and escape characters are never run-length encoded.
  for (char c : {'*', '#', '$', '}'}) {
    std::string run(10, c);
    CHECK(protocol::run_length_encode(run) == run);
  }
}

TEST_CASE("run_length_decode expands as GDB does", "[framing]") {
  CHECK(protocol::run_length_decode("a* ").value() == "aaaa");
  CHECK(protocol::run_length_decode("xa*!y").value() == "xaaaaay");
  CHECK(protocol::run_length_decode("0*}").value() == std::string(97, '0'));
  CHECK(protocol::run_length_decode("T05thread:p1.1;").value() == "T05thread:p1.1;");
  CHECK_FALSE(protocol::run_length_decode("*a").ok());       // nothing to repeat
  CHECK_FALSE(protocol::run_length_decode("a*").ok());       // no count
  CHECK_FALSE(protocol::run_length_decode("a*\x10").ok());  // a count below the bias
}

TEST_CASE("run_length_encode round trips through run_length_decode", "[framing]") {
  std::vector<std::string> inputs = {
      "", "a", "ab", "0000", "00000000000000000000000000000000ffffffff",
      std::string(300, '0'), "T0506:0000000000000000;07:a0e6ffffff7f0000;",
      "}]}]}]}]}]", "x}]]]]]]]]y", "abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc",
  };
  for (int n = 1; n < 200; ++n) {
    inputs.push_back(std::string(static_cast<std::size_t>(n), 'q'));
    inputs.push_back("x" + std::string(static_cast<std::size_t>(n), ' ') + "y");
  }
  for (const auto& in : inputs) {
    std::string enc = protocol::run_length_encode(in);
    INFO("input: " << in << " encoded: " << enc);
    auto dec = protocol::run_length_decode(enc);
    REQUIRE(dec.ok());
    CHECK(*dec == in);
    CHECK(enc.size() <= in.size());
    CHECK(enc.find('#') == std::string::npos);
    CHECK(enc.find('$') == std::string::npos);
    for (char c : enc) {
      CHECK(static_cast<unsigned char>(c) <= 126);
    }
  }
}

TEST_CASE("FrameDecoder: a packet split at every position", "[framing]") {
  const std::vector<std::string> payloads = {
      "", "g", "m401000,4", "vCont;c:p39d5.-1",
      std::string("X1000,4:") + "}\x03}\x04\x03+-",  // binary with escapes, 0x03, + and - inside
      "qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386",
  };
  for (const auto& payload : payloads) {
    std::string wire = "+" + protocol::encode_packet(payload, false) + "-\x03";
    std::string expect = "+P(" + payload + ")-I";
    INFO("wire: " << wire);
    CHECK(kinds(feed_all(wire)) == expect);
    CHECK(kinds(feed_bytewise(wire)) == expect);
    for (std::size_t at = 0; at <= wire.size(); ++at) {
      INFO("split at " << at);
      CHECK(kinds(feed_split(wire, at)) == expect);
    }
  }
}

TEST_CASE("FrameDecoder: several packets in one buffer, every split", "[framing]") {
  std::string wire = protocol::encode_packet("qC", false) + "+" + protocol::encode_packet("?", false) +
                     protocol::encode_packet("m0,1", false);
  for (std::size_t at = 0; at <= wire.size(); ++at) {
    CHECK(kinds(feed_split(wire, at)) == "P(qC)+P(?)P(m0,1)");
  }
}

TEST_CASE("FrameDecoder: checksums", "[framing]") {
  CHECK(kinds(feed_all("$OK#9a")) == "P(OK)");
  CHECK(kinds(feed_all("$OK#9A")) == "P(OK)");
  CHECK(kinds(feed_all("$OK#9b")) == "B");
  CHECK(kinds(feed_all("$OK#a9")) == "B");
  CHECK(kinds(feed_all("$OK#zz")) == "B");
  CHECK(kinds(feed_all("$OK#9")) == "");
  CHECK(kinds(feed_all("$OK#9g")) == "B");
  // After a bad checksum the decoder continues with the next packet.
  CHECK(kinds(feed_all("$OK#00$OK#9a")) == "BP(OK)");
  std::string wire = "$OK#00+$OK#9a";
  for (std::size_t at = 0; at <= wire.size(); ++at) {
    CHECK(kinds(feed_split(wire, at)) == "B+P(OK)");
  }
}

TEST_CASE("FrameDecoder: bytes outside packets", "[framing]") {
  CHECK(kinds(feed_all("+")) == "+");
  CHECK(kinds(feed_all("-")) == "-");
  CHECK(kinds(feed_all("\x03")) == "I");
  CHECK(kinds(feed_all("garbage\r\n")) == "");
  CHECK(kinds(feed_all("xx+yy$OK#9azz-")) == "+P(OK)-");
  // '+' '-' and 0x03 inside a packet are payload.
  CHECK(kinds(feed_all(protocol::encode_packet("a+b-c\x03", false))) == "P(a+b-c\x03)");
}

TEST_CASE("FrameDecoder: '$' inside a packet restarts it", "[framing]") {
  CHECK(kinds(feed_all("$garb$OK#9a")) == "P(OK)");
  CHECK(kinds(feed_all("$garb#$OK#9a")) == "P(OK)");
  FrameDecoder dec;
  std::vector<FrameEvent> out;
  dec.feed("$abc", out);
  CHECK(dec.in_packet());
  dec.feed("$OK#9", out);
  CHECK(dec.in_packet());
  dec.feed("a", out);
  CHECK_FALSE(dec.in_packet());
  CHECK(kinds(out) == "P(OK)");
}

TEST_CASE("FrameDecoder: overlong packets", "[framing]") {
  std::string at_limit(protocol::kMaxPacketSize, 'a');
  std::string over(protocol::kMaxPacketSize + 1, 'a');
  CHECK(feed_all(protocol::encode_packet(at_limit, false)).at(0).payload.size() == protocol::kMaxPacketSize);

  std::string wire = protocol::encode_packet(over, false) + protocol::encode_packet("OK", false);
  auto events = feed_all(wire);
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == Kind::Overlong);
  CHECK(events[0].payload.empty());
  CHECK(kinds({events[1]}) == "P(OK)");
  // Bad checksum on an overlong packet still reports Overlong.
  CHECK(kinds(feed_all("$" + over + "#zz")) == "O");
  // Split in a few places around the limit.
  for (std::size_t at : {std::size_t{1}, protocol::kMaxPacketSize, protocol::kMaxPacketSize + 1,
                         protocol::kMaxPacketSize + 2, protocol::kMaxPacketSize + 3, wire.size() - 3}) {
    auto ev = feed_split(wire, at);
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].kind == Kind::Overlong);
    CHECK(ev[1].payload == "OK");
  }
}

TEST_CASE("escape_binary and unescape_binary", "[framing]") {
  CHECK(protocol::escape_binary(std::string_view("ab#$}*c")) == "ab}\x03}\x04}]}\x0a" "c");
  protocol::Bytes all;
  for (int i = 0; i < 256; ++i) {
    all.push_back(static_cast<std::uint8_t>(i));
  }
  std::string esc = protocol::escape_binary(all);
  CHECK(esc.size() == 256 + 4);
  CHECK(esc.find('#') == std::string::npos);
  CHECK(esc.find('$') == std::string::npos);
  CHECK(esc.find('*') == std::string::npos);
  auto back = protocol::unescape_binary(esc);
  REQUIRE(back.ok());
  CHECK(*back == all);

  CHECK(as_string(*protocol::unescape_binary("")) == "");
  CHECK(as_string(*protocol::unescape_binary("}]")) == "}");
  auto bad = protocol::unescape_binary("abc}");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Errc::malformed);
}

TEST_CASE("escape_binary_prefix fits as many bytes as possible", "[framing]") {
  protocol::Bytes data = {'a', '#', 'b', '}', 'c'};
  struct Case {
    std::size_t max_out;
    std::size_t consumed;
    std::string text;
  };
  std::vector<Case> cases = {
      {0, 0, ""},          {1, 1, "a"},           {2, 1, "a"},         {3, 2, "a}\x03"},
      {4, 3, "a}\x03" "b"}, {5, 3, "a}\x03" "b"}, {6, 4, "a}\x03" "b}]"}, {7, 5, "a}\x03" "b}]c"},
      {100, 5, "a}\x03" "b}]c"},
  };
  for (const auto& c : cases) {
    std::string out = "F";
    INFO("max_out " << c.max_out);
    CHECK(protocol::escape_binary_prefix(data, c.max_out, out) == c.consumed);
    CHECK(out == "F" + c.text);
  }
}

TEST_CASE("FrameDecoder: random binary packets survive escaping, framing and random splits", "[framing]") {
  std::uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
  };
  for (int round = 0; round < 200; ++round) {
    std::string wire;
    std::string expect;
    int count = 1 + static_cast<int>(next() % 4);
    for (int p = 0; p < count; ++p) {
      protocol::Bytes raw(next() % 64);
      for (auto& b : raw) {
        b = static_cast<std::uint8_t>(next());
      }
      std::string payload = protocol::escape_binary(raw);
      wire += protocol::encode_packet(payload, false);
      expect += "P(" + payload + ")";
      if (next() % 2 == 0) {
        wire += "\x03";
        expect += "I";
      }
      auto back = protocol::unescape_binary(payload);
      REQUIRE(back.ok());
      CHECK(*back == raw);
    }
    FrameDecoder dec;
    std::vector<FrameEvent> out;
    std::size_t pos = 0;
    while (pos < wire.size()) {
      std::size_t n = 1 + next() % 17;
      dec.feed(std::string_view(wire).substr(pos, n), out);
      pos += n;
    }
    CHECK(kinds(out) == expect);
    CHECK_FALSE(dec.in_packet());
  }
}
