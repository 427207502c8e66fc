/* The engine-neutral handling of a call the filter sent (tracer/stop.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "tracer/confine/endpoints.h"
#include "tracer/confine/content.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/limits.h"
#include "tracer/confine/mask.h"
#include "tracer/confine/signal-scope.h"
#include "tracer/confine/alerted.h"
#include "tracer/confine/cachecode.h"
#include "tracer/confine/gitfind.h"
#include "tracer/confine/survive.h"
#include "tracer/inspect/proc.h"
#include "tracer/judge.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/session.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/resolver.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/path.h"

/* PID's parent; 0 when it cannot be read. */
static pid_t stop_parent_of(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) == 0 ? st.ppid : 0;
}

/* A task of the table, or a child of one that the table no longer holds
 * (or not yet): one that has exited and waits, a zombie, for its parent
 * to reap it (the supervisor saw its end first: a runtime that spawns a
 * short command opens a pidfd of it afterwards), or one whose creation
 * event is still to come.  Every child of a session task is the
 * session's: nothing outside can become one. */
bool stop_in_session(pid_t pid, void *arg)
{
	struct session *s = arg;
	pid_t parent;

	if (tracee_find(&s->tasks, pid))
		return true;
	parent = pid > 0 ? stop_parent_of(pid) : 0;
	return parent > 0 && tracee_find(&s->tasks, parent) != NULL;
}

static void stop_fail(struct stop_answer *a, int err)
{
	a->how = STOP_RETURN;
	a->ret = -(long)err;
}

static bool stop_is_open(const char *name)
{
	return name && (strncmp(name, "open", 4) == 0 || strcmp(name, "creat") == 0);
}

static void stop_bypass(struct session *s, struct tracee *t, struct call *c,
			struct stop_answer *a)
{
	struct judge_call jc = { .syscall = c->name };
	struct judge_verdict v;
	struct judge_who w;

	judge_who_of_task(&w, t);
	/* Denied also in audit mode: see agenttrace(1).  The answer comes
	 * first: an engine may give it before the record is written. */
	stop_fail(a, c->bypass_errno);
	judge_own(&v, SESSION_KIND_SYSCALL, 0, RULES_ACTION_DENY,
		  c->bypass_id ? c->bypass_id : "syscall.bypass", c->bypass_why, c->bypass_errno);
	judge_record(s, &w, &jc, &v);
}

/* Whether a rule with "under" can be asked about one of the call's N
 * events: only then is the caller's line walked. */
static bool stop_wants_lineage(const struct rules_policy *p, const struct call *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p->under_kinds & (1u << c->events[i].kind))
			return true;
	return false;
}

/* The shim's own sendto to the channel: let through unrecorded, after
 * making room in the queue (the shim never waits for the supervisor).
 * Before an inet event is decided, the names the shim reported are read,
 * so that rules naming hosts match. */
static bool stop_channel_first(struct session *s, const struct call *c)
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

/* sendmmsg to more destinations than one call's events hold, under an
 * engine that cannot cut the call short: refused, with a record. */
static void stop_uncuttable(struct session *s, struct tracee *t, struct call *c,
			    struct stop_answer *a)
{
	struct judge_call jc = { .syscall = c->name, .events = c->events, .n_events = 1 };
	struct judge_verdict v;
	struct judge_who w;

	stop_fail(a, EACCES);
	judge_own(&v, SESSION_KIND_NET, 0, RULES_ACTION_DENY, "net.sendmmsg-destinations",
		  "a sendmmsg to more than two destinations cannot be judged in one go by this "
		  "engine; send to fewer at a time (or use --engine ptrace)", EACCES);
	judge_who_of_task(&w, t);
	judge_record(s, &w, &jc, &v);
}

/* Whose the local destinations of C are (tracer/confine/endpoints.h),
 * looked up where the verdict can depend on it: always when the policy's
 * denies name "session" (rules_endpoint_first()), else when nothing but
 * the local fallback would decide the event. */
static void stop_endpoints(struct session *s, struct tracee *t, struct call *c,
			   struct judge_call *jc)
{
	const struct rules_rule *local =
		rules_rule_at(s->policy, s->policy->fallback_net[RULES_NET_FB_LOCAL]);

