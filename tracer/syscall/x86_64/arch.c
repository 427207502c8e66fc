/* x86_64 registers: the only file that names them.
 *
 * Syscall ABIs seen on x86_64 (arch/x86/entry/entry_64.S, entry_64_compat.S):
 *   native:  nr in orig_rax, args rdi rsi rdx r10 r8 r9
 *   x32:     the same registers, nr | __X32_SYSCALL_BIT (0x40000000)
 *   i386:    int $0x80 (also from 64-bit processes), nr in orig_rax,
 *            args ebx ecx edx esi edi ebp; seccomp_data.arch is AUDIT_ARCH_I386 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <linux/seccomp.h>
#include <sys/user.h>

#include "tracer/syscall/arch.h"
#include "tracer/syscall/probe.h"

#define X32_BIT 0x40000000UL

static bool arch_fallback;

uint32_t arch_native(void)
{
	return AUDIT_ARCH_X86_64;
}

unsigned long arch_x32_bit(void)
{
	return X32_BIT;
}

void arch_force_fallback(bool on)
{
	arch_fallback = on;
}

static int arch_getregs(pid_t pid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, pid, NULL, r) < 0)
		return -errno;
	return 0;
}

static int arch_setregs(pid_t pid, const struct user_regs_struct *r)
{
	if (ptrace(PTRACE_SETREGS, pid, NULL, r) < 0)
		return -errno;
	return 0;
}

int arch_spawn_flags(pid_t pid, unsigned long *flags)
{
	struct user_regs_struct r;
	int err = arch_getregs(pid, &r);

	if (err < 0)
		return err;
	/* The native numbers: an i386 call (int $0x80, whose numbers 56 to
	 * 58 start no task) or an x32 one is left to /proc. */
	switch (r.orig_rax) {
	case __NR_clone:
		*flags = r.rdi;
		return 0;
	case __NR_fork:
		*flags = SIGCHLD;
		return 0;
	case __NR_vfork:
		*flags = CLONE_VFORK | CLONE_VM | SIGCHLD;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* Pre-5.3 kernels: registers, and the filter's RET_DATA to learn the ABI. */
static int arch_stop_read_regs(pid_t pid, struct arch_stop *st)
{
	struct user_regs_struct r;
	unsigned long data = 0;
	int err = arch_getregs(pid, &r);

	if (err)
		return err;
	if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &data) < 0)
		return -errno;
	st->nr = (long)r.orig_rax;
	if (data == ARCH_TRACE_FOREIGN) {
		st->audit_arch = AUDIT_ARCH_I386;
		st->x32 = false;
		st->nr = (long)(uint32_t)r.orig_rax;
		st->args[0] = (uint32_t)r.rbx;
		st->args[1] = (uint32_t)r.rcx;
		st->args[2] = (uint32_t)r.rdx;
		st->args[3] = (uint32_t)r.rsi;
		st->args[4] = (uint32_t)r.rdi;
		st->args[5] = (uint32_t)r.rbp;
		return 0;
	}
	st->audit_arch = AUDIT_ARCH_X86_64;
	st->x32 = ((unsigned long)st->nr & X32_BIT) != 0 && st->nr >= 0;
	st->args[0] = r.rdi;
	st->args[1] = r.rsi;
	st->args[2] = r.rdx;
	st->args[3] = r.r10;
	st->args[4] = r.r8;
	st->args[5] = r.r9;
	return 0;
}

void arch_stop_from_seccomp(const struct seccomp_data *d, struct arch_stop *st)
{
	unsigned long nr = (unsigned long)(unsigned)d->nr;

	st->audit_arch = d->arch;
	st->x32 = d->arch == AUDIT_ARCH_X86_64 && (nr & X32_BIT);
	st->nr = (long)nr;
	for (unsigned i = 0; i < 6; i++)
		st->args[i] = d->arch == AUDIT_ARCH_X86_64 ? (unsigned long)d->args[i] :
			      (unsigned long)(uint32_t)d->args[i];
}

int arch_stop_read(pid_t pid, struct arch_stop *st)
{
	struct __ptrace_syscall_info info;
	long n;

	if (arch_fallback || !probe_syscall_info())
		return arch_stop_read_regs(pid, st);
	n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info);
	if (n < 0) {
		if (errno == EIO || errno == EINVAL)
			return arch_stop_read_regs(pid, st);
		return -errno;
	}
	if (info.op != PTRACE_SYSCALL_INFO_SECCOMP)
		return -EINVAL; /* not a seccomp stop: the caller's bug */
	st->audit_arch = info.arch;
	st->nr = (long)info.seccomp.nr;
	if (info.arch == AUDIT_ARCH_X86_64) {
		st->x32 = (info.seccomp.nr & X32_BIT) != 0 && (long)info.seccomp.nr >= 0;
	} else {
		st->x32 = false;
		st->nr = (long)(uint32_t)info.seccomp.nr;
	}
	for (int i = 0; i < 6; i++)
		st->args[i] = info.seccomp.args[i];
	return 0;
}

int arch_stop_skip(pid_t pid, long ret)
{
	struct user_regs_struct r;
	int rc = arch_getregs(pid, &r);

	if (rc)
		return rc;
	r.orig_rax = (unsigned long long)-1LL;
	r.rax = (unsigned long long)(long long)ret;
	return arch_setregs(pid, &r);
}

int arch_exit_set_return(pid_t pid, long ret)
{
	struct user_regs_struct r;
	int rc = arch_getregs(pid, &r);

	if (rc)
		return rc;
	r.rax = (unsigned long long)(long long)ret;
	return arch_setregs(pid, &r);
}

int arch_stop_set_arg(pid_t pid, unsigned i, unsigned long value)
{
	struct user_regs_struct r;
	int rc = arch_getregs(pid, &r);

	if (rc)
		return rc;
	switch (i) {
	case 0: r.rdi = value; break;
	case 1: r.rsi = value; break;
	case 2: r.rdx = value; break;
	case 3: r.r10 = value; break;
	case 4: r.r8 = value; break;
	case 5: r.r9 = value; break;
	default: return -EINVAL;
	}
	return arch_setregs(pid, &r);
}
