/* Reading a stopped tracee's memory: process_vm_readv, page-wise so that a
 * string ending just before an unmapped page is still read, with a
 * /proc/PID/mem fallback where process_vm_readv is refused (EPERM, ENOSYS).
 *
 * Errors: -ESRCH the tracee is gone; -EFAULT the address is not readable
 * in the tracee (the kernel would fail the call with EFAULT too);
 * -ENAMETOOLONG no NUL within the cap. */
#ifndef AGENTTRACE_MEM_H
#define AGENTTRACE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Exactly LEN bytes at ADDR, or an error. */
int mem_read(pid_t pid, unsigned long addr, void *buf, size_t len);

/* A NUL-terminated string at ADDR into BUF (CAP bytes, NUL included).
 * Returns its length (without the NUL) or -errno. */
long mem_read_string(pid_t pid, unsigned long addr, char *buf, size_t cap);

/* A first try at N strings with one process_vm_readv: string I is looked
 * for in the bytes at ADDRS[I] up to CAPS[I] or the end of its page, read
 * into BUFS[I].  LENS[I] gets its length, or -EAGAIN when it was not found
 * whole that way (a longer string, an unreadable page, a NULL pointer:
 * mem_read_string() then reads it, and says why it cannot).  At most
 * MEM_STRINGS_MAX strings.  Returns 0, or -ESRCH when the tracee is gone. */
#define MEM_STRINGS_MAX 64
int mem_read_strings(pid_t pid, size_t n, const unsigned long *addrs, char *const *bufs,
		     const size_t *caps, long *lens);

/* Test hook: force the /proc/PID/mem path. */
void mem_force_procmem(bool on);

#endif
