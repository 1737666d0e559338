#include "server/triage/collect.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <string_view>

#include "arch/x86/register_layout.hpp"
#include "server/triage/mapped_files.hpp"
#include "server/triage/own_code.hpp"
#include "tracer/symbols/cfi_unwinder.hpp"
#include "tracer/symbols/unwinder.hpp"

namespace server::triage {
namespace {

const std::set<std::string_view> kSegmentRegisters = {"cs", "ss", "ds", "es", "fs", "gs"};
constexpr std::size_t kLongestInstruction = 15;  // bytes an x86 instruction may span

// The general registers of GDB's core feature (rax ... gs, or eax ... gs for an i386 program),
// by name, from `g` in that instruction set's layout. segments: whether cs ... gs are the
// thread's (not so under the dbt recorder: left out).
std::vector<std::pair<std::string, std::uint64_t>> named_registers(const tracer::Bytes& g, bool segments,
                                                                   arch::x86::Isa isa) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  // Core registers come first whatever the XSAVE geometry: any one does.
  static const arch::x86::RegisterLayout amd64(arch::x86::reference_geometry(), arch::x86::Isa::Amd64);
  static const arch::x86::RegisterLayout i386(arch::x86::reference_geometry(), arch::x86::Isa::I386);
  for (const auto& r : (isa == arch::x86::Isa::I386 ? i386 : amd64).registers()) {
    if (r.feature != arch::x86::Feature::Core || r.storage != arch::x86::Storage::Gpr ||
        r.g_offset + r.size > g.size()) {
      continue;
    }
    if (!segments && kSegmentRegisters.contains(std::string_view(r.name))) {
      continue;
    }
    std::uint64_t value = 0;
    std::memcpy(&value, g.data() + r.g_offset, r.size);
    out.emplace_back(std::string(r.name), value);
  }
  return out;
}

// The frames as GDB would show them: inlined calls and tail calls put back.
std::vector<FrameReport> backtrace(tracer::Symbolizer& symbols, const std::vector<tracer::StackFrame>& frames) {
  std::vector<FrameReport> out;
  tracer::Addr callee_entry = 0;  // the function of the frame above
  for (const auto& frame : frames) {
    if (frame.return_address) {
      // Functions that jumped to the one above left no return address: put them back.
      for (const auto& f : symbols.tail_calls(callee_entry, frame.pc)) {
        out.push_back(FrameReport{f.pc, f.where, f.inlined, false, f.tail_call});
      }
    }
    for (const auto& f : symbols.frames(frame.pc, frame.return_address)) {
      out.push_back(FrameReport{frame.pc, f.where, f.inlined, frame.signal_frame && !f.inlined});
    }
    callee_entry = frame.signal_frame ? 0 : symbols.locate(frame.return_address ? frame.pc - 1 : frame.pc).function_start;
  }
  return out;
}

// isa: how its code decodes; pc: where the thread stands (0: unknown, it is gone).
void add_history(tracer::BranchTracer* tracer, tracer::MemoryCache& memory, tracer::Symbolizer& symbols,
                 arch::x86::Isa isa, std::uint64_t pc, std::size_t entries, std::uint64_t stopped_ns,
                 ThreadReport& thread) {
  if (tracer == nullptr) {
    thread.history_problem = "this thread was not recorded";
    return;
  }
  auto data = tracer->timed_history(pc, stopped_ns);
  if (!data) {
    thread.history_problem = data.error().message();
    return;
  }
  if (pc == 0 && !data->blocks.empty()) {
    // Where the thread went after its last branch is not known: the newest block is its
    // first instruction only.
    data->blocks.front().end = data->blocks.front().begin;
  }
  const tracer::BtraceStats stats = tracer->stats();
  thread.branches_recorded = stats.recorded;
  thread.branches_kept = stats.kept;
  auto classify = [&](tracer::Addr at) {
    return tracer::classify_transfer(memory.read_prefix(at, kLongestInstruction), isa);
  };
  auto locate = [&](tracer::Addr at) -> const tracer::SourceLocation& { return symbols.locate(at); };
  thread.history = tracer::fold_calls(data->blocks, classify, locate, entries, data->began_ns);
}

}  // namespace

