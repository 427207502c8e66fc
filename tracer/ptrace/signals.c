/* Signals of the supervisor and of its tracees.
 *
 * SIGCHLD stays blocked and no handler runs for it: the event loop waits
 * in waitpid() itself, which a tracee stop wakes (kernel/signal.c
 * do_notify_parent_cldstop(), also for non-children traced by us), and
 * when it has a deadline (limits.c) in sigtimedwait() for SIGCHLD between
 * waitpid(WNOHANG) rounds, where a stop after the last empty waitpid()
 * leaves SIGCHLD pending, so no wakeup is lost either way.
 *
 * Forwarding (SPEC §2: the command's signals are untouched): SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT sent to agenttrace by a process (si_code
 * SI_USER/SI_QUEUE/SI_TKILL) are passed to the command's main process.
 * When the terminal sent them (si_code SI_KERNEL), the command, which is
 * in the same foreground process group, got its own copy: passing it on
 * would deliver it twice.  They are passed on by a handler, which does
 * nothing but kill(2): the loop then needs no wake-up of its own for them,
 * and can block in waitpid(), one system call per stop instead of three.
 * SA_RESTART keeps every other system call of the supervisor unaware of
 * them.  Until the command runs they stay blocked (and pending).
 * SIGTSTP keeps its default action, so that Ctrl-Z stops agenttrace along
 * with the command and the shell sees the job stop.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/confine/limits.h"
#include "tracer/ptrace/loop.h"
#include "tracer/inspect/proc.h"

static sigset_t signals_orig;
static sigset_t signals_waited;
static sigset_t signals_forwarded;

/* The handler's only state: the command's main process while it lives
 * (0 before and after), and agenttrace's own pid, so that a child forked
 * by the supervisor (the host-name resolver) forwards nothing. */
static volatile sig_atomic_t signals_target;
static volatile sig_atomic_t signals_owner;

void signals_setup(void)
{
	sigset_t block;

	sigemptyset(&signals_waited);
	sigaddset(&signals_waited, SIGCHLD);
	sigemptyset(&signals_forwarded);
	sigaddset(&signals_forwarded, SIGINT);
	sigaddset(&signals_forwarded, SIGTERM);
	sigaddset(&signals_forwarded, SIGHUP);
	sigaddset(&signals_forwarded, SIGQUIT);
	block = signals_forwarded;
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGPIPE);
	sigprocmask(SIG_BLOCK, &block, &signals_orig);
}

void signals_child_reset(void)
{
	sigprocmask(SIG_SETMASK, &signals_orig, NULL);
}

static void signals_forward(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	pid_t target = signals_target;

	(void)uc;
	if (si->si_code != SI_KERNEL && target > 0 && getpid() == signals_owner)
		kill(target, sig);
	errno = saved;
}

int signals_forward_start(pid_t main_pid)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = signals_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_mask = signals_forwarded;
	signals_owner = getpid();
	signals_target = main_pid;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&signals_forwarded, sig) == 1 && sigaction(sig, &sa, NULL) < 0)
			return -errno;
	/* Pending ones (sent before the command ran) are delivered here. */
	if (sigprocmask(SIG_UNBLOCK, &signals_forwarded, NULL) < 0)
		return -errno;
	return 0;
}

void signals_forward_stop(void)
{
	signals_target = 0;
}

void signals_wait(long timeout_ms)
{
	struct timespec ts;

	/* A safety net: even if a wakeup were lost, the loop polls again. */
	if (timeout_ms < 0 || timeout_ms > 1000)
		timeout_ms = 1000;
	ts.tv_sec = timeout_ms / 1000;
	ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
	/* EINTR (a forwarded signal's handler ran) is a wake-up like any. */
	sigtimedwait(&signals_waited, NULL, &ts);
}

bool signals_is_stop(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* True when SIGCONT is pending for PID (thread or process queue). */
static bool signals_cont_pending(pid_t pid)
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
