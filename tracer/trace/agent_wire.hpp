// What the server and the in-process agent (libhindsight-agent.so, fast tracepoints) share: the
// agent's control block, found by its symbol in the program's memory; the tracepoints the
// server writes for it; and the frames it leaves in its ring for the server to take. Both
// sides are this machine's x86-64, so the block is a plain struct. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tracer/trace/experiment.hpp"

namespace tracer::trace {

inline constexpr const char* kAgentLibrary = "libhindsight-agent.so";
inline constexpr const char* kAgentSymbol = "hindsight_agent";
inline constexpr std::uint64_t kAgentMagic = 0x746e656741534448;  // "HDSAgent"
inline constexpr std::uint32_t kAgentVersion = 1;

inline constexpr std::uint32_t kAgentXsaveopt = 1;

// Why the agent ended a run itself.
enum class AgentEnd : std::uint32_t { None = 0, PassCount = 1, Error = 2 };

struct AgentControl {
  std::uint64_t magic = kAgentMagic;
  std::uint32_t version = kAgentVersion;
  std::uint32_t collecting = 0;     // server: 1 while a run collects; agent: 0 when it ends one
  std::uint64_t collector = 0;      // the function a jump pad calls (arch/x86/jump_pad.hpp)
  std::uint64_t notify = 0;         // a function the agent calls for the server: an int3 there
  std::uint64_t pads = 0;           // executable area for jump pads, near the program
  std::uint64_t pads_size = 0;
  std::uint64_t definitions = 0;    // where the server writes the tracepoints
  std::uint64_t definitions_size = 0;
  std::uint64_t generation = 0;     // server: bumped after writing them
  std::uint64_t ring = 0;           // frames: records, never split by the ring's end
  std::uint64_t ring_size = 0;
  std::uint64_t head = 0;           // agent: bytes written (ever)
  std::uint64_t tail = 0;           // server: bytes taken (ever)
  std::uint64_t lost = 0;           // agent: hits not collected (ring full with no one taking)
  std::uint32_t save_area = 0;      // XSAVE area bytes (0: FXSAVE)
  std::uint32_t flags = 0;          // kAgentXsaveopt: the CPU has XSAVEOPT
  std::uint64_t save_mask = 0;      // components a pad saves
  std::uint32_t ended_by = 0;       // AgentEnd
  std::uint32_t ended_tracepoint = 0;
  char error[128] = {};
};
static_assert(sizeof(AgentControl) == 264);

// --- tracepoints, server to agent ---
// Each one's index in the list is what its jump pad passes to the collector.
Bytes encode_agent_tracepoints(const std::vector<const Tracepoint*>& tracepoints);
Result<std::vector<Tracepoint>> decode_agent_tracepoints(std::span<const std::uint8_t> bytes);

// --- frames, agent to server ---
// A record: u32 length (all of it, a multiple of 8), u32 index; u64 pc; u32 register words
// (0 or 27, user_regs_struct's), u32 save bytes (XSAVE area); u32 the definitions' generation
// it was collected under, u32 0; the words; the save area padded to 8; then memory blocks, each u64 address, u32 length, u32 0, the bytes padded to 8. A
// record of index kRingSkip fills the ring's end (the next starts at its beginning). A record
// takes half the ring at most, so that an empty ring takes any.
inline constexpr std::uint32_t kRingSkip = 0xffffffff;
inline constexpr std::size_t kRecordHeader = 32;
inline constexpr std::size_t kGprWords = 27;

struct AgentRecord {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  Addr pc = 0;
  std::vector<std::uint64_t> gpr = {};  // empty: registers not collected
  Bytes save_area = {};
  std::vector<MemoryBlock> memory = {};
};

constexpr std::size_t padded8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }
// Bytes a record of these parts takes.
std::size_t record_size(bool registers, std::size_t save_bytes, std::span<const std::size_t> block_lengths);
// Writes rec at out (exactly record_size bytes).
void write_record(const AgentRecord& rec, std::span<std::uint8_t> out);
// The records in the ring's bytes [tail, head) (offsets modulo the ring's size); an error for
// a record that is not well formed.
Result<std::vector<AgentRecord>> read_records(std::span<const std::uint8_t> ring, std::uint64_t tail,
                                              std::uint64_t head);

}  // namespace tracer::trace