	judge_names(s, jc);
	for (size_t i = 0; i < jc->n_events; i++) {
		struct rules_event *ev = &c->events[i];
		struct endpoint_found f;

		if (ev->kind != RULES_KIND_NET || !rules_net_local(ev) || !s->endpoints)
			continue;
		if (!rules_endpoint_first(s->policy)) {
			struct rules_verdict v;

			if (rules_decide(s->policy, ev, &v) < 0 || v.rule != local)
				continue;
		}
		endpoints_find(s->endpoints, t->tgid, (int)c->args[0], ev, &f);
		endpoints_note_autobind(s->endpoints, f.copy);
		ev->endpoint = f.endpoint;
		jc->local_answer[i] = f.answer;
		jc->listener[i] = f.listener;
		if (i == 0) {
			c->sock_dev = f.vfs_dev;
			c->sock_ino = f.vfs_ino;
		}
		if (f.copy >= 0 && i == 0 && c->sockaddr_len) {
			s->endpoint_copy = f.copy; /* a connect or send: judged on this socket */
		} else if (f.copy >= 0) {
			close(f.copy);
		}
	}
}

/* listen(2): the address it takes connections on, judged as a bind (an
 * event of C; endpoints_listen_event()). */
static void stop_listen(struct tracee *t, struct call *c)
{
	int copy = endpoints_copy(t->tgid, (int)c->args[0]);

	if (copy < 0)
		return; /* EBADF and the like: the kernel's own answer */
	if (endpoints_listen_event(copy, &c->events[0]) == 1)
		c->n_events = 1;
	close(copy);
}

/* An allowed write, to what survives the session (survive.h): a path the
 * policy admits by a rule named write.agent-state.NAME[.MORE] is that
 * agent's own state (agenttrace-policy(5), AGENT STATE), counted apart
 * from the user's files.  The event's own rule: the call's verdict names
 * only the one that decided it. */
#define STOP_STATE_PREFIX "write.agent-state."

static void stop_survive(struct session *s, struct tracee *t, const struct call *c, size_t i)
{
	const struct rules_event *ev = &c->events[i];
	struct rules_verdict rv;
	const char *id, *name;
	struct stat st;

	if (!survive_counts(s->survive, ev->path))
		return;
	/* mkdir -p makes every ancestor again: EEXIST, nothing changed. */
	if ((strncmp(c->name, "mkdir", 5) == 0 || strncmp(c->name, "mknod", 5) == 0) &&
	    lstat(ev->path, &st) == 0)
		return;
	if (rules_decide(s->policy, ev, &rv) == 0 && rv.action == RULES_ACTION_ALLOW) {
		id = rules_string(s->policy, rv.rule->id);
		cachecode_check(s, t, c, i, id);
		if (strncmp(id, STOP_STATE_PREFIX, strlen(STOP_STATE_PREFIX)) == 0) {
			name = id + strlen(STOP_STATE_PREFIX);
			if (*name && *name != '.') {
				survive_note_counted(s->survive, SURVIVE_AGENT_STATE, name,
						     strcspn(name, "."), ev->path);
				return;
			}
		}
		if (cachecode_is_cache(id)) {
			survive_note_counted(s->survive, SURVIVE_CACHE, id, strlen(id), ev->path);
			return;
		}
	}
	survive_note(s->survive, ev->path);
}

/* The judge's view of decoded call C, its events those at EVENTS. */
static struct judge_call stop_judge_call(const struct call *c, struct rules_event *events)
{
	return (struct judge_call){
		.syscall = c->name,
		.events = events,
		.n_events = c->n_events < RULES_CALL_EVENTS ? c->n_events : RULES_CALL_EVENTS,
		.explicit_deny_only = c->explicit_deny_only,
		.names_unsure = c->path_via[0] > 0 || c->path_via[1] > 0,
		.has_flags = stop_is_open(c->name),
		.flags = c->flags,
		.deny_errno = c->deny_errno,
		.exec_recorded_later = true,
	};
}

int stop_reached_linked(struct session *s, const struct call *c, const struct linked_file *f,
			struct judge_verdict *v)
{
	struct rules_event evs[RULES_CALL_EVENTS];
	struct judge_call jc = stop_judge_call(c, evs);

