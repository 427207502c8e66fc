/* The register interface of a seccomp stop: one implementation per
 * architecture (arch-x86_64.c), the only files that name registers.
 *
 * Every function but arch_stop_from_seccomp() is called on a tracee in a
 * ptrace stop (PTRACE_EVENT_SECCOMP; arch_spawn_flags() at a fork, vfork
 * or clone event) and returns 0 or -errno (-ESRCH: the tracee is gone). */
#ifndef AGENTTRACE_ARCH_H
#define AGENTTRACE_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The SECCOMP_RET_DATA values the filter attaches to its TRACE answers, so
 * that the supervisor knows why a call stopped even on a kernel without
 * PTRACE_GET_SYSCALL_INFO (the registers alone cannot tell an `int $0x80`
 * of a 64-bit process from a native call). */
enum arch_trace_data {
	ARCH_TRACE_NATIVE = 0,
	ARCH_TRACE_FOREIGN = 1, /* another audit arch (i386 via int $0x80, ...) */
	ARCH_TRACE_X32 = 2,     /* native arch with __X32_SYSCALL_BIT */
};

struct arch_stop {
	uint32_t audit_arch;   /* AUDIT_ARCH_X86_64, AUDIT_ARCH_I386 */
	bool x32;              /* __X32_SYSCALL_BIT set in the number */
	long nr;               /* as the tracee's ABI numbers it (x32 bit kept) */
	unsigned long args[6]; /* zero-extended for 32-bit ABIs */
};

/* The audit arch of this build's native ABI. */
uint32_t arch_native(void);
/* The bit that marks x32 syscall numbers on the native arch, 0 if none. */
unsigned long arch_x32_bit(void);

/* Read the stopped call (one PTRACE_GET_SYSCALL_INFO, or registers plus
 * PTRACE_GETEVENTMSG on kernels older than 5.3). */
int arch_stop_read(pid_t pid, struct arch_stop *st);

/* The call a seccomp user notification carries (its seccomp_data). */
struct seccomp_data;
void arch_stop_from_seccomp(const struct seccomp_data *d, struct arch_stop *st);

/* Skip the stopped call and make it return RET, a value or -errno
 * (seccomp(2): a tracer skips a call at a SECCOMP_RET_TRACE stop by
 * setting the number to -1; the return register then holds what the
 * tracee sees). */
int arch_stop_skip(pid_t pid, long ret);

/* At a syscall-exit stop: the call returns RET (a value or -errno)
 * instead of what the kernel gave. */
int arch_exit_set_return(pid_t pid, long ret);

/* Change argument I (0..5) of the stopped call before it runs. */
int arch_stop_set_arg(pid_t pid, unsigned i, unsigned long value);

/* The clone flags of the call a tracee stopped at a PTRACE_EVENT_FORK,
 * VFORK or CLONE stop is making (fork and vfork given as the flags they
 * stand for), from its registers: which tells a new thread from a new
 * process without a look at /proc.  -ENOTSUP for another ABI's call
 * (the caller asks /proc then). */
int arch_spawn_flags(pid_t pid, unsigned long *flags);

/* Test hook: force the register fallback of arch_stop_read(). */
void arch_force_fallback(bool on);

#endif
