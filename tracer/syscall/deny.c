/* Answering a call at a ptrace seccomp stop. */
#include "config.h"

#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"

int call_skip(pid_t pid, long ret)
{
	/* The call is skipped, not run and then undone: nothing reaches the
	 * kernel's implementation (seccomp(2), SECCOMP_RET_TRACE). */
	return arch_stop_skip(pid, ret);
}

int call_deny(pid_t pid, int err)
{
	return call_skip(pid, -(long)err);
}

int call_set_arg(pid_t pid, unsigned i, unsigned long v)
{
	return arch_stop_set_arg(pid, i, v);
}
