/* The event loop: wait for a stop, classify it, act, resume with
 * PTRACE_CONT (never PTRACE_SYSCALL: only seccomp stops cost anything).
 *
 * Stop kinds (ptrace(2), with PTRACE_SEIZE):
 *   status>>16 == PTRACE_EVENT_SECCOMP   the filter asked: decode, decide
 *   PTRACE_EVENT_FORK/VFORK/CLONE        a new task (table entry)
 *   PTRACE_EVENT_EXEC                    a new program (tid may change)
 *   PTRACE_EVENT_STOP + stop signal      group-stop: PTRACE_LISTEN
 *   PTRACE_EVENT_STOP + SIGTRAP          a new task's first stop, or the
 *                                        wake-up after LISTEN: resume
 *   no event                             signal-delivery-stop: re-inject
 * Any ptrace call may fail with ESRCH: the tracee was killed meanwhile;
 * its exit is reported by waitpid later and handled there.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/signals.h"
#include "tracer/syscall/call.h"
#include "tracer/confine/landlock.h"
#include "tracer/judge.h"
#include "tracer/confine/limits.h"
#include "tracer/ptrace/loop.h"
#include "tracer/spawn.h"
#include "tracer/ptrace/signal-scope.h"
#include "tracer/confine/survive.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/hosts.h"
#include "tracer/shim/resolver.h"
#include "tracer/inspect/proc.h"
#include "tracer/record/record.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* Tasks that exited before the event announcing them was handled (a
 * child can be killed before its parent's fork event is read): remembered
 * so that the late event does not add a dead task. */
#define LOOP_GONE_RING 64
static pid_t loop_gone[LOOP_GONE_RING];
static unsigned loop_gone_next;

static void loop_gone_add(pid_t pid)
{
	loop_gone[loop_gone_next++ % LOOP_GONE_RING] = pid;
}

static bool loop_gone_take(pid_t pid)
{
	for (unsigned i = 0; i < LOOP_GONE_RING; i++)
		if (loop_gone[i] == pid) {
			loop_gone[i] = 0;
			return true;
		}
	return false;
}

static void loop_resume(pid_t pid, int sig)
{
	if (ptrace(PTRACE_CONT, pid, 0L, (long)sig) < 0 && errno != ESRCH)
		debug_msg("PTRACE_CONT %d: %s", (int)pid, strerror(errno));
}

static bool loop_in_session(pid_t pid, void *arg)
{
	struct session *s = arg;

	return tracee_find(&s->tasks, pid) != NULL;
}

/* ---- seccomp stops ---- */

static bool loop_is_open(const char *name)
{
	return name && (strncmp(name, "open", 4) == 0 || strcmp(name, "creat") == 0);
}

static void loop_bypass(struct session *s, struct tracee *t, struct call *c)
{
	struct judge_call jc = { .syscall = c->name };
	struct judge_verdict v;
	struct judge_who w;

	judge_who_of_task(&w, t);
	/* Denied also in audit mode: see agenttrace(1). */
	judge_own(&v, SESSION_KIND_SYSCALL, 0, RULES_ACTION_DENY,
		  c->bypass_id ? c->bypass_id : "syscall.bypass", c->bypass_why, c->bypass_errno);
	judge_record(s, &w, &jc, &v);
	call_deny(t->pid, c->bypass_errno);
}

/* The shim's own sendto to the channel: let through unrecorded, after
 * making room in the queue (the shim never waits for the supervisor).
 * Before an inet event is decided, the names the shim reported are read,
 * so that rules naming hosts match. */
static bool loop_channel_first(struct session *s, const struct call *c)
{
	for (size_t i = 0; i < c->n_events && i < RULES_CALL_EVENTS; i++) {
		const struct rules_event *ev = &c->events[i];

		if (ev->kind != RULES_KIND_NET)
			continue;
		if (ev->family == AF_UNIX && channel_is_self(s, ev->unix_path)) {
			channel_drain(s);
			return true;
		}
		if (ev->family != AF_INET && ev->family != AF_INET6)
			continue;
		channel_drain(s);
		resolver_run(s);
	}
	return false;
}

