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
#include "tracer/syscall/call.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/limits.h"
#include "tracer/ptrace/loop.h"
#include "tracer/ptrace/spawn.h"
#include "tracer/ptrace/signal-scope.h"
#include "tracer/confine/survive.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/hosts.h"
#include "tracer/shim/preload-mode.h"
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

/* Where the host name of the net event being recorded came from. */
static const char *loop_host_source;

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

/* ---- records of one call ---- */

static bool loop_is_open(const char *name)
{
	return name && (strncmp(name, "open", 4) == 0 || strcmp(name, "creat") == 0);
}

static const char *loop_family_name(int family)
{
	switch (family) {
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_UNIX: return "unix";
	default: return NULL;
	}
}

/* Fills the object fields of r from event i of c (and the second path of
 * a two-path call).  addr must hold INET6_ADDRSTRLEN bytes. */
static void loop_record_object(struct record *r, const struct call *c, size_t i, char *addr)
{
	const struct rules_event *ev = &c->events[i];

	r->kind = (int)ev->kind;
	r->syscall = c->name;
	r->port = -1;
	switch (ev->kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		r->path = c->n_events > 1 ? c->events[0].path : ev->path;
		if (c->n_events > 1 && c->events[1].kind == c->events[0].kind)
			r->path2 = c->events[1].path;
		if (loop_is_open(c->name)) {
			r->flags = c->flags;
			r->has_flags = true;
		}
		break;
	case RULES_KIND_NET:
		r->family = loop_family_name(ev->family);
		if (record_addr_text(ev, addr, 4096))
			r->addr = addr;
		if (ev->family != AF_UNIX)
			r->port = ev->port;
		r->host = ev->host;
		r->host_source = ev->family != AF_UNIX ? loop_host_source : NULL;
		break;
	case RULES_KIND_EXEC:
		r->target = ev->exe;
		r->target_argv = ev->argv;
		r->target_argc = ev->argc;
		break;
	default:
		break;
	}
}

/* ---- seccomp stops ---- */

/* The calling code's frames, for an alert: taken while the task is still
 * in its seccomp stop, bounded in depth and time (tracer/inspect/backtrace.h). */
static void loop_backtrace(struct record *r, const struct tracee *t)
{
	static struct bt_frame frames[BACKTRACE_DEPTH];
	int n;

	/* The names come from libelf: opened before the clock starts. */
	elfinfo_ready();
	n = backtrace_take(t->pid, frames, BACKTRACE_DEPTH, BACKTRACE_BUDGET_US);

	if (n > 0) {
		r->frames = frames;
		r->n_frames = n;
	}
}

static void loop_bypass(struct session *s, struct tracee *t, struct call *c)
{
	struct record r = { 0 };

	r.event = "alert";
	record_who(&r, t);
	r.action = "deny"; /* also in audit mode: see agenttrace(1) */
	r.kind = SESSION_KIND_SYSCALL;
	r.syscall = c->name;
	r.port = -1;
	r.err = c->bypass_errno;
	r.rule = c->bypass_id ? c->bypass_id : "syscall.bypass";
	r.why = c->bypass_why;
	loop_backtrace(&r, t);
	record_emit(s, &r);
	call_deny(t->pid, c->bypass_errno);
}

