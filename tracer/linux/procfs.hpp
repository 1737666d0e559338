// Small readers of /proc files about the inferior.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/x86/isa.hpp"
#include "base/result.hpp"
#include "tracer/btrace/scope.hpp"
#include "tracer/types.hpp"

namespace tracer::procfs {

// The whole file (binary safe); /proc files report size 0, so read to EOF.
base::Result<Bytes> read_file(const std::string& path);
// Thread ids listed in /proc/PID/task.
std::vector<Tid> task_ids(Pid pid);
// /proc/PID/task/TID/comm without the newline; empty when unreadable.
std::string thread_name(Pid pid, Tid tid);
struct TaskStat {
  std::string name;  // field 2, comm: the thread's name, as /proc/.../comm has it
  char state = '?';  // field 3
  Pid parent = 0;    // field 4, ppid
  int core = -1;     // field 39, "processor"
};
// Parses the text of /proc/.../stat (the comm field may contain spaces and parentheses).
std::optional<TaskStat> parse_stat(const std::string& text);
std::optional<TaskStat> task_stat(Pid pid, Tid tid);
// pid is a process below ancestor (its child, grandchild, ...): not one that took the pid of a
// descendant gone meanwhile.
bool descends_from(Pid pid, Pid ancestor);
// /proc/PID/exe: the file the process runs; empty when unreadable.
std::string executable(Pid pid);
// The instruction set of the program it runs, from /proc/PID/exe's ELF header (as gdbserver
// decides); Amd64 when unreadable.
arch::x86::Isa executable_isa(Pid pid);
// The instruction set of an executable file; nothing when it is not readable ELF.
std::optional<arch::x86::Isa> file_isa(const std::string& path);
// Its argv, from /proc/PID/cmdline (empty when it is gone, or a zombie).
std::vector<std::string> command_line(Pid pid);
// The line of /proc/PID/maps that maps addr: its range and file (empty: anonymous).
base::Result<MappedObject> mapping_at(Pid pid, Addr addr);
// Every line of /proc/PID/maps text; and of the live file (empty when unreadable).
std::vector<MappedObject> parse_maps(std::string_view maps);
std::vector<MappedObject> mappings(Pid pid);
// Parses /proc/PID/maps text for the mapping holding addr.
std::optional<MappedObject> find_mapping(std::string_view maps, Addr addr);
// The thread group (process) a task belongs to, from the Tgid line of /proc/TID/status.
std::optional<Pid> thread_group_of(Tid tid);
// Who ptraces tid (TracerPid of /proc/TID/status); 0: nobody, or it is gone.
Pid tracer_pid(Tid tid);
// The thread's seccomp mode (/proc/TID/status Seccomp:): 0 none, 1 strict, 2 filter.
int seccomp_mode(Tid tid);
// The bytes of address space pid may still map under its RLIMIT_AS (prlimit, /proc/PID/status
// VmSize); nothing when it has no limit (or it cannot be read).
std::optional<std::uint64_t> address_space_room(Pid pid);
// What the process of tid does with sig, from SigCgt and SigIgn in /proc/TID/status.
SignalAction signal_action(Tid tid, int sig);

}  // namespace tracer::procfs