static void loop_decide(struct session *s, struct tracee *t, struct call *c)
{
	struct judge_call jc = {
		.syscall = c->name,
		.events = c->events,
		.n_events = c->n_events < RULES_CALL_EVENTS ? c->n_events : RULES_CALL_EVENTS,
		.explicit_deny_only = c->explicit_deny_only,
		.has_flags = loop_is_open(c->name),
		.flags = c->flags,
		.deny_errno = c->deny_errno,
		.exec_recorded_later = true,
	};
	const struct rules_event *ev;
	struct judge_verdict v;
	struct judge_who w;
	struct identity_caller caller = { 0 };
	static struct identity id;

	if (jc.n_events == 0 || loop_channel_first(s, c))
		return;
	if (c->events[0].kind == RULES_KIND_EXEC) {
		/* The program the exec runs, in the caller's view; the caller's
		 * own program, for a "#!" chain through env. */
		jc.id = &id;
		jc.view_pid = t->pid;
		if (t->info) {
			caller.exe = t->info->exe;
			caller.argv = (const char *const *)t->info->argv;
			caller.argc = t->info->argc;
		}
		jc.caller = &caller;
	}
	judge_decide(s, &jc, &v);
	ev = &c->events[v.event];

	/* The Landlock backstop's coverage, what survives the session, the
	 * race detector (landlock.h, survive.h). */
	if (!v.quiet && v.effective != RULES_ACTION_DENY &&
	    (c->events[0].kind == RULES_KIND_WRITE || ev->kind == RULES_KIND_WRITE)) {
		int out = landlock_uncovered(s, c);

		if (out >= 0) {
			judge_own(&v, SESSION_KIND_WRITE, (size_t)out, RULES_ACTION_DENY,
				  LANDLOCK_UNCOVERED_RULE, LANDLOCK_UNCOVERED_WHY, EACCES);
		} else {
			for (size_t i = 0; i < jc.n_events; i++)
				if (c->events[i].kind == RULES_KIND_WRITE)
					survive_note(s->survive, c->events[i].path);
			landlock_race_arm(s, t->pid, c);
		}
	}

	if (v.err)
		call_deny(t->pid, v.err);
	else if (!v.quiet && ev->kind == RULES_KIND_EXEC) {
		/* The program this task becomes if the exec succeeds. */
		tracee_info_unref(t->pending_exec);
		t->pending_exec = tracee_info_new_exec(id.exe ? id.exe : "", ev->argv, ev->argc,
						       id.loader, id.script,
						       id.script ? id.script_name : id.exe_name);
	}
	judge_who_of_task(&w, t);
	judge_record(s, &w, &jc, &v);
}

static void loop_seccomp(struct session *s, struct tracee *t)
{
	struct call *c = s->call;
	struct call_ctx ctx = { loop_in_session, s };
	int r;

	s->stops++;
	/* A fork allowed earlier has returned by now (its new task was seen,
	 * or the kernel failed it): it no longer counts as pending. */
	tracee_set_spawn_pending(&s->tasks, t, false);
	r = call_decode(t->pid, &ctx, c);
	if (r < 0) {
		/* ESRCH: gone.  EFAULT and the like: the kernel fails the call
		 * on its own when it runs. */
		if (r != -ESRCH)
			debug_msg("pid %d: cannot decode %s: %s", (int)t->pid,
				  c->name ? c->name : "a call", strerror(-r));
		return;
	}
	if (c->canary) {
		call_deny(t->pid, CALL_CANARY_ERRNO);
		return;
	}
	if (c->bypass) {
		loop_bypass(s, t, c);
		return;
	}
	if (c->signal_scope) {
		signal_scope_run(s, t, c); /* kill(-1), kill(0), kill(-pgrp): signal-scope.h */
		return;
	}
	if (c->spawns) {
		if (!limits_spawn_allowed(s, t, c))
			call_deny(t->pid, EAGAIN);
		else if (!c->spawns_thread)
			tracee_set_spawn_pending(&s->tasks, t, true);
		return;
	}
	loop_decide(s, t, c);
}

/* ---- new tasks ---- */

/* Tgid and PPid of a task from /proc (the real parent, not the tracer).
 * Both lie in the first lines of the status file (Name, Umask, State,
 * Tgid, Ngid, Pid, PPid), far within 512 bytes even with a 64-byte
 * escaped Name. */
static bool loop_task_ids(pid_t pid, pid_t *tgid, pid_t *ppid)
{
	char text[512];
	unsigned long long g, p;

	if (proc_read(pid, "status", text, sizeof(text)) < 0 ||
	    !proc_status_field(text, "\nTgid:", 10, &g) ||
	    !proc_status_field(text, "\nPPid:", 10, &p))
		return false;
	*tgid = (pid_t)g;
	*ppid = (pid_t)p;
	return true;
}

/* What a task runs, read from /proc when no parent told us. */
static struct tracee_info *loop_info_from_proc(pid_t pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	return tracee_info_new(exe, NULL, 0);
}

/* Adds task PID, started by task PARENT (NULL when its first stop came
 * before the parent's event). */
static struct tracee *loop_add_task(struct session *s, pid_t pid, struct tracee *parent)
{
	pid_t tgid = pid, ppid = parent ? parent->tgid : 0;
	struct tracee *src = parent, *e;
	struct tracee_info *own = NULL;

