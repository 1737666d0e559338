// The tracepoint packets as GDB 13.1 sends them (captured from a session against gdbserver:
// `trace square if x > 1`, `passcount 3`, collect $regs, x, *(&x)@1, teval, while-stepping 2
// collect $rip; a trace state variable; buffer size, circular, notes; tfind in every form).
#include <catch2/catch.hpp>

#include "protocol/hex.hpp"
#include "protocol/tracepoint_replies.hpp"
#include "protocol/tracepoint_requests.hpp"

using protocol::TraceAction;

namespace {

template <class Parse>
void check_bad(Parse parse, std::initializer_list<const char*> bodies) {
  for (const char* body : bodies) {
    INFO("body: " << body);
    auto r = parse(body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Errc::malformed);
  }
}

}  // namespace

TEST_CASE("QTDP: a tracepoint with its condition, and actions that follow", "[tracepoints]") {
  auto r = protocol::parse_qtdp("2:0000555555555150:E:2:3:X13,26000622100222dc16080219162022012b1427-");
  REQUIRE(r.ok());
  const auto& tp = std::get<protocol::TracepointCreate>(*r);
  CHECK(tp.number == 2);
  CHECK(tp.address == 0x555555555150);
  CHECK(tp.enabled);
  CHECK(tp.step_count == 2);
  CHECK(tp.pass_count == 3);
  REQUIRE(tp.condition.has_value());
  CHECK(tp.condition->size() == 0x13);
  CHECK(tp.condition->front() == 0x26);
  CHECK(tp.more);
  CHECK_FALSE(tp.fast_length.has_value());

  auto plain = protocol::parse_qtdp("1:401000:D:0:0");
  REQUIRE(plain.ok());
  const auto& off = std::get<protocol::TracepointCreate>(*plain);
  CHECK_FALSE(off.enabled);
  CHECK_FALSE(off.more);
  CHECK_FALSE(off.condition.has_value());
  auto fast = protocol::parse_qtdp("3:401000:E:0:0:F5:S-");
  REQUIRE(fast.ok());
  CHECK(std::get<protocol::TracepointCreate>(*fast).fast_length == 5u);
  CHECK(std::get<protocol::TracepointCreate>(*fast).static_marker);
  CHECK(std::get<protocol::TracepointCreate>(*fast).more);
}

TEST_CASE("QTDP: actions: registers, memory, expressions (several in one packet), while-stepping", "[tracepoints]") {
  auto regs = protocol::parse_qtdp("-2:0000555555555150:R1fffffffffffffffffffffffffffffffffffff-");
  REQUIRE(regs.ok());
  const auto& a = std::get<protocol::TracepointActions>(*regs);
  CHECK(a.number == 2);
  CHECK(a.address == 0x555555555150);
  CHECK_FALSE(a.while_stepping);
  CHECK(a.more);
  REQUIRE(a.actions.size() == 1);
  CHECK(a.actions[0].kind == TraceAction::Kind::Registers);
  CHECK(a.actions[0].register_mask == "1fffffffffffffffffffffffffffffffffffff");

  auto exprs = protocol::parse_qtdp(
      "-2:0000555555555150:X0000000F,26000622100222dc16080222040c27X0000000F,26000622100222dc16080222040c27"
      "X0000000C,2c000222010216402d000227-");
  REQUIRE(exprs.ok());
  const auto& x = std::get<protocol::TracepointActions>(*exprs);
  REQUIRE(x.actions.size() == 3);
  CHECK(x.actions[0].kind == TraceAction::Kind::Expression);
  CHECK(x.actions[0].bytecode.size() == 15);
  CHECK(x.actions[2].bytecode.size() == 12);
  CHECK(x.more);

  auto step = protocol::parse_qtdp("-2:0000555555555150:SR010000");
  REQUIRE(step.ok());
  const auto& s = std::get<protocol::TracepointActions>(*step);
  CHECK(s.while_stepping);
  CHECK_FALSE(s.more);
  REQUIRE(s.actions.size() == 1);
  CHECK(s.actions[0].register_mask == "010000");

  auto memory = protocol::parse_qtdp("-1:401000:M-1,601040,4M6,-10,8");
  REQUIRE_FALSE(memory.ok());  // offsets are unsigned hex: GDB sends a negative one as its 64-bit value
  auto mem = protocol::parse_qtdp("-1:401000:M-1,601040,4M6,fffffffffffffff0,8");
  REQUIRE(mem.ok());
  const auto& m = std::get<protocol::TracepointActions>(*mem);
  REQUIRE(m.actions.size() == 2);
  CHECK(m.actions[0].kind == TraceAction::Kind::Memory);
  CHECK(m.actions[0].base_register == -1);
  CHECK(m.actions[0].offset == 0x601040);
  CHECK(m.actions[0].length == 4);
  CHECK(m.actions[1].base_register == 6);
  CHECK(m.actions[1].offset == 0xfffffffffffffff0);
  CHECK(m.actions[1].length == 8);

  check_bad(protocol::parse_qtdp, {"", "2", "2:401000", "2:401000:Y:0:0", "2:401000:E:0", "2:401000:E:0:0:Q",
                                   "2:401000:E:0:0:X5,00", "zz:401000:E:0:0", "-2:401000", "-2:401000:Q1",
                                   "-2:401000:R", "-2:401000:M1,2", "-2:401000:X2,00", "2:401000:E:0:0-x"});
}

