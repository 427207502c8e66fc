/* The ptrace engine's look at the file an open of a pinned name reached
 * (tracer/ptrace/pin-exit.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "tracer/judge.h"
#include "tracer/ptrace/pin-exit.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"

/* What the exit stop needs of the open: the session's call is the next
 * stop's by then (and far larger). */
struct pin_exit {
	char syscall[32];
	enum rules_kind kind;
	int flags;
	uint64_t text_hash;
	char path[PATH_MAX];
};

bool pin_exit_arm(struct tracee *t, const struct call *c)
{
	struct pin_exit *p;

	if (!stop_pinned(t, c))
		return false;
	if (!t->pin_exit)
		t->pin_exit = xmalloc(sizeof(*t->pin_exit));
	p = t->pin_exit;
	snprintf(p->syscall, sizeof(p->syscall), "%s", c->name);
	p->kind = c->events[0].kind;
	p->flags = c->flags;
	p->text_hash = c->text_hash;
	snprintf(p->path, sizeof(p->path), "%s", c->events[0].path ? c->events[0].path : "");
	return true;
}

/* The refusal or alert V of P by task T, as its record. */
static void pin_exit_record(struct session *s, struct tracee *t, const struct pin_exit *p,
			    const struct judge_verdict *v)
{
	struct rules_event ev = { .kind = p->kind, .path = p->path };
	struct judge_call jc = {
		.syscall = p->syscall,
		.events = &ev,
		.n_events = 1,
		.has_flags = true,
		.flags = p->flags,
		.deny_errno = EACCES,
		.exec_recorded_later = true,
	};
	struct judge_who w;

	judge_who_of_task(&w, t);
	judge_record(s, &w, &jc, v);
}

void pin_exit_check(struct session *s, struct tracee *t)
{
	struct pin_exit *p = t->pin_exit;
	struct __ptrace_syscall_info info;
	struct judge_verdict v = { 0 };
	struct exec_pin *pin;
	struct stat st;
	char link[64], why[PATH_MAX + 256];
	int fd, err;

	if (!p)
		return;
	t->pin_exit = NULL;
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->pid, (void *)sizeof(info), &info) < 0 ||
	    info.op != PTRACE_SYSCALL_INFO_EXIT || info.exit.is_error || !t->info ||
	    !(pin = exec_pin_find(t->info->pins, t->info->n_pins, p->text_hash, t->pid)))
		goto out;
	/* The very file the descriptor holds; O_PATH: a FIFO put there
	 * is not opened for reading. */
	snprintf(link, sizeof(link), "/proc/%d/fd/%lld", (int)t->pid, (long long)info.exit.rval);
	fd = open(link, O_PATH | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (fstat(fd, &st) == 0 && (st.st_dev != pin->dev || st.st_ino != pin->ino)) {
		err = stop_pin_reached(s, t->pid, p->kind, pin, fd, &st, &v, why, sizeof(why));
		/* The descriptor stays in the caller's table, unused: the
		 * call's answer says there is none. */
		if (err && arch_exit_set_return(t->pid, -err) < 0)
			kill(t->tgid, SIGKILL);
		if (v.action != RULES_ACTION_ALLOW)
			pin_exit_record(s, t, p, &v);
	}
	close(fd);
out:
	free(p);
}
