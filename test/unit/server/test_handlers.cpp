// Every handler against the FakeTarget: good requests, bad requests, and the state they leave.
#include <algorithm>
#include <catch2/catch.hpp>

#include "base/log.hpp"
#include "protocol/hex.hpp"
#include "test/unit/server/fixture.hpp"

using test_support::FakeTarget;
using test_support::HandlerFixture;

namespace {

// What the monitor said since the last call (its console lines), and forgets it.
std::string take_console(HandlerFixture& f) {
  std::string all;
  for (const auto& line : f.cx.console) {
    all += line;
  }
  f.cx.console.clear();
  return all;
}

}  // namespace

TEST_CASE("qSupported announces our features and PacketSize", "[handlers]") {
  HandlerFixture f;
  auto reply = f.send("qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+");
  CHECK(reply.starts_with("PacketSize=20000;"));
  CHECK(reply.find("qXfer:features:read+") != std::string::npos);
  CHECK(reply.find("qXfer:exec-file:read+") != std::string::npos);
  CHECK(reply.find("QStartNoAckMode+") != std::string::npos);
  CHECK(reply.find("vContSupported+") != std::string::npos);
  CHECK(reply.find(";multiprocess+") != std::string::npos);
  CHECK(f.state.multiprocess);
  CHECK(f.state.swbreak);

  HandlerFixture plain;
  CHECK(plain.send("qSupported").find("multiprocess+") == std::string::npos);
  CHECK_FALSE(plain.state.multiprocess);
  CHECK(plain.send("qSupported;bad").starts_with("E"));
}

TEST_CASE("unknown packets get the empty reply", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("vMustReplyEmpty") == "");
  CHECK(f.send("qTfSTM") == "");         // static tracepoint markers: none here
  CHECK(f.send("qCRC:1,2") == "");        // must not be taken for qC
  CHECK(f.send("") == "");
  CHECK(f.send("\x01\x02garbage") == "");
  CHECK(f.send("QStartNoAckModeX") == "");
}

TEST_CASE("thread selection and queries", "[handlers]") {
  HandlerFixture f;
  f.send("qSupported:multiprocess+");
  CHECK(f.send("Hgp64.65") == "OK");
  CHECK(f.state.general_thread == 0x65);
  CHECK(f.send("Hgp64.99") == "E01");   // no such thread
  CHECK(f.send("Hgp0.0") == "OK");
  CHECK(f.state.general_thread == 0x65);  // "any" keeps the current one
  CHECK(f.send("Hc-1") == "OK");
  CHECK(f.send("Hgzz").starts_with("E"));
  CHECK(f.send("qC") == "QCp64.65");
  CHECK(f.send("Tp64.64") == "OK");
  CHECK(f.send("Tp64.66").starts_with("E"));
  CHECK(f.send("qfThreadInfo") == "mp64.64,p64.65");
  CHECK(f.send("qsThreadInfo") == "l");
  CHECK(f.send("qAttached:64") == "0");
  CHECK(f.send("qAttached:65").starts_with("E"));
  f.target.was_attached = true;
  CHECK(f.send("qAttached") == "1");
}

TEST_CASE("registers g G p P", "[handlers]") {
  HandlerFixture f;
  f.target.regs[0] = 0xab;
  auto g = f.send("g");
  REQUIRE(g.size() == FakeTarget::kRegBytes * 2);
  CHECK(g.substr(0, 4) == "ab00");
  CHECK(f.send("G" + std::string(16, '1')) == "OK");
  CHECK(f.target.regs[7] == 0x11);
  CHECK(f.send("G123").starts_with("E"));   // odd hex
  CHECK(f.send("p10") == "0000000000000000");
  CHECK(f.send("P10=0102030405060708") == "OK");
  CHECK(f.send("p10") == "0102030405060708");
  CHECK(f.send("P10=01").starts_with("E"));   // wrong size for the register
  CHECK(f.send("pzz").starts_with("E"));
  f.target.alive = false;
  CHECK(f.send("g").starts_with("E"));
}

