/* The supervisor's own signals, for both backends.
 *
 * SIGCHLD stays blocked and no handler runs for it: the event loop waits
 * in waitpid() itself, which a tracee stop wakes (kernel/signal.c
 * do_notify_parent_cldstop(), also for non-children traced by us), and
 * when it has a deadline (limits.c) in sigtimedwait() for SIGCHLD between
 * waitpid(WNOHANG) rounds, where a stop after the last empty waitpid()
 * leaves SIGCHLD pending, so no wakeup is lost either way.
 *
 * Forwarding (agenttrace(1): the command's signals are untouched): SIGINT,
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
 * with the command and the shell sees the job stop.  SIGTTOU stays
 * blocked: agenttrace's lines reach the terminal whoever holds it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/signals.h"

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
	/* A command that takes the terminal's foreground and sets TOSTOP
	 * would stop agenttrace at its next line on the terminal (or, in an
	 * orphaned group, have the line fail): blocked, the kernel lets the
	 * write through (tty_check_change()). */
	sigaddset(&block, SIGTTOU);
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