	if (!loop_task_ids(pid, &tgid, &ppid) && !parent)
		return NULL; /* gone already */
	if (!src)
		src = tracee_find(&s->tasks, tgid != pid ? tgid : ppid);
	if (tgid != pid) {
		/* A thread: same program, same parent as its process. */
		struct tracee *leader = tracee_find(&s->tasks, tgid);

		if (leader) {
			src = leader;
			ppid = leader->ppid;
		}
	} else if (parent) {
		ppid = parent->tgid;
	}
	if (!src || !src->info)
		own = loop_info_from_proc(pid);
	e = tracee_add(&s->tasks, pid, tgid, ppid, own ? own : src->info);
	tracee_info_unref(own);
	if (tgid == pid)
		s->processes_seen++;
	return e;
}

static void loop_spawned(struct session *s, struct tracee *t)
{
	unsigned long msg = 0;
	pid_t child;

	tracee_set_spawn_pending(&s->tasks, t, false);
	if (ptrace(PTRACE_GETEVENTMSG, t->pid, 0L, &msg) < 0)
		return;
	child = (pid_t)msg;
	if (child <= 0 || tracee_find(&s->tasks, child) || loop_gone_take(child))
		return;
	loop_add_task(s, child, t);
}

/* ---- exec ---- */

/* agenttrace(1): a command about to run as root without --user gets a warning
 * record (in the log; on stderr with -v), once, at its first exec. */
static void loop_warn_root(struct session *s, struct tracee *t)
{
	struct record r = { 0 };

	s->root_warned = true;
	if (s->switch_user ? s->uid != 0 : geteuid() != 0)
		return;
	info_msg("the command runs as root (no --user)");
	r.event = "warning";
	record_who(&r, t);
	r.kind = -1;
	r.port = -1;
	r.rule = "user.root";
	r.why = spawn_root_warning(s); /* names the capabilities it kept */
	record_emit(s, &r);
}

static void loop_exec(struct session *s, struct tracee *t)
{
	unsigned long msg = 0;
	pid_t former = 0;
	struct tracee *src = t;
	struct tracee_info *next;

	/* ptrace(2) "execve(2) under ptrace": an exec from a non-leader thread
	 * takes over the leader's tid; the event message holds the tid it
	 * had.  A group of one task has no other thread to exec: no need to
	 * ask (tracee_group_tasks() counts the same threads as the kernel). */
	if (tracee_group_tasks(&s->tasks, t->tgid) > 1 &&
	    ptrace(PTRACE_GETEVENTMSG, t->pid, 0L, &msg) == 0 && (pid_t)msg != t->pid) {
		former = (pid_t)msg;
		src = tracee_find(&s->tasks, former);
	}
	next = src ? src->pending_exec : NULL;
	if (src)
		src->pending_exec = NULL;
	if (src && src != t)
		tracee_remove(&s->tasks, src->pid);
	if (!next)
		next = loop_info_from_proc(t->pid);
	tracee_info_unref(t->info);
	t->info = next;
	tracee_info_unref(t->pending_exec);
	t->pending_exec = NULL;

	/* A new address space: the unwinder's view of the old one is stale. */
	backtrace_forget(t->pid);
	if (former)
		backtrace_forget(former);
	if (s->record_all) {
		struct record r = { 0 };
		struct elf_facts elf;
		char exe[64];
		int fd;

		r.event = "exec";
		record_who(&r, t);
		r.kind = -1;
		r.port = -1;
		if (t->info) {
			r.loader = t->info->loader;
			r.script_path = t->info->script;
			r.program_name = t->info->name;
		}
		/* /proc/PID/exe names the very file the kernel ran. */
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
		fd = open(exe, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (elfinfo_read_fd(fd, &elf) == 0)
				r.elf = &elf;
			close(fd);
		}
		record_emit(s, &r);
	}
}

/* ---- exits ---- */

static void loop_exited(struct session *s, pid_t pid, int status)
{
	struct tracee *t = tracee_find(&s->tasks, pid);

	landlock_race_forget(pid);
	if (pid == s->main_pid) {
		s->main_done = true;
		signals_forward_stop();
		s->main_status = status;
		if (t && !s->main_info)
			s->main_info = tracee_info_ref(t->info);
	}
	if (!t) {
		loop_gone_add(pid);
		return;
	}
	if (t->pid == t->tgid && s->record_all) {
		struct record r = { 0 };

		r.event = "exit";
		record_who(&r, t);
		r.no_cwd = true;
		r.kind = -1;
		r.port = -1;
		r.has_exit = true;
		r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		record_emit(s, &r);
	}
	if (t->pid == t->tgid)
		backtrace_forget(pid);
	tracee_remove(&s->tasks, pid);
}

/* ---- dispatch ---- */