TEST_CASE("memory m M X", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("m400000,4") == "00070e15");
  CHECK(f.send("m400000,0") == "");
  CHECK(f.send("m40fffe,10") == protocol::to_hex(std::vector<std::uint8_t>{
                                    f.target.memory[0xfffe], f.target.memory[0xffff]}));  // short read
  CHECK(f.send("m10,4") == "E0e");          // EFAULT from the target
  CHECK(f.send("mzz,4") == "E01");          // malformed
  CHECK(f.send("m400000") == "E01");        // truncated
  CHECK(f.send("M400000,2:aabb") == "OK");
  CHECK(f.target.memory[1] == 0xbb);
  CHECK(f.send("M400000,3:aabb").starts_with("E"));  // length does not match
  CHECK(f.send("X400000,0:") == "OK");               // GDB's probe
  CHECK(f.send("X400010,2:}\x03\x05") == "OK");      // escaped '#'
  CHECK(f.target.memory[0x10] == '#');
  CHECK(f.target.memory[0x11] == 0x05);
  CHECK(f.send("X10,1:a").starts_with("E"));
}

TEST_CASE("breakpoints Z z", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("Z0,401000,1") == "OK");
  CHECK(f.target.breakpoints.count({0, 0x401000}) == 1);
  CHECK(f.send("Z0,401000,1;X1,27X2,2227") == "OK");  // conditions reach the target
  CHECK(f.target.conditions[0x401000] == std::vector<tracer::Bytes>{{0x27}, {0x22, 0x27}});
  CHECK(f.send("Z0,401000,1") == "OK");  // none: unconditional again
  CHECK(f.target.conditions[0x401000].empty());
  CHECK(f.send("Z0,401000,1;X1,0").starts_with("E"));  // a condition shorter than its length
  CHECK(f.send("z0,401000,1") == "OK");
  CHECK(f.target.breakpoints.empty());
  CHECK(f.send("Z3,401000,4") == "");         // unsupported type: GDB falls back
  CHECK(f.send("Z9,401000,1").starts_with("E"));  // not a Z type at all
  CHECK(f.send("Z0,zz,1").starts_with("E"));
  f.target.alive = false;
  CHECK(f.send("Z0,401000,1").starts_with("E"));
}

TEST_CASE("vCont builds a resume plan", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("vCont?") == "vCont;c;C;s;S;t;r");
  auto r = f.reply("vCont;C0b:p64.65;c:p64.-1");
  CHECK(r.kind == server::Reply::Kind::WaitForStop);
  REQUIRE(f.target.resumes.size() == 1);
  const auto& plan = f.target.resumes.back();
  REQUIRE(plan.actions.size() == 2);
  CHECK(plan.actions[0].tid == 0x65);
  CHECK(plan.actions[0].signal == 11);  // GDB 0x0b is SIGSEGV
  CHECK(plan.actions[1].tid == tracer::kAllThreads);

  f.reply("vCont;r401000,401010:p64.64;c");
  const auto& range = f.target.resumes.back().actions[0];
  CHECK(range.kind == tracer::ResumeKind::RangeStep);
  CHECK(range.range_start == 0x401000);
  CHECK(range.range_end == 0x401010);

  CHECK(f.send("vCont;s:p64.99").starts_with("E"));  // dead thread
  CHECK(f.send("vCont").starts_with("E"));
  CHECK(f.send("vCont;q").starts_with("E"));
}

TEST_CASE("legacy c and s act on the Hc thread", "[handlers]") {
  HandlerFixture f;
  f.send("Hc65");
  CHECK(f.reply("s").kind == server::Reply::Kind::WaitForStop);
  CHECK(f.target.resumes.back().actions.at(0).tid == 0x65);
  CHECK(f.target.resumes.back().actions.at(0).kind == tracer::ResumeKind::Step);
  f.send("Hc-1");
  CHECK(f.reply("C0e").kind == server::Reply::Kind::WaitForStop);
  CHECK(f.target.resumes.back().actions.at(0).signal == 14);  // SIGALRM
}

TEST_CASE("stop reason and stop replies", "[handlers]") {
  HandlerFixture f;
  f.send("qSupported:multiprocess+;swbreak+");
  tracer::StopEvent ev;
  ev.pid = 100;
  ev.tid = 101;
  ev.signal = 5;
  ev.reason = tracer::StopReason::SoftwareBreakpoint;
  f.server.last_stop = ev;
  auto reply = f.send("?");
  CHECK(reply.starts_with("T05swbreak:;"));
  CHECK(reply.find("thread:p64.65;") != std::string::npos);
  CHECK(reply.find("10:") != std::string::npos);  // rip expedited
  CHECK(f.state.general_thread == 101);
  f.target.alive = false;
  CHECK(f.send("?") == "W00");
}

