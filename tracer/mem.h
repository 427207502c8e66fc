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

/* Test hook: force the /proc/PID/mem path. */
void mem_force_procmem(bool on);

#endif