static bool loop_missing(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* Net events: the host name behind the address (hosts.h), so that rules
 * naming hosts match and records say which name.  -1 for the shim's own
 * sendto to the channel: let through unrecorded, after making room in
 * the queue (the shim never waits for the supervisor). */
static int loop_net_names(struct session *s, struct call *c)
{
	enum channel_source src;

	for (size_t i = 0; i < c->n_events && i < 2; i++) {
		struct rules_event *ev = &c->events[i];

		if (ev->kind != RULES_KIND_NET)
			continue;
		if (ev->family == AF_UNIX && channel_is_self(s, ev->unix_path)) {
			channel_drain(s);
			return -1;
		}
		if (ev->family != AF_INET && ev->family != AF_INET6)
			continue;
		channel_drain(s);
		hosts_resolve(s);
		ev->host = hosts_lookup(s->hosts, ev->family, ev->addr, &src);
		loop_host_source = !ev->host ? "none" :
				   src == CHANNEL_SOURCE_RESOLVER ? "resolver" : "shim";
	}
	return 0;
}

static void loop_decide(struct session *s, struct tracee *t, struct call *c)
{
	struct rules_verdict v[2], worst = { RULES_ACTION_ALLOW, NULL };
	size_t wi = 0, n = c->n_events < 2 ? c->n_events : 2;
	enum rules_action eff;
	struct record r = { 0 };
	char addr[4096], suggest[PATH_MAX + 128];
	static char script[RECORD_SCRIPT_MAX];
	static struct elf_facts elf;

	if (n == 0)
		return;
	if (loop_net_names(s, c) < 0)
		return; /* the shim's own message to the supervisor */
	for (size_t i = 0; i < n; i++) {
		if (rules_decide(s->policy, &c->events[i], &v[i]) < 0) {
			/* An event kind the engine does not know: fail closed. */
			v[i].action = RULES_ACTION_DENY;
			v[i].rule = NULL;
		} else if (c->explicit_deny_only[i] &&
			   v[i].rule == rules_rule_at(s->policy, s->policy->fallback[c->events[i].kind])) {
			v[i].action = RULES_ACTION_ALLOW;
		}
		if (i == 0 || v[i].action > worst.action) {
			worst = v[i];
			wi = i;
		}
	}
	eff = rules_effective(s->policy, worst.action);

	/* execvp() tries every PATH directory: a candidate that does not
	 * exist fails in the kernel with ENOENT whatever the policy says.
	 * Refusing it with that same errno keeps execvp's search (and the
	 * 127 of a missing program) intact and spares one record per PATH
	 * entry; nothing runs either way.  execve only: execveat of an fd
	 * names "/memfd:x (deleted)" and the like, which is no path. */
	if (worst.action != RULES_ACTION_ALLOW && c->events[wi].kind == RULES_KIND_EXEC &&
	    c->name && strcmp(c->name, "execve") == 0 && c->events[wi].exe &&
	    loop_missing(c->events[wi].exe)) {
		if (eff == RULES_ACTION_DENY)
			call_deny(t->pid, ENOENT);
		return;
	}
	/* The same for mkdir of a name that exists: the kernel answers
	 * EEXIST before it checks any permission (fs/namei.c
	 * filename_create()), and `mkdir -p /abs/dir` tries every ancestor.
	 * Nothing can change; no record. */
	if (worst.action != RULES_ACTION_ALLOW && c->n_events == 1 &&
	    c->events[0].kind == RULES_KIND_WRITE && c->events[0].path && c->name &&
	    (strcmp(c->name, "mkdir") == 0 || strcmp(c->name, "mkdirat") == 0) &&
	    !loop_missing(c->events[0].path)) {
		if (eff == RULES_ACTION_DENY)
			call_deny(t->pid, EEXIST);
		return;
	}

	/* Issue 6: the Landlock backstop's coverage, what survives the
	 * session, the race detector (landlock.h, survive.h). */
	if (eff != RULES_ACTION_DENY &&
	    (c->events[0].kind == RULES_KIND_WRITE || c->events[wi].kind == RULES_KIND_WRITE)) {
		if (landlock_deny_uncovered(s, t, c))
			return;
		for (size_t i = 0; i < n; i++)
			if (c->events[i].kind == RULES_KIND_WRITE)
				survive_note(s->survive, c->events[i].path);
		landlock_race_arm(s, t->pid, c);
	}

	if (eff == RULES_ACTION_DENY)
		call_deny(t->pid, c->deny_errno);
	else if (c->events[wi].kind == RULES_KIND_EXEC) {
		/* The program this task becomes if the exec succeeds. */
		const struct rules_event *ev = &c->events[wi];

		tracee_info_unref(t->pending_exec);
		t->pending_exec = tracee_info_new(ev->exe ? ev->exe : "", ev->argv, ev->argc);
	}

	if (worst.action == RULES_ACTION_ALLOW) {
		const char *event;

		if (!s->record_all || c->events[wi].kind == RULES_KIND_EXEC)
			return; /* execs are recorded when they happen (PTRACE_EVENT_EXEC) */
		if (c->events[wi].kind == RULES_KIND_NET)
			event = "connect";
		else if (c->events[wi].kind == RULES_KIND_READ || loop_is_open(c->name))
			event = "open";
		else
			event = "write";
		r.event = event;
		r.action = "allow";
		record_who(&r, t);
		loop_record_object(&r, c, wi, addr);
		r.rule = worst.rule ? rules_string(s->policy, worst.rule->id) : NULL;
		record_emit(s, &r);
		return;
	}

	r.event = "alert";
	r.action = rules_action_name(eff);
	record_who(&r, t);
	loop_record_object(&r, c, wi, addr);
	if (eff == RULES_ACTION_DENY)
		r.err = c->deny_errno;
	if (worst.rule) {
		r.rule = rules_string(s->policy, worst.rule->id);
		r.why = rules_string(s->policy, worst.rule->why);
	} else {
		r.rule = "engine.error";
		r.why = "the policy engine could not decide this event";
	}
	/* SPEC §6: every alert suggests the rule that admits its event (for
	 * an alert rule: the allow-list entry a strict policy would need). */
	if (worst.action != RULES_ACTION_ALLOW &&
	    record_suggest(c->events[wi].kind, &c->events[wi], suggest, sizeof(suggest)))
		r.suggest = suggest;
	if (c->events[wi].kind == RULES_KIND_EXEC) {
		const struct rules_event *ev = &c->events[wi];

		r.script_len = record_script(t->pid, ev->exe, ev->argv, ev->argc, script,
					     sizeof(script));
		r.script = script;
		if (ev->exe && elfinfo_read(ev->exe, &elf) == 0)
			r.elf = &elf;
	}
	loop_backtrace(&r, t);
	record_emit(s, &r);
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

/* SPEC §2: a command about to run as root without --user gets a warning
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
		if (signals_is_stop(sig))
			signals_group_stop(pid);
		else
			loop_resume(pid, 0);
		break;
	case 0:
		if (sig == (SIGTRAP | 0x80)) {
			/* The race detector's exit stop; no other is asked for. */
			landlock_race_exit(s, t);
			loop_resume(pid, 0);
		} else
			loop_resume(pid, signals_deliver(s, t, sig));
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

	if (s->preload_only) {
		preload_mode_run(s, left, n_left);
		return;
	}
	if (signals_forward_start(s->main_pid) < 0)
		warn_errno("cannot forward signals to the command");
	limits_start(s);
	hosts_resolve(s);
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