TEST_CASE("--disable-packet: the server answers as one without those packets", "[handlers]") {
  HandlerFixture f;
  using server::DisablePacket;
  f.options.disabled_packets = {DisablePacket::VCont, DisablePacket::T, DisablePacket::QC, DisablePacket::QfThreadInfo,
                                DisablePacket::Threads};
  auto features = f.send("qSupported:multiprocess+;vContSupported+");
  CHECK(features.find("qXfer:threads:read+") == std::string::npos);
  CHECK(features.find("vContSupported+") == std::string::npos);
  CHECK(f.send("vCont?") == "");
  CHECK(f.send("vCont;c") == "");
  CHECK(f.send("qC") == "");
  CHECK(f.send("qfThreadInfo") == "");
  CHECK(f.send("qsThreadInfo") == "");
  CHECK(f.send("qXfer:threads:read::0,fff") == "");
  tracer::StopEvent ev;
  ev.pid = 100;
  ev.tid = 101;
  ev.signal = 5;
  f.server.last_stop = ev;
  CHECK(f.send("?") == "S05");
  f.options.disabled_packets = {DisablePacket::Tthread};
  auto reply = f.send("?");
  CHECK(reply.starts_with("T05"));
  CHECK(reply.find("thread:") == std::string::npos);
  CHECK_FALSE(f.send("qC").empty());
}

TEST_CASE("qXfer objects in chunks", "[handlers]") {
  HandlerFixture f;
  auto first = f.send("qXfer:features:read:target.xml:0,a");  // offsets and lengths are hex
  CHECK(first == "m<target><a");
  auto rest = f.send("qXfer:features:read:target.xml:a,1000");
  CHECK(rest.starts_with("l"));
  CHECK(rest.ends_with("</target>"));
  CHECK(f.send("qXfer:features:read:other.xml:0,1000").starts_with("E"));
  CHECK(f.send("qXfer:exec-file:read:64:0,1000") == "l/fake/prog");
  CHECK(f.send("qXfer:threads:read::0,1000").find("<thread id=\"65\"") != std::string::npos);
  auto libs = f.send("qXfer:libraries-svr4:read::0,1000");
  CHECK(libs.find("main-lm=\"0x1000\"") != std::string::npos);
  CHECK(libs.find("/lib/libc.so.6") != std::string::npos);
  CHECK(f.send("qXfer:auxv:read::0,1000").size() == 33);
  CHECK(f.send("qXfer:bogus:read::0,1000") == "");  // not an object we know
  // info os: the list of tables, each table from the host, an unknown table empty.
  auto types = f.send("qXfer:osdata:read::0,1000");
  CHECK(types.starts_with("l<osdata type=\"types\">\n<item><column name=\"Type\">cpus</column>"));
  CHECK(types.find("<column name=\"Type\">threads</column>") != std::string::npos);
  CHECK(f.send("qXfer:osdata:read:sockets:0,1000") ==
        "l<osdata type=\"I sockets\">\n<item><column name=\"local address\">0.0.0.0</column>"
        "<column name=\"local port\">2345</column></item></osdata>\n");
  CHECK(f.send("qXfer:osdata:read:unknown_entry:0,1000") == "l");
  CHECK(f.send("qXfer:features:read:target.xml:zz,10").starts_with("E"));
  CHECK(f.send("qXfer:siginfo:read::0,200").size() == 129);
  CHECK(f.send("qXfer:siginfo:write::4:\x07\x08") == "2");
  CHECK(f.target.siginfo_bytes[4] == 7);
  CHECK(f.send("qXfer:siginfo:write::200:\x07").starts_with("E"));
}

TEST_CASE("vFile host I/O", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("vFile:setfs:0") == "F0");
  CHECK(f.send("vFile:open:" + protocol::to_hex("just probing") + ",0,1c0") == "F-1,2");
  auto fd = f.send("vFile:open:" + protocol::to_hex("/fake/prog") + ",0,0");
  REQUIRE(fd == "F3");
  auto chunk = f.send("vFile:pread:3,10,0");
  CHECK(chunk.starts_with("F10;"));
  CHECK(f.send("vFile:pread:3,10,10000") == "F0;");
  CHECK(f.send("vFile:fstat:3").starts_with("F40;"));
  CHECK(f.send("vFile:close:3") == "F0");
  CHECK(f.send("vFile:close:3") == "F-1,9");
  CHECK(f.send("vFile:pread:7,10,0") == "F-1,9");
  CHECK(f.send("vFile:pread:-5,10,0").starts_with("E"));
  CHECK(f.send("vFile:open:zz,0,0").starts_with("E"));
}

