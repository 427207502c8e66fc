/* Signals of the supervisor and of its tracees.
 *
 * The supervisor never runs signal handlers: SIGCHLD and the signals it
 * forwards are blocked and taken synchronously with sigtimedwait() between
 * waitpid(WNOHANG) rounds.  A tracee stop notifies the tracer with SIGCHLD
 * (kernel/signal.c do_notify_parent_cldstop(), also for non-children
 * traced by us), so no wakeup is lost: anything that happens after the
 * last empty waitpid() leaves a pending SIGCHLD.
 *
 * Forwarding (SPEC §2: the command's signals are untouched): SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT sent to agenttrace by a process (si_code
 * SI_USER/SI_QUEUE/SI_TKILL) are passed to the command's main process.
 * When the terminal sent them (si_code SI_KERNEL), the command, which is
 * in the same foreground process group, got its own copy: passing it on
 * would deliver it twice.  SIGTSTP keeps its default action, so that
 * Ctrl-Z stops agenttrace along with the command and the shell sees the
 * job stop.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>

#include "lib/log.h"
#include "tracer/limits.h"
#include "tracer/loop.h"

static sigset_t signals_orig;
static sigset_t signals_waited;

void signals_setup(void)
{
	sigset_t block;

	sigemptyset(&signals_waited);
	sigaddset(&signals_waited, SIGCHLD);
	sigaddset(&signals_waited, SIGINT);
	sigaddset(&signals_waited, SIGTERM);
	sigaddset(&signals_waited, SIGHUP);
	sigaddset(&signals_waited, SIGQUIT);
	block = signals_waited;
	sigaddset(&block, SIGPIPE);
	sigprocmask(SIG_BLOCK, &block, &signals_orig);
}

void signals_child_reset(void)
{
	sigprocmask(SIG_SETMASK, &signals_orig, NULL);
}

static void signals_forward(struct session *s, const siginfo_t *si)
{
	if (si->si_code == SI_KERNEL)
		return;
	if (s->main_pid > 0 && !s->main_done) {
		debug_msg("forwarding signal %d to pid %d", si->si_signo, (int)s->main_pid);
		kill(s->main_pid, si->si_signo);
	}
}

void signals_wait(struct session *s, long timeout_ms)
{
	struct timespec ts;
	siginfo_t si;
	int sig;

	/* A safety net: even if a wakeup were lost, the loop polls again. */
	if (timeout_ms < 0 || timeout_ms > 1000)
		timeout_ms = 1000;
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
	do {
		sig = sigtimedwait(&signals_waited, &si, &ts);
		if (sig > 0 && sig != SIGCHLD)
			signals_forward(s, &si);
		/* Take the other pending signals without waiting, but not
		 * after SIGCHLD: a tracee stop is what woke us nearly every
		 * time, and one more sigtimedwait per stop costs more than
		 * leaving a forwarded signal pending until the next call
		 * (the loop comes back here whenever waitpid has nothing, and
		 * every 256 events when it always has). */
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
	} while (sig > 0 && sig != SIGCHLD);
}

bool signals_is_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* True when SIGCONT is pending for PID (thread or process queue). */
static bool signals_cont_pending(pid_t pid)
{
	char path[64], line[256];
	unsigned long long mask;
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    (mask & (1ull << (SIGCONT - 1))))
			pending = true;
	}
	fclose(f);
	return pending;
}

int signals_deliver(struct session *s, struct tracee *t, int sig)
{
	/* The kernel discards pending stop signals when SIGCONT is sent
	 * (kernel/signal.c prepare_signal()).  A stop signal already taken
	 * into a signal-delivery-stop escapes that rule, and re-injecting it
	 * after the SIGCONT (Ctrl-Z then fg while agenttrace itself was
	 * stopped) would leave the command stopped for good: drop it, as the
	 * kernel would have. */
	if (signals_is_stop(sig) && signals_cont_pending(t->pid)) {
		debug_msg("pid %d: %s cancelled by a pending SIGCONT", (int)t->pid, strsignal(sig));
		return 0;
	}
	if (sig == SIGXCPU && s->max_cpu)
		limits_cpu_hit(s, t);
	return sig;
}

void signals_group_stop(pid_t pid)
{
	/* ptrace(2) "Group-stop": with PTRACE_SEIZE, PTRACE_LISTEN keeps the
	 * tracee stopped but lets SIGCONT wake it (and report it to us). */
	if (ptrace(PTRACE_LISTEN, pid, 0L, 0L) < 0 && errno != ESRCH)
		debug_msg("PTRACE_LISTEN %d: %s", (int)pid, strerror(errno));
}
