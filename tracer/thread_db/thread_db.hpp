// Thread-local storage addresses found the way gdbserver finds them: glibc's own
// libthread_db, loaded from a search path, with us serving its proc_service callbacks
// (ps_callbacks.cpp). libthread_db knows glibc's private layouts (struct pthread, the DTV,
// link_map's l_tls_modid); we only read memory, registers and symbols for it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "arch/x86/register_layout.hpp"
#include "base/result.hpp"
#include "tracer/types.hpp"

struct ps_prochandle;  // ours, opaque to libthread_db (ps_prochandle.hpp)

namespace tracer {

// What libthread_db may ask of one stopped process.
class ThreadDbHost {
 public:
  using Gprs = std::array<std::uint64_t, arch::x86::kGprWords>;  // user_regs_struct order

  virtual ~ThreadDbHost() = default;
  virtual Pid pid() const = 0;
  virtual bool read(Addr addr, void* out, std::size_t len) = 0;
  virtual bool write(Addr addr, const void* data, std::size_t len) = 0;
  virtual base::Result<Gprs> registers(Tid lwp) = 0;
  // ps_get_thread_area: the thread pointer libthread_db asks for by `index`. A 64-bit program
  // names the user_regs_struct word of fs or gs (FS, GS of sys/reg.h); an i386 program a GDT
  // entry (its gs selector >> 3).
  virtual base::Result<Addr> thread_area(Tid lwp, int index) = 0;
  // Where a global symbol is at run time; `object` is the library libthread_db expects it in
  // (libc.so.6, ld-linux-x86-64.so.2), a hint only: a static program holds everything.
  virtual std::optional<Addr> symbol(std::string_view object, std::string_view name) = 0;
};

// gdbserver's default: the system's search, then the directory the program's libc came from.
inline constexpr std::string_view kDefaultThreadDbSearchPath = "$sdir:$pdir";

class ThreadDb {
 public:
  // The first libthread_db.so.1 along search_path (colon-separated directories; "$sdir": the
  // dynamic linker's own search; "$pdir": libc_dir) that accepts the process. Errors say why
  // none did (not found, no threads library in the program, version mismatch).
  static base::Result<std::unique_ptr<ThreadDb>> load(ThreadDbHost& host, std::string_view search_path,
                                                      const std::string& libc_dir);
  ~ThreadDb();
  ThreadDb(const ThreadDb&) = delete;
  ThreadDb& operator=(const ThreadDb&) = delete;

  // The address of the thread-local variable at `offset` in the block of the module whose
  // link_map is at link_map (0: the program itself, as for a static executable).
  base::Result<Addr> tls_address(Tid lwp, Addr link_map, Addr offset);
  // The file that was loaded.
  const std::string& library() const { return library_; }

 private:
  struct Api;
  ThreadDb() = default;

  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;  // dlopen
  void* agent_ = nullptr;   // td_thragent_t*
  std::unique_ptr<::ps_prochandle> ph_;
  std::string library_;
};

}  // namespace tracer