TEST_CASE("detach, kill and monitor", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("D;99").starts_with("E"));
  CHECK(f.send("D") == "OK");
  CHECK(f.target.detached);
  CHECK(f.state.end_session);
  REQUIRE_FALSE(f.notices.empty());
  CHECK(f.notices.back() == "Detaching from process 100");

  HandlerFixture k;
  CHECK(k.reply("k").kind == server::Reply::Kind::None);
  CHECK(k.target.killed);

  HandlerFixture m;
  CHECK(m.send("qRcmd," + protocol::to_hex("help")) == "OK");
  CHECK_FALSE(m.cx.console.empty());
  CHECK(m.send("qRcmd," + protocol::to_hex("exit")) == "OK");
  CHECK(m.state.exit_server);
  CHECK(m.send("qRcmd,zz").starts_with("E"));
}

TEST_CASE("monitor: gdbserver's messages; unknown commands get the list and an error", "[handlers]") {
  HandlerFixture m;
  CHECK(m.send("qRcmd," + protocol::to_hex("set debug 1")) == "OK");
  CHECK(take_console(m) == "Debug output enabled.\n");
  CHECK(m.send("qRcmd," + protocol::to_hex("set debug 0")) == "OK");
  CHECK(take_console(m) == "Debug output disabled.\n");
  CHECK(m.send("qRcmd," + protocol::to_hex("set debug-format all")) == "OK");
  CHECK(take_console(m) == "All extra debug format options enabled.\n");
  CHECK(m.send("qRcmd," + protocol::to_hex("set debug-format none")) == "OK");
  CHECK(take_console(m) == "All extra debug format options disabled.\n");
  CHECK(m.send("qRcmd," + protocol::to_hex("set debug-format x")).starts_with("E"));
  CHECK(take_console(m).starts_with("Unknown debug-format argument: \"x\"\nThe following monitor commands"));
  CHECK(m.send("qRcmd,").starts_with("E"));
  CHECK(take_console(m).starts_with("Unknown monitor command.\n\nThe following monitor commands are supported:\n"));
  CHECK(m.send("qRcmd," + protocol::to_hex("set libthread-db-search-path /opt/lib")) == "OK");
  CHECK(take_console(m) == "libthread-db-search-path set to `/opt/lib'\n");
  CHECK(m.target.thread_db_search_path == "/opt/lib");
  CHECK(m.send("qRcmd," + protocol::to_hex("set libthread-db-search-path")) == "OK");
  CHECK(take_console(m) == "libthread-db-search-path set to `$sdir:$pdir'\n");
  CHECK(m.target.thread_db_search_path.empty());
}

TEST_CASE("qGetTLSAddr: the thread's address in hex; errors as E; bad packets malformed", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qGetTLSAddr:p64.64,10,7ffff7dd0000") == "70064010");
  CHECK(f.send("qGetTLSAddr:-1,8,0") == "70064008");  // any thread: the current one
  CHECK(f.send("qGetTLSAddr:64,8,bad").starts_with("E"));
  CHECK(f.send("qGetTLSAddr:64,8").starts_with("E"));
  CHECK(f.send("qGetTLSAddr:64,zz,0").starts_with("E"));
}

TEST_CASE("QCatchSyscalls: the list reaches the target; no process or a bad mode is an error", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("QCatchSyscalls:1;1;3b") == "OK");
  CHECK(f.target.catch_syscalls.enabled);
  CHECK(f.target.catch_syscalls.numbers == std::vector<int>{1, 0x3b});
  CHECK(f.send("QCatchSyscalls:1") == "OK");
  CHECK(f.target.catch_syscalls.numbers.empty());
  CHECK(f.send("QCatchSyscalls:0") == "OK");
  CHECK_FALSE(f.target.catch_syscalls.enabled);
  CHECK(f.send("QCatchSyscalls:2").starts_with("E"));
  f.target.alive = false;
  CHECK(f.send("QCatchSyscalls:1").starts_with("E"));
  CHECK(f.send("qSupported:multiprocess+").find("QCatchSyscalls+") != std::string::npos);
}

