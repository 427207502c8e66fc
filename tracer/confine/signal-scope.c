/* kill(-1), kill(0), kill(-pgrp) and group pidfd signals, kept to the
 * session (signal-scope.h).
 *
 * kill(-1) reaches every process on the machine the caller may signal
 * (the supervisor too): it is always emulated, as kill(2) does it inside
 * a session of its own: every session process but the caller's own
 * thread group gets the signal, and the call returns 0, or ESRCH when
 * there was none (kernel/signal.c kill_something_info()).
 *
 * A process group usually holds only session processes (a shell's job),
 * and then the kernel does the work itself, with the caller as the
 * sender.  The command's main process starts in agenttrace's own group,
 * though, which agenttrace and whatever ran it with it (a pipeline's
 * other commands, a CI shell) share: a `kill 0` there is emulated: the
 * session's members of the group get the signal, the others are spared.
 * The call then returns 0 when a signal was sent, else the last error
 * (__kill_pgrp_info()).
 *
 * Signals the supervisor sends carry its pid and uid (si_pid, si_uid),
 * not the caller's: the kernel refuses SI_USER siginfo forged for another
 * process, so only the kernel's own kill could say the caller sent it. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/inspect/proc.h"
#include "tracer/confine/signal-scope.h"
#include "tracer/judge.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"

#define SCOPE_CAP_KILL 5

/* What /proc/PID/stat and status say of a process, for the kernel's
 * permission check (kernel/signal.c kill_ok_by_cred()). */
struct scope_proc {
	pid_t ppid, pgrp, sid;
	unsigned long long ruid, euid, suid;
	unsigned long long cap_eff;
};

static bool scope_stat(pid_t pid, struct scope_proc *p)
{
	struct proc_stat st;

	if (proc_stat(pid, &st) < 0)
		return false;
	p->ppid = st.ppid;
	p->pgrp = st.pgrp;
	p->sid = st.sid;
	return true;
}

static bool scope_creds(pid_t pid, struct scope_proc *p)
{
	char text[4096], *u;

	if (proc_read(pid, "status", text, sizeof(text)) < 0)
		return false;
	u = strstr(text, "\nUid:");
	if (!u || sscanf(u + 5, "%llu %llu %llu", &p->ruid, &p->euid, &p->suid) != 3)
		return false;
	return proc_status_field(text, "\nCapEff:", 16, &p->cap_eff);
}

/* May SENDER signal TARGET with SIG (kill_ok_by_cred(), and SIGCONT
 * within one session)?  A process whose files are gone is left out. */
static bool scope_may(const struct scope_proc *sender, pid_t target, int sig)
{
	struct scope_proc t;

	if (sender->cap_eff & (1ull << SCOPE_CAP_KILL))
		return true;
	if (!scope_creds(target, &t))
		return false;
	if (sender->euid == t.suid || sender->euid == t.ruid || sender->ruid == t.suid ||
	    sender->ruid == t.ruid)
		return true;
	return sig == SIGCONT && scope_stat(target, &t) && t.sid == sender->sid;
}

struct scope_run {
	struct session *s;
	struct tracee *caller;
	struct call *c;
	struct scope_proc sender;
	pid_t pgrp;            /* CALL_SIGNAL_GROUP */
	unsigned sent, members, outside, own;
	int err;               /* the last error of a send */
	bool emulate;
};

/* Send the signal to session process PID as the caller would have. */
static void scope_send(struct scope_run *r, pid_t pid)
{
	r->members++;
	if (!scope_may(&r->sender, pid, r->c->signal_sig)) {
		r->err = EPERM;
		return;
	}
	if (kill(pid, r->c->signal_sig) == 0)
		r->sent++;
	else
		r->err = errno;
}

static void scope_all_one(struct tracee *e, void *arg)
{
	struct scope_run *r = arg;

	if (e->pid != e->tgid || e->tgid == r->caller->tgid)
		return;
	scope_send(r, e->pid);
}

/* The processes of group R->pgrp in /proc: session members (sent the
 * signal when emulating), agenttrace's own, and the others. */
static void scope_group_scan(struct scope_run *r, bool send)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct scope_proc p;
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || !scope_stat((pid_t)v, &p) || p.pgrp != r->pgrp)
			continue;
		if (tracee_find(&r->s->tasks, (pid_t)v)) {
			if (send)
				scope_send(r, (pid_t)v);
			else
				r->members++;
		} else if (v == self || p.ppid == self) {
			r->own++; /* the supervisor, its resolver child */
		} else {
			r->outside++;
		}
	}
	closedir(d);
}

static void scope_record(struct scope_run *r, int err)
{
	struct judge_call c = { .syscall = r->c->name };
	struct judge_verdict v;
	struct judge_who w;
	char why[256];

	if (r->c->signal_scope == CALL_SIGNAL_ALL)
		snprintf(why, sizeof(why),
			 "kill(-1) with signal %d reached the session's own %u processes only: "
			 "signals reach only the session's own processes",
			 r->c->signal_sig, r->members);
	else
		snprintf(why, sizeof(why),
			 "signal %d to process group %d reached its %u session processes and "
			 "spared %u outside the session: signals reach only the session's own "
			 "processes",
			 r->c->signal_sig, (int)r->pgrp, r->members, r->outside + r->own);
	/* A deny also in audit mode, as every kind "syscall". */
	judge_own(&v, SESSION_KIND_SYSCALL, 0, RULES_ACTION_DENY, "syscall.signal-outside", why, err);
	judge_who_of_task(&w, r->caller);
	judge_record(r->s, &w, &c, &v);
}

/* The call returns as the kernel's would: 0, or -ERR. */
static void scope_answer(struct stop_answer *a, int err)
{
	a->how = STOP_RETURN;
	a->ret = -(long)err;
}

void signal_scope_run(struct session *s, struct tracee *t, struct call *c, struct stop_answer *a)
{
	struct scope_run r = { .s = s, .caller = t, .c = c, .err = ESRCH };
	struct scope_proc of;

	if (!scope_creds(t->pid, &r.sender) || !scope_stat(t->pid, &r.sender)) {
		scope_answer(a, ESRCH); /* the caller is gone */
		return;
	}
	if (c->signal_scope == CALL_SIGNAL_ALL) {
		if (c->signal_sig < 0 || c->signal_sig > SIGRTMAX) {
			scope_answer(a, EINVAL);
			return;
		}
		tracee_foreach(&s->tasks, scope_all_one, &r);
		/* kill_something_info(): any process there -> 0 unless a send
		 * failed otherwise than EPERM. */
		scope_answer(a, r.members ? (r.err == EPERM || r.sent ? 0 : r.err) : ESRCH);
		scope_record(&r, 0);
		return;
	}
	r.pgrp = c->signal_pgrp;
	if (!r.pgrp) {
		if (!scope_stat(c->signal_group_of, &of))
			return; /* gone: the kernel answers */
		r.pgrp = of.pgrp;
	}
	scope_group_scan(&r, false);
	if (!r.outside && !r.own)
		return; /* the session's alone (or nobody's): the kernel's own kill */
	if (!r.members) {
		scope_answer(a, EPERM);
		scope_record(&r, EPERM);
		return;
	}
	r.members = 0;
	r.outside = r.own = 0;
	scope_group_scan(&r, true);
	scope_answer(a, r.sent ? 0 : r.err);
	if (r.outside)
		scope_record(&r, 0);
}