TEST_CASE("QTDPsrc, QTDV, QTEnable/QTDisable/qTP locations", "[tracepoints]") {
  auto src = protocol::parse_qtdpsrc("2:555555555150:cmd:0:10:636f6c6c6563742024726567732c2078");
  REQUIRE(src.ok());
  CHECK(src->number == 2);
  CHECK(src->address == 0x555555555150);
  CHECK(src->type == "cmd");
  CHECK(src->start == 0);
  CHECK(src->total_length == 0x10);
  CHECK(src->text == "collect $regs, x");
  CHECK(protocol::parse_qtdpsrc("2:555555555150:cond:0:5:78203e2031")->text == "x > 1");
  check_bad(protocol::parse_qtdpsrc, {"", "2:1:at:0:6", "2:1::0:1:61", "2:1:at:0:1:6", "2:1:at:zz:1:61"});

  auto tsv = protocol::parse_qtdv("2:0000000000000007:0:68697473");
  REQUIRE(tsv.ok());
  CHECK(tsv->number == 2);
  CHECK(tsv->initial_value == 7);
  CHECK_FALSE(tsv->builtin);
  CHECK(tsv->name == "hits");
  auto builtin = protocol::parse_qtdv("1:0000000000000000:1:74726163655f74696d657374616d70");
  REQUIRE(builtin.ok());
  CHECK(builtin->builtin);
  CHECK(builtin->name == "trace_timestamp");
  CHECK(protocol::parse_qtdv("3:ffffffffffffffff:0:61")->initial_value == -1);
  check_bad(protocol::parse_qtdv, {"", "1:0:0", "1:0:2:61", "1:zz:0:61", "1:0:0:6"});

  auto at = protocol::parse_tracepoint_location("2:555555555150");
  REQUIRE(at.ok());
  CHECK(at->number == 2);
  CHECK(at->address == 0x555555555150);
  check_bad(protocol::parse_tracepoint_location, {"", "2", "2:", ":1", "2:zz"});
}

TEST_CASE("QTFrame: by number, pc, tracepoint, inside and outside a range; none", "[tracepoints]") {
  using Kind = protocol::FrameSelection::Kind;
  auto n = protocol::parse_qtframe("0");
  REQUIRE(n.ok());
  CHECK(n->kind == Kind::Number);
  CHECK(n->number == 0);
  CHECK(protocol::parse_qtframe("1f")->number == 0x1f);
  CHECK(protocol::parse_qtframe("ffffffff")->number == -1);
  CHECK(protocol::parse_qtframe("-1")->number == -1);
  auto pc = protocol::parse_qtframe("pc:1234");
  REQUIRE(pc.ok());
  CHECK(pc->kind == Kind::Pc);
  CHECK(pc->start == 0x1234);
  auto tdp = protocol::parse_qtframe("tdp:1");
  REQUIRE(tdp.ok());
  CHECK(tdp->kind == Kind::Tracepoint);
  CHECK(tdp->number == 1);
  auto range = protocol::parse_qtframe("range:10:20");
  REQUIRE(range.ok());
  CHECK(range->kind == Kind::InRange);
  CHECK(range->start == 0x10);
  CHECK(range->end == 0x20);
  CHECK(protocol::parse_qtframe("outside:10:20")->kind == Kind::OutsideRange);
  check_bad(protocol::parse_qtframe, {"", "zz", "pc:", "tdp:x", "range:10", "outside:10:zz", "80000000"});
}