TEST_CASE("the next program's settings: environment, directory, randomization, shell; R", "[handlers]") {
  HandlerFixture f;
  f.target.alive = false;
  CHECK(f.send("!") == "OK");
  CHECK(f.send("QEnvironmentHexEncoded:" + protocol::to_hex("HS_A=1")) == "OK");
  CHECK(f.send("QEnvironmentHexEncoded:" + protocol::to_hex("HS_A=2")) == "OK");  // replaces
  CHECK(f.send("QEnvironmentHexEncoded:" + protocol::to_hex("no_equals")).starts_with("E"));
  CHECK(f.send("QEnvironmentHexEncoded:zz").starts_with("E"));
  CHECK(f.send("QEnvironmentUnset:" + protocol::to_hex("PATH")) == "OK");
  CHECK(f.send("QSetWorkingDir:" + protocol::to_hex("/tmp")) == "OK");
  CHECK(f.send("QDisableRandomization:0") == "OK");
  CHECK(f.send("QDisableRandomization:2").starts_with("E"));
  CHECK(f.send("QStartupWithShell:0") == "OK");
  CHECK(f.send("vRun;" + protocol::to_hex("/bin/prog")).starts_with("T05"));
  REQUIRE(f.target.last_launch);
  const auto& env = *f.target.last_launch->environment;
  CHECK(std::count(env.begin(), env.end(), "HS_A=2") == 1);
  CHECK(std::find(env.begin(), env.end(), "HS_A=1") == env.end());
  CHECK(std::none_of(env.begin(), env.end(), [](const std::string& e) { return e.starts_with("PATH="); }));
  CHECK(f.target.last_launch->working_dir == "/tmp");
  CHECK_FALSE(f.target.last_launch->disable_aslr);
  CHECK_FALSE(f.target.last_launch->startup_with_shell);

  CHECK(f.send("QEnvironmentReset") == "OK");
  CHECK(f.send("QSetWorkingDir:") == "OK");
  f.target.last_launch.reset();
  CHECK(f.reply("R00").kind == server::Reply::Kind::None);  // kill, start the last program again
  CHECK(f.target.killed);
  REQUIRE(f.target.last_launch);
  CHECK(f.target.last_launch->program == "/bin/prog");
  CHECK_FALSE(f.target.last_launch->environment);  // the server's own again
  CHECK(f.target.last_launch->working_dir.empty());

  HandlerFixture plain;  // not extended: R is not understood
  CHECK(plain.send("R00").empty());
}

TEST_CASE("extended mode: vRun and vAttach", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("!") == "OK");
  f.target.alive = false;
  CHECK(f.send("?") == "W00");
  CHECK(f.send("vRun;" + protocol::to_hex("/nonexistent")).starts_with("E"));
  auto reply = f.send("vRun;" + protocol::to_hex("/bin/true") + ";" + protocol::to_hex("arg"));
  CHECK(reply.starts_with("T05"));
  CHECK(f.server.last_program == std::vector<std::string>{"/bin/true", "arg"});
  CHECK(f.send("vRun;" + protocol::to_hex("/bin/true")).starts_with("E"));  // already running
  CHECK(f.send("vKill;64") == "OK");
  CHECK_FALSE(f.state.end_session);  // extended mode stays up
  CHECK(f.send("vAttach;1f4").starts_with("T00"));
  CHECK(f.target.the_pid == 500);
}

TEST_CASE("vFile:pread answers at most 16 KiB however much GDB asks for", "[handlers]") {
  HandlerFixture f;
  f.host.content.resize(0x10000, 0x41);
  REQUIRE(f.send("vFile:open:" + protocol::to_hex("/fake/prog") + ",0,0") == "F3");
  auto reply = f.send("vFile:pread:3,1ffe0,0");
  CHECK(reply.starts_with("F4000;"));
  auto next = f.send("vFile:pread:3,1ffe0,4000");
  CHECK(next.starts_with("F4000;"));
}

TEST_CASE("exec events are announced and reported only when GDB asks for them", "[handlers]") {
  HandlerFixture plain;
  CHECK(plain.send("qSupported:multiprocess+").find("exec-events+") == std::string::npos);
  HandlerFixture f;
  CHECK(f.send("qSupported:multiprocess+;exec-events+").find("exec-events+") != std::string::npos);
  tracer::StopEvent ev;
  ev.reason = tracer::StopReason::Exec;
  ev.pid = 100;
  ev.tid = 100;
  ev.signal = 5;
  ev.exec_path = "/bin/true";
  f.server.last_stop = ev;
  CHECK(f.send("?").starts_with("T05exec:" + protocol::to_hex("/bin/true") + ";"));
}

