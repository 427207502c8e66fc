/* Applying a denial at a seccomp stop. */
#include "config.h"

#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"

int call_deny(pid_t pid, int err)
{
	/* The call is skipped, not run and then undone: nothing reaches the
	 * kernel's implementation (seccomp(2), SECCOMP_RET_TRACE). */
	return arch_stop_skip(pid, err);
}
