/* Signals at the tracees' stops: what a signal-delivery-stop re-injects,
 * and group-stops (ptrace(2), "Signal-delivery-stop", "Group-stop"). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>

#include "lib/log.h"
#include "tracer/confine/limits.h"
#include "tracer/inspect/proc.h"
#include "tracer/ptrace/loop.h"

bool stops_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* True when SIGCONT is pending for PID (thread or process queue). */
static bool stops_cont_pending(pid_t pid)
{
	/* The masks follow the Groups line: 16 KiB holds a status file with
	 * a thousand supplementary groups. */
	char text[16384];
	unsigned long long thread = 0, group = 0;
	const unsigned long long cont = 1ull << (SIGCONT - 1);

	if (proc_read(pid, "status", text, sizeof(text)) < 0)
		return false;
	proc_status_field(text, "\nSigPnd:", 16, &thread);
	proc_status_field(text, "\nShdPnd:", 16, &group);
	return (thread | group) & cont;
}

int stops_deliver(struct session *s, struct tracee *t, int sig)
{
	/* The kernel discards pending stop signals when SIGCONT is sent
	 * (kernel/signal.c prepare_signal()).  A stop signal already taken
	 * into a signal-delivery-stop escapes that rule, and re-injecting it
	 * after the SIGCONT (Ctrl-Z then fg while agenttrace itself was
	 * stopped) would leave the command stopped for good: drop it, as the
	 * kernel would have. */
	if (stops_is_stop_signal(sig) && stops_cont_pending(t->pid)) {
		debug_msg("pid %d: %s cancelled by a pending SIGCONT", (int)t->pid, strsignal(sig));
		return 0;
	}
	if (sig == SIGXCPU && s->max_cpu)
		limits_cpu_hit(s, t);
	return sig;
}

void stops_group_stop(pid_t pid)
{
	/* ptrace(2) "Group-stop": with PTRACE_SEIZE, PTRACE_LISTEN keeps the
	 * tracee stopped but lets SIGCONT wake it (and report it to us). */
	if (ptrace(PTRACE_LISTEN, pid, 0L, 0L) < 0 && errno != ESRCH)
		debug_msg("PTRACE_LISTEN %d: %s", (int)pid, strerror(errno));
}