TEST_CASE("QThreadOptions: announced as gdbserver does (clone and exit: 3), each entry a rule for the "
          "target; a clone event names the new thread", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qSupported:multiprocess+;QThreadOptions+").find(";QThreadOptions=3") != std::string::npos);
  CHECK(f.send("QThreadOptions;0;3:p64.65") == "OK");
  REQUIRE(f.target.thread_options.size() == 2);
  const tracer::ThreadOptionsRule& all = f.target.thread_options[0];
  CHECK(all.pid == 0);
  CHECK(all.tid == tracer::kAllThreads);
  CHECK(all.options == tracer::ThreadOptions{});
  const tracer::ThreadOptionsRule& one = f.target.thread_options[1];
  CHECK(one.tid == 0x65);
  CHECK(one.options == tracer::ThreadOptions{.clone_events = true, .exit_events = true});
  CHECK(f.send("QThreadOptions;2:p64") == "OK");
  CHECK(f.target.thread_options.back().pid == 0x64);
  CHECK(f.target.thread_options.back().tid == tracer::kAllThreads);
  CHECK(f.target.thread_options.back().options == tracer::ThreadOptions{.exit_events = true});
  // An option this server does not know, or a malformed list: an error, nothing set.
  f.target.thread_options.clear();
  CHECK(f.send("QThreadOptions;4") == "E01");
  CHECK(f.send("QThreadOptions;3:pzz") == "E01");
  CHECK(f.send("QThreadOptions;") == "E01");
  CHECK(f.target.thread_options.empty());
  tracer::StopEvent clone{tracer::StopReason::Clone, 100, 101, 5};
  clone.child_tid = 0x66;
  f.server.last_stop = clone;
  CHECK(f.send("?").starts_with("T05clone:p64.66;"));
  // A target that cannot: neither announced nor served.
  HandlerFixture without;
  without.target.caps.thread_options = false;
  CHECK(without.send("qSupported:multiprocess+;QThreadOptions+").find("QThreadOptions") == std::string::npos);
  CHECK(without.send("QThreadOptions;3").empty());
}

TEST_CASE("x: memory as binary after a 'b' (binary-upload+), escaped; errors as m", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qSupported:multiprocess+").find(";binary-upload+") != std::string::npos);
  f.target.memory[0] = '}';  // escaped on the wire
  CHECK(f.send("x400000,4") == std::string("b}]\x07\x0e\x15", 6));
  CHECK(f.send("x400000,0") == "b");  // LLDB's probe x0,0 gets no OK: LLDB keeps to m
  CHECK(f.send("x40fffe,10").size() == 3);  // a short read: two bytes
  CHECK(f.send("x10,4") == "E0e");
  CHECK(f.send("xzz,4") == "E01");
  f.target.alive = false;
  CHECK(f.send("x400000,4") == "E01");
}