TEST_CASE("QTro, QTBuffer, QTNotes", "[tracepoints]") {
  auto ro = protocol::parse_qtro("0000000000000318,0000000000000334:0000000000000338,0000000000000358");
  REQUIRE(ro.ok());
  REQUIRE(ro->size() == 2);
  CHECK((*ro)[0] == std::pair<std::uint64_t, std::uint64_t>{0x318, 0x334});
  CHECK((*ro)[1] == std::pair<std::uint64_t, std::uint64_t>{0x338, 0x358});
  CHECK(protocol::parse_qtro("")->empty());
  check_bad(protocol::parse_qtro, {"1", "1,", "1,2:", "zz,1"});

  CHECK(protocol::parse_qtbuffer("size:2000")->size == 0x2000);
  CHECK(protocol::parse_qtbuffer("size:-1")->size == -1);
  CHECK(protocol::parse_qtbuffer("circular:1")->circular == true);
  CHECK(protocol::parse_qtbuffer("circular:0")->circular == false);
  check_bad(protocol::parse_qtbuffer, {"", "size:", "circular:2", "other:1", "size:zz"});

  auto notes = protocol::parse_qtnotes("user:6d65;notes:736f6d65206e6f746573;");
  REQUIRE(notes.ok());
  CHECK(notes->user == "me");
  CHECK(notes->notes == "some notes");
  CHECK_FALSE(notes->stop_note.has_value());
  auto stop = protocol::parse_qtnotes("tstop:;");
  REQUIRE(stop.ok());
  CHECK(stop->stop_note == "");
  check_bad(protocol::parse_qtnotes, {"user:6d65", "who:61;", "user;", "user:zz;"});
}

TEST_CASE("tracepoint replies: qTStatus, qTfP pieces, qTfV, QTFrame and traceframe-info as gdbserver writes them",
          "[tracepoints]") {
  protocol::TraceStatusReply s;
  s.buffer_free = 0x500000;
  s.buffer_size = 0x500000;
  CHECK(protocol::encode_trace_status(s) ==
        "T0;tnotrun:0;tframes:0;tcreated:0;tfree:500000;tsize:500000;circular:0;disconn:0;starttime:0;stoptime:0;"
        "username:;notes::");
  s.running = false;
  s.stop_reason = "tstop";
  s.stop_text = "bye";
  s.frames = 0x12;
  s.created = 0x20;
  s.circular = true;
  s.start_time = 0x10;
  s.stop_time = 0x20;
  s.user = "me";
  CHECK(protocol::encode_trace_status(s) ==
        "T0;tstop:627965:0;tframes:12;tcreated:20;tfree:500000;tsize:500000;circular:1;disconn:0;starttime:10;"
        "stoptime:20;username:6d65;notes::");
  s.stop_reason = "tpasscount";
  s.stopping_tracepoint = 3;
  CHECK(protocol::encode_trace_status(s).starts_with("T0;tpasscount:3;tframes:12;"));

  protocol::TracepointDefinitionReply d{.number = 2, .address = 0x401000, .enabled = false, .step_count = 3,
                                        .pass_count = 1, .condition = protocol::Bytes{0x22, 0x01, 0x27}};
  d.actions = {"R1ff"};
  d.step_actions = {"M-1,601040,4"};
  d.sources = {{"at", "*0x401000"}};
  CHECK(protocol::encode_tracepoint_definition(d) ==
        std::vector<std::string>{"T2:401000:D:3:1:X3,220127", "A2:401000:R1ff", "S2:401000:M-1,601040,4",
                                 "Z2:401000:at:0:9:2a3078343031303030"});
  CHECK(protocol::encode_trace_variable(2, -5, false, "n") == "2:fffffffffffffffb:0:6e");
  CHECK(protocol::encode_frame_found(std::pair<std::uint64_t, std::uint32_t>{0x1a, 2}) == "F1aT2");
  CHECK(protocol::encode_frame_found(std::nullopt) == "F-1");
  CHECK(protocol::encode_traceframe_info({{0x1000, 4}}, {7}) ==
        "<traceframe-info>\n<memory start=\"0x1000\" length=\"0x4\"/>\n<tvar id=\"7\"/>\n</traceframe-info>\n");
}

TEST_CASE("trace actions are given back as GDB wrote them; qTV's number", "[tracepoints]") {
  for (const char* packet : {"-1:401000:R1fffff", "-1:401000:M-1,601040,4", "-1:401000:M6,fffffffffffffff0,8",
                             "-1:401000:X3,220127"}) {
    auto parsed = protocol::parse_qtdp(packet);
    REQUIRE(parsed.ok());
    const auto& a = std::get<protocol::TracepointActions>(*parsed);
    REQUIRE(a.actions.size() == 1);
    CHECK(protocol::encode_trace_action(a.actions[0]) == std::string(packet).substr(10));
  }
  CHECK(protocol::parse_qtv("1f").value() == 0x1f);
  CHECK_FALSE(protocol::parse_qtv("").ok());
  CHECK_FALSE(protocol::parse_qtv("zz").ok());
}
