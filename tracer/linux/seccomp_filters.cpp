#include "tracer/linux/seccomp_filters.hpp"

#include <sys/ptrace.h>

#include <cerrno>
#include <cstring>

namespace tracer {
namespace {

constexpr std::size_t kMaxFilters = 64;

// The action part as the kernel compares it: as a signed value, the lowest wins.
std::int32_t action_of(std::uint32_t verdict) {
  return static_cast<std::int32_t>(verdict & SECCOMP_RET_ACTION_FULL);
}

}  // namespace

base::Result<std::vector<SeccompProgram>> read_seccomp_filters(Tid tid) {
  std::vector<SeccompProgram> filters;
  for (unsigned long index = 0; index < kMaxFilters; ++index) {
    const long count = ::ptrace(PTRACE_SECCOMP_GET_FILTER, tid, index, nullptr);
    if (count < 0) {
      if (errno == ENOENT && index > 0) {
        break;  // (past the oldest)
      }
      return base::sys_error("PTRACE_SECCOMP_GET_FILTER");
    }
    SeccompProgram program(static_cast<std::size_t>(count));
    if (::ptrace(PTRACE_SECCOMP_GET_FILTER, tid, index, program.data()) != count) {
      return base::sys_error("PTRACE_SECCOMP_GET_FILTER");
    }
    filters.push_back(std::move(program));
  }
  return filters;
}

std::uint32_t run_seccomp_filter(const SeccompProgram& program, const seccomp_data& data) {
  std::uint32_t a = 0, x = 0, scratch[BPF_MEMWORDS] = {};
  auto word_at = [&](std::uint32_t k, std::uint32_t& out) {
    if (k % 4 != 0 || k + 4 > sizeof data) {
      return false;
    }
    std::memcpy(&out, reinterpret_cast<const std::uint8_t*>(&data) + k, 4);
    return true;
  };
  constexpr std::uint32_t kMalformed = SECCOMP_RET_KILL_PROCESS;  // (what the kernel never installs)
  for (std::size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& f = program[pc];
    const std::uint32_t k = f.k;
    const std::uint32_t operand = BPF_SRC(f.code) == BPF_X ? x : k;
    switch (BPF_CLASS(f.code)) {
      case BPF_LD:
      case BPF_LDX: {
        std::uint32_t& to = BPF_CLASS(f.code) == BPF_LD ? a : x;
        switch (BPF_MODE(f.code)) {
          case BPF_ABS:
            if (BPF_SIZE(f.code) != BPF_W || !word_at(k, to)) {
              return kMalformed;
            }
            break;
          case BPF_LEN: to = sizeof data; break;
          case BPF_IMM: to = k; break;
          case BPF_MEM:
            if (k >= BPF_MEMWORDS) {
              return kMalformed;
            }
            to = scratch[k];
            break;
          default: return kMalformed;
        }
        break;
      }
      case BPF_ST:
      case BPF_STX:
        if (k >= BPF_MEMWORDS) {
          return kMalformed;
        }
        scratch[k] = BPF_CLASS(f.code) == BPF_ST ? a : x;
        break;
      case BPF_ALU:
        switch (BPF_OP(f.code)) {
          case BPF_ADD: a += operand; break;
          case BPF_SUB: a -= operand; break;
          case BPF_MUL: a *= operand; break;
          case BPF_DIV: a = operand == 0 ? 0 : a / operand; break;
          case BPF_MOD: a = operand == 0 ? 0 : a % operand; break;
          case BPF_OR: a |= operand; break;
          case BPF_AND: a &= operand; break;
          case BPF_XOR: a ^= operand; break;
          case BPF_LSH: a = operand >= 32 ? 0 : a << operand; break;
          case BPF_RSH: a = operand >= 32 ? 0 : a >> operand; break;
          case BPF_NEG: a = 0u - a; break;
          default: return kMalformed;
        }
        break;
      case BPF_JMP: {
        if (BPF_OP(f.code) == BPF_JA) {
          pc += k;
          break;
        }
        bool taken = false;
        switch (BPF_OP(f.code)) {
          case BPF_JEQ: taken = a == operand; break;
          case BPF_JGT: taken = a > operand; break;
          case BPF_JGE: taken = a >= operand; break;
          case BPF_JSET: taken = (a & operand) != 0; break;
          default: return kMalformed;
        }
        pc += taken ? f.jt : f.jf;
        break;
      }
      case BPF_RET: return BPF_RVAL(f.code) == BPF_A ? a : k;
      case BPF_MISC:
        if (BPF_MISCOP(f.code) == BPF_TAX) {
          x = a;
        } else {
          a = x;
        }
        break;
      default: return kMalformed;
    }
  }
  return kMalformed;  // (ran off its end)
}

std::uint32_t seccomp_verdict(const std::vector<SeccompProgram>& filters, const seccomp_data& data) {
  std::uint32_t verdict = SECCOMP_RET_ALLOW;
  for (const auto& program : filters) {
    const std::uint32_t v = run_seccomp_filter(program, data);
    if (action_of(v) < action_of(verdict)) {
      verdict = v;
    }
  }
  return verdict;
}

bool seccomp_verdict_harms(std::uint32_t verdict) {
  const auto action = verdict & SECCOMP_RET_ACTION_FULL;
  return action == SECCOMP_RET_KILL_PROCESS || action == SECCOMP_RET_KILL_THREAD || action == SECCOMP_RET_TRAP;
}

}  // namespace tracer