TEST_CASE("vFile:stat follows a link, vFile:lstat does not; a missing file is F-1,ENOENT", "[handlers]") {
  HandlerFixture f;
  const auto mode_of = [](const std::string& reply) {  // st_mode: bytes 8..11 of the struct, big-endian
    REQUIRE(reply.size() == 4 + 64);
    const auto* b = reinterpret_cast<const unsigned char*>(reply.data() + 4 + 8);
    return (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
  };
  CHECK(mode_of(f.send("vFile:stat:" + protocol::to_hex("/link"))) == 0100755);
  CHECK(mode_of(f.send("vFile:lstat:" + protocol::to_hex("/link"))) == 0120777);
  CHECK(mode_of(f.send("vFile:lstat:" + protocol::to_hex("/fake/prog"))) == 0100755);
  CHECK(f.send("vFile:stat:" + protocol::to_hex("/nope")) == "F-1,2");
  CHECK(f.send("vFile:lstat:zz").starts_with("E"));
}

TEST_CASE("qExecAndArgs: the program and its argument line, U when there is none", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qExecAndArgs") == "U");
  f.server.last_program = {"/bin/prog", "a b", "$HOME", ""};
  CHECK(f.send("qExecAndArgs") ==
        "S;" + protocol::to_hex("/bin/prog") + ";" + protocol::to_hex(R"(a\ b \$HOME '')") + ";");
  f.server.last_program = {"/bin/prog", "*.c $HOME"};
  f.server.last_args_are_line = true;
  CHECK(f.send("qExecAndArgs") == "S;" + protocol::to_hex("/bin/prog") + ";" + protocol::to_hex("*.c $HOME") + ";");
  f.server.last_program = {"/bin/prog"};
  CHECK(f.send("qExecAndArgs") == "S;" + protocol::to_hex("/bin/prog") + ";;");
}

TEST_CASE("single-inf-arg: when GDB offers it, vRun's one argument is a line the shell reads", "[handlers]") {
  HandlerFixture f;
  f.target.alive = false;
  CHECK(f.send("!") == "OK");
  CHECK(f.send("qSupported:multiprocess+").find("single-inf-arg+") == std::string::npos);  // only if offered
  CHECK(f.send("qSupported:multiprocess+;single-inf-arg+").find(";single-inf-arg+") != std::string::npos);
  CHECK(f.send("vRun;" + protocol::to_hex("/bin/prog") + ";" + protocol::to_hex("*.c 'a b'")).starts_with("T05"));
  REQUIRE(f.target.last_launch);
  CHECK(f.target.last_launch->args.empty());
  CHECK(f.target.last_launch->shell_line == std::optional<std::string>("*.c 'a b'"));
  CHECK(f.server.last_args_are_line);
  CHECK(f.send("vKill;64") == "OK");
  // Without the shell GDB's splitting applies: quotes group, nothing expands.
  CHECK(f.send("QStartupWithShell:0") == "OK");
  CHECK(f.send("vRun;;" + protocol::to_hex("*.c 'a b'")).starts_with("T05"));  // the last program
  CHECK(f.target.last_launch->program == "/bin/prog");
  CHECK(f.target.last_launch->args == std::vector<std::string>{"*.c", "a b"});
  CHECK_FALSE(f.target.last_launch->shell_line);
  CHECK(f.send("vKill;64") == "OK");
  CHECK(f.send("vRun;" + protocol::to_hex("/bin/prog") + ";" + protocol::to_hex("a") + ";" + protocol::to_hex("b")) ==
        "E01");  // more than one line
  // A GDB without it sends each argument on its own: quoted, as before.
  CHECK(f.send("qSupported:multiprocess+") != "");
  CHECK(f.send("QStartupWithShell:1") == "OK");
  CHECK(f.send("vRun;" + protocol::to_hex("/bin/prog") + ";" + protocol::to_hex("*.c")).starts_with("T05"));
  CHECK(f.target.last_launch->args == std::vector<std::string>{"*.c"});
  CHECK_FALSE(f.target.last_launch->shell_line);
}

TEST_CASE("qXfer:libraries-svr4 with start= and prev=: the entries GDB has not seen, in one namespace",
          "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qSupported:multiprocess+").find(";augmented-libraries-svr4-read+") != std::string::npos);
  const auto all = f.send("qXfer:libraries-svr4:read::0,1000");
  CHECK(all.find("main-lm=\"0x1000\"") != std::string::npos);
  CHECK(all.find("/lib/dlmopened.so") != std::string::npos);
  // After libc (0x2000), which follows the main program: libm only, no main-lm, not the other namespace.
  const auto added = f.send("qXfer:libraries-svr4:read:start=3000;prev=2000:0,1000");
  CHECK(added == "l<library-list-svr4 version=\"1.0\"><library name=\"/lib/libm.so.6\" lm=\"0x3000\" "
                 "l_addr=\"0x7e0000\" l_ld=\"0x7e1000\" lmid=\"0x0\"/></library-list-svr4>");
  CHECK(f.send("qXfer:libraries-svr4:read:start=2000;prev=1000;lmid=0:0,1000").find("/lib/libm.so.6") != std::string::npos);
  // A start that does not follow prev (the list changed), or that is unknown: an empty list.
  CHECK(f.send("qXfer:libraries-svr4:read:start=3000;prev=1000:0,1000") == "l<library-list-svr4 version=\"1.0\"></library-list-svr4>");
  CHECK(f.send("qXfer:libraries-svr4:read:start=5000;prev=3000:0,1000") == "l<library-list-svr4 version=\"1.0\"></library-list-svr4>");
  CHECK(f.send("qXfer:libraries-svr4:read:start=4000;prev=0:0,1000").find("/lib/dlmopened.so") != std::string::npos);
  CHECK(f.send("qXfer:libraries-svr4:read:start=zz:0,1000").starts_with("E"));
  CHECK(f.send("qXfer:libraries-svr4:read:other=1;start=3000;prev=2000:0,1000").find("/lib/libm.so.6") != std::string::npos);
}

