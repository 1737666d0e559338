// Typed requests and their pure parsers, one per packet family. Each parser takes the body
// after the packet's name (as routed by server/dispatch) and never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/hex.hpp"
#include "protocol/thread_id.hpp"

namespace protocol {

// qSupported[:feat;feat...] -> the features GDB announced ("multiprocess+", "xmlRegisters=i386").
Result<std::vector<std::string>> parse_qsupported(std::string_view body);

// H<op><thread-id>: "gp1.2" -> {'g', p1.2}. op is 'g' or 'c'.
struct SetThread { char op = 'g'; ThreadId thread; };
Result<SetThread> parse_set_thread(std::string_view body);

// qGetTLSAddr:THREAD-ID,OFFSET,LM (body after the colon).
struct TlsAddressQuery { ThreadId thread; std::uint64_t offset = 0; std::uint64_t link_map = 0; };
Result<TlsAddressQuery> parse_tls_address(std::string_view body);

// mADDR,LEN
struct ReadMem { std::uint64_t addr = 0; std::uint64_t len = 0; };
Result<ReadMem> parse_read_mem(std::string_view body);

// MADDR,LEN:HEX and XADDR,LEN:BINARY (escaped). LEN must match the data.
struct WriteMem { std::uint64_t addr = 0; Bytes data; };
Result<WriteMem> parse_write_mem_hex(std::string_view body);
Result<WriteMem> parse_write_mem_binary(std::string_view body);

// pNN
Result<int> parse_read_reg(std::string_view body);
// PNN=HEX
struct WriteReg { int regno = 0; Bytes value; };
Result<WriteReg> parse_write_reg(std::string_view body);

// Z/z TYPE,ADDR,KIND[;X LEN,BYTECODE...][;cmds:PERSIST,X LEN,BYTECODE...]. type 0..4. The
// conditions (agent expressions, raw bytes) GDB wants evaluated on the target, any one true to
// stop; the commands to run on the target at a hit instead of stopping (agent-style dprintf),
// persist if GDB wants them kept after it disconnects.
struct BreakpointReq {
  int type = 0;
  std::uint64_t addr = 0;
  int kind = 0;
  std::vector<Bytes> conditions{};
  std::vector<Bytes> commands{};
  bool persist = false;
};
Result<BreakpointReq> parse_breakpoint(std::string_view body);

// vCont;ACTION[:TID]... (body starts at the first ';'). Actions c C s S t r.
struct VContAction {
  char action = 'c';          // 'c', 's', 't', 'r' (C and S become c/s with a signal)
  int gdb_signal = 0;         // for C and S
  std::uint64_t range_start = 0, range_end = 0;  // for r
  std::optional<ThreadId> thread;                // none: the default action
};
Result<std::vector<VContAction>> parse_vcont(std::string_view body);
// vCont?: the reply naming the actions parse_vcont takes ("vCont;c;C;s;S;t;r").
std::string vcont_supported_reply();

// c[ADDR], s[ADDR] (legacy; sig = 0) and CSIG[;ADDR], SSIG[;ADDR].
struct LegacyResume { int gdb_signal = 0; std::optional<std::uint64_t> addr{}; };
Result<LegacyResume> parse_legacy_resume(std::string_view body, bool with_signal);

// qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH (body after "qXfer:").
struct XferRead { std::string object; std::string annex; std::uint64_t offset = 0; std::uint64_t length = 0; };
Result<XferRead> parse_xfer_read(std::string_view body);
// The annex of an incremental qXfer:libraries-svr4:read (augmented-libraries-svr4-read):
// "start=HEX;prev=HEX;lmid=HEX", any of them; unknown names are skipped, as gdbserver does.
struct Svr4Annex { std::uint64_t start = 0; std::uint64_t prev = 0; std::uint64_t lmid = 0; };
Result<Svr4Annex> parse_svr4_annex(std::string_view annex);
// qXfer:OBJECT:write:ANNEX:OFFSET:DATA (escaped binary).
struct XferWrite { std::string object; std::string annex; std::uint64_t offset = 0; Bytes data; };
Result<XferWrite> parse_xfer_write(std::string_view body);

// QPassSignals:/QProgramSignals: "e;10;14;" -> GDB signal numbers (empty list allowed).
Result<std::vector<int>> parse_signal_list(std::string_view body);

// QAllow:OP:VAL;OP:VAL... (GDB's observer mode, `set may-write-memory off` and the like):
// what the target may do for GDB. An op not named keeps its setting; unknown ops are ignored.
struct Permissions {
  bool write_registers = true;          // WriteReg
  bool write_memory = true;             // WriteMem
  bool insert_breakpoints = true;       // InsertBreak
  bool insert_tracepoints = true;       // InsertTrace
  bool insert_fast_tracepoints = true;  // InsertFastTrace
  bool stop = true;                     // Stop (interrupting the program)
};
struct PermissionChange {
  std::string op;
  bool allowed = true;
};
Result<std::vector<PermissionChange>> parse_qallow(std::string_view body);
// Applies changes to permissions (unknown ops left alone).
void apply_permissions(const std::vector<PermissionChange>& changes, Permissions& permissions);

// QCatchSyscalls:0 (off), QCatchSyscalls:1 (any syscall), QCatchSyscalls:1;NR;NR... (those).
struct CatchSyscalls { bool enabled = false; std::vector<int> numbers; };
Result<CatchSyscalls> parse_catch_syscalls(std::string_view body);

// QThreadOptions;OPTIONS[:THREAD][;OPTIONS[:THREAD]]... (the body after "QThreadOptions;"):
// a hex mask of options for the threads one entry names (none: every thread). A thread takes
// the options of the last entry naming it; threads no entry names keep theirs.
struct ThreadOptionsEntry { std::uint32_t options = 0; std::optional<ThreadId> thread; };
Result<std::vector<ThreadOptionsEntry>> parse_thread_options(std::string_view body);

// vRun;HEXPROG[;HEXARG]... -> program then args (program may be empty: rerun).
Result<std::vector<std::string>> parse_vrun(std::string_view body);
// vAttach;PID, vKill;PID, D;PID, qAttached:PID: a hex pid after one separator char;
// empty body gives nullopt.
Result<std::optional<std::int64_t>> parse_optional_pid(std::string_view body);

// qRcmd,HEX -> the monitor command text.
Result<std::string> parse_qrcmd(std::string_view body);

// vFile:open:HEXPATH,FLAGS,MODE
struct VFileOpen { std::string path; int gdb_flags = 0; int mode = 0; };
Result<VFileOpen> parse_vfile_open(std::string_view body);
// vFile:pread:FD,COUNT,OFFSET
struct VFilePread { int fd = 0; std::uint64_t count = 0; std::uint64_t offset = 0; };
Result<VFilePread> parse_vfile_pread(std::string_view body);
// vFile:pwrite:FD,OFFSET,DATA
struct VFilePwrite { int fd = 0; std::uint64_t offset = 0; Bytes data; };
Result<VFilePwrite> parse_vfile_pwrite(std::string_view body);
// vFile:close:FD, vFile:fstat:FD, vFile:setfs:PID -> the number
Result<std::int64_t> parse_vfile_number(std::string_view body);
// vFile:unlink:HEXPATH, vFile:readlink:HEXPATH -> the path
Result<std::string> parse_vfile_path(std::string_view body);

}  // namespace protocol