static void loop_handle(struct session *s, pid_t pid, int status)
{
	struct tracee *t;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		loop_exited(s, pid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	event = (int)((unsigned)status >> 16);
	t = tracee_find(&s->tasks, pid);
	if (!t) {
		/* A new task whose first stop came before its parent's
		 * fork/clone event. */
		t = loop_add_task(s, pid, NULL);
		if (!t) {
			loop_resume(pid, 0);
			return;
		}
	}
	switch (event) {
	case PTRACE_EVENT_SECCOMP:
		loop_seccomp(s, t);
		if (landlock_race_armed(pid)) {
			/* The race detector wants this call's exit stop. */
			if (ptrace(PTRACE_SYSCALL, pid, 0L, 0L) < 0) {
				landlock_race_forget(pid);
				loop_resume(pid, 0);
			}
		} else {
			loop_resume(pid, 0);
		}
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		loop_spawned(s, t);
		loop_resume(pid, 0);
		break;
	case PTRACE_EVENT_EXEC:
		loop_exec(s, t);
		loop_resume(pid, 0);
		/* After the resume: the command need not wait for the record
		 * (the first of a session, the costliest to write). */
		if (t->pid == s->main_pid && !s->root_warned)
			loop_warn_root(s, t);
		break;
	case PTRACE_EVENT_STOP:
		if (stops_is_stop_signal(sig))
			stops_group_stop(pid);
		else
			loop_resume(pid, 0);
		break;
	case 0:
		if (sig == (SIGTRAP | 0x80)) {
			/* The race detector's exit stop; no other is asked for. */
			landlock_race_exit(s, t);
			loop_resume(pid, 0);
		} else
			loop_resume(pid, stops_deliver(s, t, sig));
		break;
	default:
		loop_resume(pid, 0);
		break;
	}
}

struct loop_left {
	pid_t *v;
	size_t n;
};

static void loop_collect_left(struct tracee *e, void *arg)
{
	struct loop_left *l = arg;

	if (e->pid != e->tgid)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = e->pid;
}

/* Handles the stops already queued, without waiting; at most max. */
static void loop_drain(struct session *s, unsigned max)
{
	int status;
	pid_t pid;

	while (max-- > 0) {
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		loop_handle(s, pid, status);
	}
}

/* Handles events until the task table holds no process, no child is left
 * (ECHILD), or deadline_ms (session time) has passed. */
static void loop_settle(struct session *s, uint64_t deadline_ms)
{
	int status;
	pid_t pid;

	for (;;) {
		uint64_t now = session_elapsed_ms(s);

		if (now >= deadline_ms)
			break;
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid > 0) {
			loop_handle(s, pid, status);
			if (s->tasks.procs == 0)
				break;
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		limits_check(s);
		signals_wait((long)(deadline_ms - now));
	}
}

void loop_run(struct session *s, pid_t **left, size_t *n_left)
{
	struct loop_left l = { NULL, 0 };
	unsigned since_poll = 0;
	int status;
	pid_t pid;

	if (signals_forward_start(s->main_pid) < 0)
		warn_errno("cannot forward signals to the command");
	limits_start(s);
	resolver_run(s);
	while (!s->main_done) {
		/* Without a deadline, block in waitpid(): one system call per
		 * stop.  With one, poll and sleep in sigtimedwait() until it. */
		long wait_ms = limits_next_ms(s);

		pid = waitpid(-1, &status, __WALL | (wait_ms >= 0 ? WNOHANG : 0));
		if (pid > 0) {
			loop_handle(s, pid, status);
			/* A tracee that never stops for long would starve the
			 * deadline checks: poll them now and then. */
			if (++since_poll >= 256) {
				since_poll = 0;
				limits_check(s);
			} else if (s->term_at_ms || s->kill_at_ms) {
				limits_check(s);
			}
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			/* ECHILD: no tracee left; the main process is gone. */
			if (errno != ECHILD)
				warn_errno("waitpid");
			s->main_done = true;
			signals_forward_stop();
			break;
		}
		limits_check(s);
		signals_wait(limits_next_ms(s));
	}
	/* Processes exiting together with the main one are already queued.
	 * After a timeout the others got SIGTERM too: let them end (the
	 * SIGKILL deadline still applies) before calling them left over. */
	loop_drain(s, 10000);
	if (s->tasks.procs && s->kill_at_ms)
		loop_settle(s, s->kill_at_ms + 100);
	tracee_foreach(&s->tasks, loop_collect_left, &l);
	for (size_t i = 0; i < l.n; i++)
		kill(l.v[i], SIGKILL);
	/* agenttrace is their subreaper (spawn.c): reap them, so that no
	 * zombie outlives the session either. */
	if (l.n)
		loop_settle(s, session_elapsed_ms(s) + 2000);
	*left = l.v;
	*n_left = l.n;
}