TEST_CASE("monitor set debug for GDB 15 and later (error-message+): gdbserver 15's components and words",
          "[handlers]") {
  auto run = [](HandlerFixture& f, const std::string& command) { return f.send("qRcmd," + protocol::to_hex(command)); };
  HandlerFixture m;
  (void)m.send("qSupported:multiprocess+;error-message+");
  CHECK(run(m, "set debug 1") == "OK");
  CHECK(take_console(m) == "General debug output enabled.\n");
  CHECK(base::log_enabled(base::LogCat::ptrace));
  CHECK(run(m, "set debug remote on") == "OK");
  CHECK(take_console(m) == "Debug output for 'remote' enabled.\n");
  CHECK(base::log_enabled(base::LogCat::rsp));
  CHECK(run(m, "set debug off") == "OK");
  CHECK(take_console(m) == "All debug output disabled.\n");
  CHECK_FALSE(base::log_enabled(base::LogCat::rsp));
  CHECK_FALSE(base::log_enabled(base::LogCat::ptrace));
  CHECK(run(m, "set debug event-loop 1") == "OK");
  CHECK(take_console(m) == "Debug output for 'event-loop' enabled.\n");
  CHECK(run(m, "set debug all 0") == "OK");
  CHECK(take_console(m) == "Debug output for 'all' disabled.\n");
  CHECK(run(m, "set debug yeah").starts_with("E"));
  CHECK(take_console(m).starts_with("Missing value for 'set debug yeah' command.\nThe following monitor commands are supported:\n"
                            "  set debug on\n"));
  CHECK(run(m, "set debug on sometimes").starts_with("E"));
  CHECK(take_console(m).starts_with("Junk 'sometimes' found at end of 'set debug on' command.\n"));
  CHECK(run(m, "set debug all yeah").starts_with("E"));
  CHECK(take_console(m).starts_with("Invalid value 'yeah' for 'set debug all'.\n"));
  CHECK(run(m, "set debug all on sometimes").starts_with("E"));
  CHECK(take_console(m).starts_with("Junk 'sometimes' found at end of 'set debug all on' command.\n"));
  CHECK(run(m, "set debug -all on").starts_with("E"));
  CHECK(take_console(m).starts_with("Invalid character found in debug component name.\n"));
  CHECK(run(m, "set debug frobs on").starts_with("E"));
  CHECK(take_console(m).starts_with("Error: unknown debug option 'frobs'\n"));
  CHECK(run(m, "help") == "OK");
  CHECK(take_console(m).find("one of: all, threads, remote, event-loop.") != std::string::npos);
  // A GDB 13 in the next session gets gdbserver 13's words again.
  HandlerFixture old;
  (void)old.send("qSupported:multiprocess+");
  CHECK(run(old, "set debug 1") == "OK");
  CHECK(take_console(old) == "Debug output enabled.\n");
  CHECK(run(old, "set debug 0") == "OK");
}

TEST_CASE("QAllow: what GDB forbids (observer mode) is refused until GDB allows it again", "[handlers]") {
  HandlerFixture f;
  CHECK(f.send("qSupported:multiprocess+").find(";QAllow+") != std::string::npos);
  CHECK(f.send("QAllow:WriteReg:0;WriteMem:0;InsertBreak:0;InsertTrace:0;InsertFastTrace:0;Stop:0") == "OK");
  const std::uint8_t before = f.target.memory[1];
  CHECK(f.send("M400000,2:aabb") == "E01");
  CHECK(f.send("X400000,1:a") == "E01");
  CHECK(f.target.memory[1] == before);
  CHECK(f.send("P0=0100000000000000") == "E01");
  CHECK(f.send("Z0,401000,1") == "E01");
  CHECK(f.target.breakpoints.empty());
  CHECK(f.send("QTDP:1:401000:E:0:0") == "E01");
  CHECK(f.send("vCtrlC") == "E01");
  CHECK(f.target.interrupts == 0);
  // Reading stays allowed, and removing what is there.
  CHECK(f.send("m400000,4") == "00070e15");
  CHECK(f.send("z0,401000,1") == "OK");
  // Tracepoints again, but not fast ones.
  CHECK(f.send("QAllow:InsertTrace:1") == "OK");
  CHECK(f.send("QTinit") == "OK");
  CHECK(f.send("QTDP:1:401000:E:0:0") == "OK");
  CHECK(f.send("QTDP:2:401010:E:0:0:F5") == "E01");
  CHECK(f.send("QAllow:WriteMem:1;InsertBreak:1;Stop:1") == "OK");
  CHECK(f.send("M400000,2:aabb") == "OK");
  CHECK(f.send("Z0,401000,1") == "OK");
  CHECK(f.send("QAllow:WriteMem") == "E01");  // malformed
}