	memcpy(evs, c->events, sizeof(evs));
	judge_decide_reached(s, &jc, f, v);
	return v->err;
}

int stop_decide_again(struct session *s, const struct call *c, struct judge_verdict *v)
{
	struct rules_event evs[RULES_CALL_EVENTS];
	struct judge_call jc = stop_judge_call(c, evs);

	memcpy(evs, c->events, sizeof(evs));
	judge_decide(s, &jc, v);
	return v->err;
}

void stop_record_reached(struct session *s, pid_t tid, const struct call *c,
			 const struct judge_verdict *v)
{
	struct rules_event evs[RULES_CALL_EVENTS];
	struct judge_call jc = stop_judge_call(c, evs);
	struct tracee *t = tracee_find(&s->tasks, tid);
	struct judge_who w;

	if (v->action == RULES_ACTION_ALLOW || !t)
		return;
	memcpy(evs, c->events, sizeof(evs));
	judge_who_of_task(&w, t);
	judge_record(s, &w, &jc, v);
}

/* The files the program T is about to run opens itself by names it was
 * given (execid.h, struct exec_pin), noted with the files they reach now:
 * each loader's program, the interpreter's script (ID), and the script of
 * a "#!" exec, whose name as called the kernel hands its interpreter. */
static void stop_pin_opens(struct session *s, struct tracee *t, const struct call *c,
			   const struct identity *id)
{
	struct tracee_info *i = t->pending_exec;
	bool script_exec = !t->pending_exec_id.direct && c->exe_text[0];
	bool relative = script_exec && c->exe_text[0] != '/';
	char cwd[PATH_MAX];
	const char *at = NULL;
	int view;

	if (!script_exec && !id->n_opens)
		return;
	for (unsigned k = 0; k < id->n_opens; k++)
		relative |= id->opens_text[k][0] != '/';
	if (relative && path_fd(t->pid, AT_FDCWD, cwd, sizeof(cwd)) == 0)
		at = cwd;
	view = mask_view_fd(s, t->pid);
	if (view < 0 && view != AT_FDCWD)
		return;
	if (script_exec &&
	    exec_pin_make(&i->pins[i->n_pins], view, t->pid, c->exe_text, at, c->exe, false))
		i->n_pins++;
	for (unsigned k = 0; k < id->n_opens && i->n_pins < EXEC_PINS_MAX; k++)
		if (exec_pin_make(&i->pins[i->n_pins], view, t->pid, id->opens_text[k], at,
				  id->opens_path[k], id->script && k + 1 == id->n_opens))
			i->n_pins++;
}

struct exec_pin *stop_pinned(const struct tracee *t, const struct call *c)
{
	/* What runs is read: an open for writing of the name is the write
	 * rules' to judge. */
	if (!c->is_open || c->n_events < 1 || !t || !t->info || !t->info->n_pins ||
	    (c->flags & O_ACCMODE) != O_RDONLY || (c->flags & (O_CREAT | O_TRUNC)))
		return NULL;
	return exec_pin_find(t->info->pins, t->info->n_pins, c->text_hash, t->pid);
}

int stop_pin_reached(struct session *s, pid_t tid, int kind, struct exec_pin *pin, int fd,
		     const struct stat *st, struct judge_verdict *v, char *why, size_t size)
{
	struct tracee *t = tracee_find(&s->tasks, tid);
	struct rules_event ev = { .kind = RULES_KIND_EXEC };
	struct rules_verdict rv;
	const char *argv[2];
	char got[PATH_MAX];
	bool audit;

	if (!t || !t->info || path_fd_name(fd, got, sizeof(got)) != 0) {
		snprintf(why, size, "the program opened, by the name it was given to run, another "
				    "file than the one judged at its exec, which cannot be named: the "
				    "open was refused");
	} else {
		/* As the program or script it becomes; its arguments were
		 * judged at the exec. */
		if (pin->script) {
			ev.exe = t->info->exe;
			argv[0] = t->info->argc ? t->info->argv[0] : t->info->exe;
			argv[1] = got;
			ev.argc = 2;
			ev.script = got;
			ev.script_arg = 1;
		} else {
			ev.exe = got;
			argv[0] = got;
			ev.argc = 1;
		}
		ev.argv = argv;
		if (rules_decide(s->policy, &ev, &rv) == 0 && rv.action != RULES_ACTION_DENY) {
			pin->dev = st->st_dev;
			pin->ino = st->st_ino;
			return 0;
		}
		audit = rules_effective(s->policy, RULES_ACTION_DENY) != RULES_ACTION_DENY;
		snprintf(why, size,
			 "the program opened, by the name it was given to run, %s in place of the "
			 "file judged at its exec (the name was swapped after the check), which "
			 "%s refuses to run%s",
			 got, rules_string(s->policy, rv.rule->id),
			 audit ? "" : ": the open was refused");
		if (audit) {
			judge_own(v, kind, 0, RULES_ACTION_ALERT, "race.exec", why, 0);
			pin->dev = st->st_dev;
			pin->ino = st->st_ino;
			return 0;
		}
	}
	judge_own(v, kind, 0, RULES_ACTION_DENY, "race.exec", why, EACCES);
	return EACCES;
}

