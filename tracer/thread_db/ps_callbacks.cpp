// The proc_service functions libthread_db calls (proc_service.h). They must be visible to the
// dynamic linker when libthread_db is loaded: ps_symbols.list exports them from the program.
#include <proc_service.h>

#include <algorithm>
#include <cstring>

#include "tracer/thread_db/ps_prochandle.hpp"

extern "C" {

ps_err_e ps_pdread(ps_prochandle* ph, psaddr_t addr, void* out, size_t len) {
  return ph->host->read(reinterpret_cast<tracer::Addr>(addr), out, len) ? PS_OK : PS_ERR;
}

ps_err_e ps_pdwrite(ps_prochandle* ph, psaddr_t addr, const void* data, size_t len) {
  return ph->host->write(reinterpret_cast<tracer::Addr>(addr), data, len) ? PS_OK : PS_ERR;
}

// Text and data share one address space here.
ps_err_e ps_ptread(ps_prochandle* ph, psaddr_t addr, void* out, size_t len) { return ps_pdread(ph, addr, out, len); }
ps_err_e ps_ptwrite(ps_prochandle* ph, psaddr_t addr, const void* data, size_t len) {
  return ps_pdwrite(ph, addr, data, len);
}

ps_err_e ps_lgetregs(ps_prochandle* ph, lwpid_t lwp, prgregset_t regs) {
  auto gprs = ph->host->registers(lwp);
  if (!gprs) {
    return PS_ERR;
  }
  static_assert(sizeof(prgregset_t) == sizeof(tracer::ThreadDbHost::Gprs));
  std::memcpy(regs, gprs->data(), sizeof(prgregset_t));
  return PS_OK;
}

// libthread_db reads registers only; writing them is GDB's business, through the server.
ps_err_e ps_lsetregs(ps_prochandle*, lwpid_t, const prgregset_t) { return PS_ERR; }
ps_err_e ps_lgetfpregs(ps_prochandle*, lwpid_t, prfpregset_t*) { return PS_NOFREGS; }
ps_err_e ps_lsetfpregs(ps_prochandle*, lwpid_t, const prfpregset_t*) { return PS_NOFREGS; }

pid_t ps_getpid(ps_prochandle* ph) { return ph->host->pid(); }

ps_err_e ps_get_thread_area(ps_prochandle* ph, lwpid_t lwp, int idx, psaddr_t* base) {
  auto area = ph->host->thread_area(lwp, idx);
  if (!area) {
    return area.error().code == base::Errc::invalid ? PS_BADADDR : PS_ERR;
  }
  *base = reinterpret_cast<psaddr_t>(*area);
  return PS_OK;
}

ps_err_e ps_pglobal_lookup(ps_prochandle* ph, const char* object, const char* name, psaddr_t* addr) {
  auto found = ph->host->symbol(object != nullptr ? object : "", name);
  if (!found) {
    return PS_NOSYM;
  }
  *addr = reinterpret_cast<psaddr_t>(*found);
  return PS_OK;
}

// Never needed for TLS lookups: the process is stopped whenever we ask.
ps_err_e ps_pstop(ps_prochandle*) { return PS_OK; }
ps_err_e ps_pcontinue(ps_prochandle*) { return PS_OK; }
ps_err_e ps_lstop(ps_prochandle*, lwpid_t) { return PS_OK; }
ps_err_e ps_lcontinue(ps_prochandle*, lwpid_t) { return PS_OK; }

}  // extern "C"