std::vector<ThreadReport> collect_threads(tracer::Target& target, tracer::Pid pid, tracer::Tid stopped_tid,
                                          bool got_signal, std::size_t history_entries, std::uint64_t stopped_ns) {
  std::vector<ThreadReport> out;
  auto symbols = tracer::Symbolizer::for_process(pid);
  tracer::MemoryCache memory(target);
  std::vector<tracer::ThreadInfo> threads = target.threads();
  std::stable_partition(threads.begin(), threads.end(), [&](const auto& t) { return t.tid == stopped_tid; });
  for (const auto& info : threads) {
    if (info.pid != pid && target.process_of(info.tid) != pid) {
      continue;
    }
    ThreadReport thread;
    thread.tid = info.tid;
    thread.name = info.name;
    thread.got_signal = got_signal && info.tid == stopped_tid;
    auto g = target.read_registers(info.tid);
    if (!g) {
      thread.history_problem = "its registers cannot be read: " + g.error().message();
      out.push_back(std::move(thread));
      continue;
    }
    const arch::x86::Isa isa = target.isa(info.tid);
    thread.registers = named_registers(*g, target.capabilities().segment_registers, isa);
    const std::uint64_t pc = target.read_pc(info.tid).value_or(0);
    if (symbols) {
      // libunwind (x86-64 frames only, as Debian builds it), libdw's CFI for 32-bit ones.
      thread.backtrace = backtrace(**symbols, isa == arch::x86::Isa::I386
                                                  ? tracer::unwind_stack_i386(memory, pid, info.tid, *g)
                                                  : tracer::unwind_stack(memory, **symbols, *g));
      add_history(target.branch_tracer(info.tid), memory, **symbols, isa, pc, history_entries, stopped_ns, thread);
    } else {
      thread.history_problem = "no symbols: " + symbols.error().message();
    }
    out.push_back(std::move(thread));
  }
  return out;
}

std::vector<ThreadReport> collect_ended_threads(tracer::Target& target, tracer::Pid pid, const std::string& maps,
                                                std::size_t history_entries, std::uint64_t ended_ns) {
  std::vector<ThreadReport> out;
  auto symbols = tracer::Symbolizer::for_maps(maps);
  const MappedFiles files(maps);
  tracer::MemoryCache memory([&files](tracer::Addr addr, std::size_t len) { return files.read(addr, len); });
  for (const auto& [tid, tracer] : target.ended_histories(pid)) {
    ThreadReport thread;
    thread.tid = tid;
    thread.ended = true;
    if (symbols) {
      add_history(tracer, memory, **symbols, files.isa(), 0, history_entries, ended_ns, thread);
    } else {
      thread.history_problem = "no symbols: " + symbols.error().message();
    }
    out.push_back(std::move(thread));
  }
  // The leader first, then by thread id.
  std::stable_partition(out.begin(), out.end(), [&](const ThreadReport& t) { return t.tid == pid; });
  return out;
}

SourceExcerpt source_excerpt(const std::string& file, int line, int radius) {
  SourceExcerpt ex;
  std::ifstream in(file);
  if (!in || line <= 0) {
    return ex;
  }
  ex.file = file;
  ex.first_line = std::max(1, line - radius);
  ex.marked_line = line;
  std::string text;
  for (int n = 1; n <= line + radius && std::getline(in, text); ++n) {
    if (n >= ex.first_line) {
      ex.lines.push_back(text);
    }
  }
  if (static_cast<int>(ex.lines.size()) < line - ex.first_line + 1) {
    return SourceExcerpt{};  // the file is shorter than the debug info says: not this source
  }
  return ex;
}

std::vector<SourceExcerpt> collect_sources(const ThreadReport& stopped, std::size_t count) {
  std::vector<SourceExcerpt> out;
  // The program's own frames first (the first is where the report points), then the others.
  std::vector<const FrameReport*> frames;
  for (const bool own : {true, false}) {
    for (const auto& frame : stopped.backtrace) {
      if (runtime_frame(frame) != own) {
        frames.push_back(&frame);
      }
    }
  }
  for (const FrameReport* f : frames) {
    const FrameReport& frame = *f;
    if (out.size() >= count) {
      break;
    }
    if (frame.where.file.empty()) {
      continue;
    }
    if (auto ex = source_excerpt(frame.where.file, frame.where.line, 3); !ex.lines.empty()) {
      ex.function = frame.where.function;
      out.push_back(std::move(ex));
    }
  }
  return out;
}

}  // namespace server::triage