static void stop_decide(struct session *s, struct tracee *t, struct call *c,
			struct stop_answer *a)
{
	struct judge_call jc = stop_judge_call(c, c->events);
	const struct rules_event *ev;
	struct judge_verdict v;
	struct judge_who w;
	struct identity_caller caller = { 0 };
	struct identity_env env = { 0 };
	static struct identity id;

	if (jc.n_events == 0 || stop_channel_first(s, c))
		return;
	if (stop_wants_lineage(s->policy, c, jc.n_events)) {
		/* The supervisor answers one call at a time: one line, kept. */
		static struct rules_event line[RULES_LINEAGE_MAX];
		bool cut;
		size_t n = tracee_info_lineage(t->info, line, RULES_LINEAGE_MAX, &cut);

		for (size_t i = 0; i < jc.n_events; i++) {
			c->events[i].lineage = line;
			c->events[i].n_lineage = n;
			c->events[i].lineage_cut = cut;
		}
	}
	if (c->events[0].kind == RULES_KIND_NET)
		stop_endpoints(s, t, c, &jc);
	if (c->events[0].kind == RULES_KIND_EXEC) {
		/* The program the exec runs, in the caller's view; the caller's
		 * own program, for a "#!" chain through env. */
		jc.id = &id;
		id.env_searched = false;
		jc.view_pid = t->pid;
		if (t->info) {
			caller.exe = t->info->exe;
			caller.argv = (const char *const *)t->info->argv;
			caller.argc = t->info->argc;
		}
		jc.caller = &caller;
		/* envp: execve's third argument, execveat's fourth */
		env.envp = c->args[strcmp(c->name, "execveat") ? 2 : 3];
		jc.env = &env;
	}
	judge_decide(s, &jc, &v);
	/* Rules that judge content: a replacement the supervisor makes, a
	 * chmod, a rename that would move such files from under the check. */
	if (content_stop(s, t, c, &jc, &v, a))
		return;
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
			/* A symlink's target is named, not written. */
			if (v.effective == RULES_ACTION_ALERT && ev->kind == RULES_KIND_WRITE)
				alerted_note(s->alerted, ev->path, v.rule ?
					     rules_string(s->policy, v.rule->id) : v.rule_id);
			for (size_t i = 0; i < jc.n_events; i++)
				if (c->events[i].kind == RULES_KIND_WRITE) {
					if (!c->explicit_deny_only[i]) {
						stop_survive(s, t, c, i);
						gitfind_note(&s->gitfind, c->name,
							     c->events[i].path, t);
					}
					installs_note_write(&s->installs, c->events[i].path);
				}
			a->race_watch = true;
		}
	}

	if (v.err) {
		stop_fail(a, v.err);
	} else if (!v.quiet && ev->kind == RULES_KIND_EXEC) {
		/* The program this task becomes if the exec succeeds, and the
		 * file it is to load (checked at the exec event).  A name that
		 * does not resolve now is answered as the kernel would answer
		 * it: the caller's memory could hold another by the time the
		 * kernel reads it.  The exec as called: the events after it
		 * are the interpreters its "#!" lines run (judge.c), which
		 * exec_id_of() follows itself. */
		int r;

		ev = &c->events[0];
		if (jc.exec_id_ready) {
			t->pending_exec_id = jc.exec_id;
			r = jc.exec_id_rc;
		} else {
			r = exec_id_of(ev->exe, &t->pending_exec_id);
		}
		if (r == 0 && jc.script_lines) {
			t->pending_exec_id.lines = jc.script_lines;
			memcpy(t->pending_exec_id.lines_sha, jc.script_lines_sha,
			       sizeof(jc.script_lines_sha));
		}
		/* An interpreter's search for its script read the exec's
		 * environment: the program must start with that one. */
		t->pending_exec_id.env_searched = r == 0 && id.env_searched;
		memcpy(t->pending_exec_id.env_sha, id.env_sha, sizeof(id.env_sha));

		if (r < 0) {
			stop_fail(a, -r);
		} else {
			tracee_info_unref(t->pending_exec);
			t->pending_exec = tracee_info_new_exec(id.exe ? id.exe : "", ev->argv, ev->argc,
							       id.loader, id.script,
							       id.script ? id.script_name : id.exe_name);
			t->pending_exec->script_arg = id.script_arg;
			stop_pin_opens(s, t, c, &id);
			/* npm's install scripts, pip's builds (installed.h). */
			installs_note_exec(&s->installs, t->pid, caller.argv, caller.argc, ev->argv,
					   ev->argc);
		}
	}
	judge_who_of_task(&w, t);
	judge_record(s, &w, &jc, &v);
}

void stop_release_copy(struct session *s)
{
	if (s->endpoint_copy >= 0) {
		close(s->endpoint_copy);
		s->endpoint_copy = -1;
	}
}

void stop_handle(struct session *s, struct tracee *t, const struct arch_stop *st,
		 const struct stop_engine *e, struct stop_answer *a)
{
	struct call *c = s->call;
	struct call_ctx ctx = { stop_in_session, s };
	int r;

	memset(a, 0, sizeof(*a));
	s->stops++;
	stop_release_copy(s);
	/* A fork allowed earlier has returned by now (its new task was seen,
	 * or the kernel failed it): it no longer counts as pending. */
	tracee_set_spawn_pending(&s->tasks, t, false);
	r = st ? call_decode_at(t->pid, &ctx, st, c) : call_decode(t->pid, &ctx, c);
	if (r < 0) {
		if (r == -ESRCH)
			return; /* gone */
		debug_msg("pid %d: cannot decode %s: %s", (int)t->pid,
			  c->name ? c->name : "a call", strerror(-r));
		/* Memory the supervisor cannot read may still be read by the
		 * kernel in the caller's own context (memfd_secret(2) pages):
		 * a call judged on nothing never runs.  A bad pointer gets
		 * the EFAULT the kernel would give it. */
		stop_fail(a, r == -EFAULT ? EFAULT : -r);
		return;
	}
	if (c->canary) {
		stop_fail(a, CALL_CANARY_ERRNO);
		return;
	}
	if (c->bypass) {
		stop_bypass(s, t, c, a);
		return;
	}
	if (c->kernel_errno) {
		stop_fail(a, c->kernel_errno);
		return;
	}
	if (c->signal_scope) {
		signal_scope_run(s, t, c, a); /* kill(-1), kill(0), kill(-pgrp) */
		return;
	}
	if (c->spawns) {
		if (!limits_spawn_allowed(s, t, c))
			stop_fail(a, EAGAIN);
		else if (!c->spawns_thread)
			tracee_set_spawn_pending(&s->tasks, t, true);
		return;
	}
	if (c->cut && !e->can_cut) {
		stop_uncuttable(s, t, c, a);
		return;
	}
	if (c->listens)
		stop_listen(t, c);
	stop_decide(s, t, c, a);
	/* A socket bound by the session is one of its endpoints, unless the
	 * call is refused. */
	if ((c->binds || (c->listens && c->n_events)) && a->how == STOP_RUN && s->endpoints)
		endpoints_note_bind(s->endpoints, t->tgid, (int)c->args[0],
				    c->n_events && c->events[0].kind == RULES_KIND_NET ? &c->events[0] :
											NULL,
				    c->bind_name);
	if (c->cut && a->how == STOP_RUN) {
		a->cut = true;
		a->cut_arg = c->cut_arg;
		a->cut_vlen = c->cut_vlen;
	}
}
