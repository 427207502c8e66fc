/* The shared decide-and-record step (tracer/judge.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "lib/alternatives.h"
#include "lib/syscall-open.h"
#include "lib/xalloc.h"
#include "rules/suggest.h"
#include "tracer/confine/endpoints.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/inspect/execid.h"
#include "tracer/inspect/pyframes.h"
#include "tracer/inspect/script.h"
#include "tracer/judge.h"
#include "tracer/record/record.h"
#include "tracer/session.h"
#include "tracer/syscall/path.h"
#include "tracer/syscall/table.h"
#include "tracer/shim/hosts.h"

/* ---- deciding ---- */

#define JUDGE_ON_THE_WAY_RULE "write.on-the-way"

void judge_names(struct session *s, struct judge_call *c)
{
	for (size_t i = 0; i < c->n_events && i < RULES_CALL_EVENTS; i++) {
		struct rules_event *ev = &c->events[i];
		enum channel_source src = 0;

		if (ev->kind != RULES_KIND_NET || ev->host || ev->bind ||
		    (ev->family != AF_INET && ev->family != AF_INET6))
			continue;
		ev->host = hosts_lookup(s->hosts, ev->family, ev->addr, &src);
		c->host_source[i] = ev->host ? src : 0;
	}
}

static bool judge_missing(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

static bool judge_is(const char *name, const char *a, const char *b)
{
	return name && (strcmp(name, a) == 0 || (b && strcmp(name, b) == 0));
}

/* The kernel's own answer to a call the policy would refuse, when that
 * answer comes before any permission check and nothing can happen:
 * ENOENT (ENOTDIR), EEXIST, or 0 when there is none. */
static int judge_kernel_answer(const struct judge_call *c, const struct rules_event *ev)
{
	/* A local destination where nothing is: a missing socket file
	 * (ENOENT), a port or name nobody listens on (ECONNREFUSED).  A
	 * program waiting for its own server to come up sees what it would
	 * see without agenttrace. */
	if (ev->kind == RULES_KIND_NET && ev->endpoint == RULES_ENDPOINT_NONE &&
	    rules_net_local(ev) && c->local_answer[ev - c->events])
		return c->local_answer[ev - c->events];
	/* A name that came through a magic link may no longer lead to
	 * the object (an unlinked file, a deleted program run by its
	 * descriptor's link): no lookup of it stands for the kernel. */
	if (c->names_unsure)
		return 0;
	/* execvp() tries every PATH directory: a candidate that does not
	 * exist fails with ENOENT whatever the policy says.  Answering so
	 * keeps the search (and the 127 of a missing program) intact and
	 * spares a record per PATH entry.  execve only: execveat of an fd
	 * names "/memfd:x (deleted)" and the like, which is no path. */
	if (ev->kind == RULES_KIND_EXEC && judge_is(c->syscall, "execve", NULL) && ev->exe &&
	    judge_missing(ev->exe))
		return ENOENT;
	/* An open that cannot create, of a name that does not exist
	 * (lib/syscall-open.h): ENOENT, the answer the program would get
	 * without agenttrace.  Read rules are about what a program reads;
	 * there is nothing to read.  Only an open has flags; its events
	 * (a write and a read, lib/syscall-open.h) name one path. */
	if (c->has_flags && ev->path &&
	    (ev->kind == RULES_KIND_READ || ev->kind == RULES_KIND_WRITE)) {
		int missing = syscall_open_missing(c->flags, ev->path);

		if (missing)
			return missing;
	}
	/* mkdir of a name that exists: EEXIST before any permission check
	 * (fs/namei.c filename_create()), and `mkdir -p /abs/dir` tries
	 * every ancestor. */
	if (c->n_events == 1 && ev->kind == RULES_KIND_WRITE && ev->path &&
	    judge_is(c->syscall, "mkdir", "mkdirat") && !judge_missing(ev->path))
		return EEXIST;
	return 0;
}

/* Whether C's write events change names only (the syscall table's
 * SYSCALL_OPT_NAMES): an rm of a stray link of ~/.bashrc goes. */
static bool judge_names_only(const struct judge_call *c)
{
	const struct syscall_entry *e = c->has_flags ? NULL : syscall_lookup_name(c->syscall);

	return e && (e->opts & SYSCALL_OPT_NAMES);
}

/* The denied file (linked.h) event EV of C reaches by another of its
 * names; NULL: none. */
static const struct linked_file *judge_linked(const struct session *s, const struct judge_call *c,
					      const struct rules_event *ev)
{
	if (!linked_any(&s->linked) || !ev->path ||
	    (ev->kind != RULES_KIND_READ && (ev->kind != RULES_KIND_WRITE || judge_names_only(c))))
		return NULL;
	return linked_other_name(&s->linked, ev->path);
}

/* The events as the policy judges them: an exec as the program it runs
 * (its identity, once found), a read of an unlinked file as a read of
 * the name it had (lib/syscall-open.h), a read or a write of another
 * name of a denied file as one of that file's name (LINKED[i] then that
 * file, when LINKED is not NULL), the others as they are.  OUT and
 * LINKED hold RULES_CALL_EVENTS. */
static const struct rules_event *judge_events(const struct session *s, const struct judge_call *c,
					      struct rules_event *out,
					      const struct linked_file **linked)
{
	static char unlinked[RULES_CALL_EVENTS][PATH_MAX];
	const struct linked_file *named[RULES_CALL_EVENTS] = { NULL };
	bool exec = c->id && c->id_ready && c->n_events && c->events[0].kind == RULES_KIND_EXEC;
	bool rewritten = false;

	for (size_t i = 0; i < c->n_events && i < RULES_CALL_EVENTS; i++) {
		rewritten |= c->events[i].kind == RULES_KIND_READ && syscall_unlinked(c->events[i].path);
		named[i] = judge_linked(s, c, &c->events[i]);
		rewritten |= named[i] != NULL;
		if (linked)
			linked[i] = named[i];
	}
	if (!exec && !rewritten)
		return c->events;
	for (size_t i = 0; i < c->n_events && i < RULES_CALL_EVENTS; i++) {
		const char *name;

		out[i] = c->events[i];
		if (named[i])
			out[i].path = named[i]->path;
		else if (out[i].kind == RULES_KIND_READ &&
			 (name = syscall_unlinked_name(out[i].path, unlinked[i], sizeof(unlinked[i]))))
			out[i].path = name;
	}
	if (exec)
		identity_apply(c->id, &out[0]);
	return out;
}

static void judge_identity(struct judge_call *c)
{
	const struct rules_event *ev = c->n_events ? &c->events[0] : NULL;

	if (!c->id || c->id_ready || !ev || ev->kind != RULES_KIND_EXEC)
		return;
	identity_of_exec(c->id, c->view_pid, ev->exe, ev->argv, ev->argc, c->caller, c->env);
	c->id_ready = true;
}

/* The interpreters an exec of a "#!" script runs (fs/binfmt_script.c):
 * the kernel runs each level's interpreter with the line's argument and
 * the file's name before the arguments that file got.  Each is judged as
 * an exec of its own, after the exec as called, so that a project script
 * whose line names a temp program (or the loader, or an interpreter,
 * given one) does not run what an exec of it would be refused: C's events
 * become a copy of its own with them added.  Deeper lines than the events
 * can hold: DEEP is set, the exec is refused.  The storage is the
 * supervisor's, one call at a time. */
#define JUDGE_SCRIPT_LEVELS (RULES_CALL_EVENTS - 1)

static void judge_script_levels(struct judge_call *c, bool by_backend, bool *deep)
{
	static struct rules_event events[RULES_CALL_EVENTS];
	static bool explicit_deny_only[RULES_CALL_EVENTS];
	static struct identity id[JUDGE_SCRIPT_LEVELS];
	static char interp[JUDGE_SCRIPT_LEVELS][PATH_MAX], arg[JUDGE_SCRIPT_LEVELS][PATH_MAX];
	static char file[JUDGE_SCRIPT_LEVELS][PATH_MAX];
	static const char **argv[JUDGE_SCRIPT_LEVELS];
	static size_t cap[JUDGE_SCRIPT_LEVELS];
	const struct rules_event *prev = &c->events[0];
	const char *prev_file = prev->exe;
	const char *lines[2 * JUDGE_SCRIPT_LEVELS];
	char next[PATH_MAX], next_arg[PATH_MAX];
	bool has_arg[JUDGE_SCRIPT_LEVELS] = { false };
	int r;

	*deep = false;
	if (!c->id || by_backend || c->n_events != 1 || prev->kind != RULES_KIND_EXEC || !prev_file)
		return;
	/* The file the exec loads, once: an ELF program run directly has no
	 * line to look at. */
	c->exec_id_rc = exec_id_of(prev_file, &c->exec_id);
	c->exec_id_ready = true;
	if (c->exec_id.known && c->exec_id.direct)
		return;
	events[0] = c->events[0];
	explicit_deny_only[0] = c->explicit_deny_only && c->explicit_deny_only[0];
	for (size_t k = 0; (r = exec_script_line(prev_file, next, next_arg)) > 0; k++) {
		struct rules_event *ev;
		size_t n = 0, argc = prev->argc > 0 ? prev->argc - 1 : 0;

		if (k == JUDGE_SCRIPT_LEVELS) {
			*deep = true;
			return;
		}
		strcpy(interp[k], next);
		if (r == 2)
			strcpy(arg[k], next_arg);
		/* The kernel opens the name as the caller would: relative to
		 * its working directory, in its view. */
		if (path_resolve(c->view_pid, AT_FDCWD, interp[k], 0, file[k], PATH_MAX) != 0)
			return; /* no such interpreter: the exec fails (ENOENT) */
		if (cap[k] < argc + 4) {
			cap[k] = argc + 4;
			argv[k] = xrealloc(argv[k], cap[k] * sizeof(*argv[k]));
		}
		argv[k][n++] = interp[k];
		if (r == 2)
			argv[k][n++] = arg[k];
		argv[k][n++] = prev_file;
		for (size_t i = 0; i < argc; i++)
			argv[k][n++] = prev->argv[i + 1];
		argv[k][n] = NULL;
		if (c->events != events) {
			c->events = events;
			if (c->explicit_deny_only)
				c->explicit_deny_only = explicit_deny_only;
		}
		ev = &events[c->n_events];
		explicit_deny_only[c->n_events++] = false;
		*ev = events[0];
		identity_of_exec(&id[k], c->view_pid, file[k], argv[k], n, NULL, NULL);
		identity_apply(&id[k], ev);
		c->n_script_levels++;
		prev = ev;
		prev_file = file[k];
		has_arg[k] = r == 2;
	}
	/* The lines' entries in the kernel's order, the deepest first: the
	 * exec event finds them on the command line (execid.h). */
	for (size_t k = c->n_script_levels; k-- > 0;) {
		lines[c->script_lines++] = interp[k];
		if (has_arg[k])
			lines[c->script_lines++] = arg[k];
	}
	if (c->script_lines)
		exec_lines_digest(lines, c->script_lines, c->script_lines_sha);
}

/* V, decided by an interpreter a "#!" line runs: the why says whose
 * line. */
static void judge_script_why(const struct session *s, const struct judge_call *c,
			     struct judge_verdict *v)
{
	static char why[2 * PATH_MAX + 512];
	const char *rule_why = v->rule ? rules_string(s->policy, v->rule->why) : NULL;
	const struct rules_event *ev = &c->events[v->event];

	snprintf(why, sizeof(why), "%s runs %s by its \"#!\" line%s%s", c->events[0].exe,
		 ev->script ? ev->script : ev->exe, rule_why && rule_why[0] ? ": " : "",
		 rule_why ? rule_why : "");
	v->why = why;
}

/* The Debian alternative an exec's program was called by, when the link
 * leads to that very program (lib/alternatives.h): "/etc/alternatives/vi"
 * in LINK (PATH_MAX bytes) for /usr/bin/vim.basic run as vi; NULL for
 * none. */
static const char *judge_exec_alias(const struct rules_event *ev, char *link)
{
	char real[PATH_MAX];
	struct stat st;

	/* Most programs have no alternative: one lstat says so, where
	 * realpath() reads every component of the link's name first. */
	if (ev->kind != RULES_KIND_EXEC || !ev->exe || ev->argc < 1 || !ev->argv ||
	    !alternatives_link(ev->argv[0], link, PATH_MAX) || lstat(link, &st) < 0 ||
	    !S_ISLNK(st.st_mode) || !realpath(link, real))
		return NULL;
	return strcmp(real, ev->exe) == 0 ? link : NULL;
}

/* A mkdir that only the write fallback refuses, of a directory on the way
 * to what a write rule admits (rules_write_root_ancestor()): ~/go for a
 * cache ~/go/pkg in a fresh HOME.  An empty directory changes nothing,
 * and a deny rule that names it still wins. */
static bool judge_on_the_way(const struct rules_policy *p, const struct judge_call *c,
			     const struct rules_call_verdict *cv)
{
	return c->n_events == 1 && cv->action == RULES_ACTION_DENY && cv->rule &&
	       cv->rule == rules_rule_at(p, p->fallback[RULES_KIND_WRITE]) &&
	       c->events[0].kind == RULES_KIND_WRITE && judge_is(c->syscall, "mkdir", "mkdirat") &&
	       rules_write_root_ancestor(p, c->events[0].path);
}

static void judge_verdict_of(struct judge_verdict *v, const struct judge_call *c,
			     const struct rules_call_verdict *cv)
{
	v->action = cv->action;
	v->effective = cv->effective;
	v->event = cv->event;
	v->kind = c->n_events ? (int)c->events[cv->event].kind : -1;
	v->rule = cv->rule;
	if (!cv->rule) {
		v->rule_id = "engine.error";
		v->why = "the policy engine could not decide this event";
	}
}

/* V, of an event that reached denied file F by another name: recorded as
 * F, saying so. */
static void judge_linked_why(const struct session *s, const struct judge_call *c,
			     struct judge_verdict *v, const struct linked_file *f)
{
	static char why[2 * PATH_MAX + 512];
	const char *rule_why = v->rule ? rules_string(s->policy, v->rule->why) : NULL;

	snprintf(why, sizeof(why), "%s is another name of %s%s%s", c->events[v->event].path, f->path,
		 rule_why && rule_why[0] ? ": " : "", rule_why ? rule_why : "");
	v->why = why;
	v->object = f->path;
}

void judge_decide(struct session *s, struct judge_call *c, struct judge_verdict *v)
{
	const struct linked_file *linked[RULES_CALL_EVENTS] = { NULL };
	struct rules_event judged[RULES_CALL_EVENTS];
	const struct rules_event *evs;
	struct rules_call_verdict cv;
	char link[PATH_MAX];
	bool deep, by_backend = c->id_ready;

	memset(v, 0, sizeof(*v));
	judge_names(s, c);
	judge_identity(c);
	judge_script_levels(c, by_backend, &deep);
	if (deep) {
		judge_own(v, RULES_KIND_EXEC, 0, RULES_ACTION_DENY, JUDGE_SCRIPT_LEVELS_RULE,
			  "more \"#!\" levels than agenttrace judges: the last interpreter would run "
			  "unjudged", ELOOP);
		return;
	}
	evs = judge_events(s, c, judged, linked);
	if (c->content_aside)
		rules_decide_call_beside_content(s->policy, evs, c->n_events, c->explicit_deny_only,
						 &cv);
	else
		rules_decide_call(s->policy, evs, c->n_events, c->explicit_deny_only, &cv);
	if (c->n_events - c->n_script_levels == 1 && cv.event == 0 && cv.rule &&
	    cv.rule == rules_rule_at(s->policy, s->policy->fallback[RULES_KIND_EXEC]))
		rules_decide_exec_alias(s->policy, &evs[0], judge_exec_alias(&evs[0], link), &cv);
	if (judge_on_the_way(s->policy, c, &cv)) {
		memset(v, 0, sizeof(*v));
		v->kind = RULES_KIND_WRITE;
		v->rule_id = JUDGE_ON_THE_WAY_RULE;
		v->why = "a directory on the way to a write root";
		return;
	}
	/* The answers below that let a refused event go quietly hold for
	 * that event only: the call's next one may still be refused (a
	 * sendmmsg to a local port nobody has, then to a denied host). */
	while (c->n_events && cv.action != RULES_ACTION_ALLOW) {
		const struct rules_event *dev = &c->events[cv.event];
		struct rules_call_verdict next;
		size_t k = cv.event + 1;
		int answer = judge_kernel_answer(c, dev);
		/* A datagram to a local port no socket has reaches nobody:
		 * refused by nothing but the local fallback, it goes. */
		bool nobody = !answer && dev->kind == RULES_KIND_NET &&
			      dev->endpoint == RULES_ENDPOINT_NONE &&
			      cv.rule == rules_fallback(s->policy, dev) && rules_net_local(dev);

		if (!nobody && !answer)
			break;
		if (k < c->n_events) {
			rules_decide_call(s->policy, evs + k, c->n_events - k,
					  c->explicit_deny_only ? c->explicit_deny_only + k : NULL, &next);
			if (next.action != RULES_ACTION_ALLOW) {
				next.event += k;
				cv = next;
				continue;
			}
		}
		judge_verdict_of(v, c, &cv);
		v->quiet = true;
		v->err = nobody || cv.effective != RULES_ACTION_DENY ? 0 : answer;
		return;
	}
	judge_verdict_of(v, c, &cv);
	if (cv.effective == RULES_ACTION_DENY)
		v->err = c->deny_errno;
	if (c->n_script_levels && cv.event > 0 && cv.action != RULES_ACTION_ALLOW)
		judge_script_why(s, c, v);
	if (c->n_events && linked[cv.event] && cv.action != RULES_ACTION_ALLOW)
		judge_linked_why(s, c, v, linked[cv.event]);
}

void judge_decide_reached(const struct session *s, const struct judge_call *c,
			  const struct linked_file *f, struct judge_verdict *v)
{
	struct rules_event evs[RULES_CALL_EVENTS];
	struct rules_call_verdict cv;
	size_t n = c->n_events < RULES_CALL_EVENTS ? c->n_events : RULES_CALL_EVENTS;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		evs[i] = c->events[i];
		if (evs[i].kind == RULES_KIND_READ || evs[i].kind == RULES_KIND_WRITE)
			evs[i].path = f->path;
	}
	rules_decide_call(s->policy, evs, n, c->explicit_deny_only, &cv);
	judge_verdict_of(v, c, &cv);
	if (cv.effective == RULES_ACTION_DENY)
		v->err = c->deny_errno;
	if (n && cv.action != RULES_ACTION_ALLOW)
		judge_linked_why(s, c, v, f);
}

void judge_shim_verdict(const struct session *s, const struct judge_call *c, uint8_t action,
			uint8_t effective, uint32_t rule, int err, struct judge_verdict *v)
{
	struct rules_event judged[RULES_CALL_EVENTS];
	const struct linked_file *linked[RULES_CALL_EVENTS] = { NULL };
	const struct rules_event *evs = judge_events(s, c, judged, linked);

	memset(v, 0, sizeof(*v));
	v->action = action < RULES_ACTION_COUNT ? (enum rules_action)action : RULES_ACTION_DENY;
	v->effective = effective < RULES_ACTION_COUNT ? (enum rules_action)effective :
			RULES_ACTION_DENY;
	v->rule = rule < s->policy->rules_count ? rules_rule_at(s->policy, rule) : NULL;
	/* The shim names the rule, not the event: the first event that rule
	 * decides is the one rules_decide_call() reported. */
	for (size_t i = 0; v->rule && i < c->n_events && i < RULES_CALL_EVENTS; i++) {
		struct rules_verdict ev;

		if (rules_decide(s->policy, &evs[i], &ev) == 0 && ev.rule == v->rule) {
			v->event = i;
			break;
		}
	}
	v->kind = c->n_events ? (int)c->events[v->event].kind : -1;
	if (!v->rule) {
		v->rule_id = "engine.error";
		v->why = "the policy engine could not decide this event";
	}
	/* The shim judged another name of a denied file as that file
	 * (preload/ask.c): recorded so, as the supervisor records it. */
	if (v->rule && c->n_events && linked[v->event] && v->action != RULES_ACTION_ALLOW)
		judge_linked_why(s, c, v, linked[v->event]);
	v->err = err;
}

void judge_own(struct judge_verdict *v, int kind, size_t event, enum rules_action action,
	       const char *rule_id, const char *why, int err)
{
	memset(v, 0, sizeof(*v));
	v->action = action;
	v->effective = action;
	v->kind = kind;
	v->event = event;
	v->rule_id = rule_id;
	v->why = why;
	v->err = action == RULES_ACTION_DENY ? err : 0;
}

/* ---- recording ---- */

void judge_who_of_task(struct judge_who *w, const struct tracee *t)
{
	memset(w, 0, sizeof(*w));
	w->pid = t->tgid;
	w->ppid = t->ppid;
	if (t->info) {
		w->exe = t->info->exe;
		w->argv = (const char *const *)t->info->argv;
		w->argc = t->info->argc;
	}
	w->stopped_tid = t->pid;
}

static const char *judge_host_source(enum channel_source src, bool known)
{
	if (!known)
		return "none";
	return src == CHANNEL_SOURCE_RESOLVER ? "resolver" : "shim";
}

static const char *judge_endpoint_name(uint8_t e)
{
	switch (e) {
	case RULES_ENDPOINT_SESSION:
		return "session";
	case RULES_ENDPOINT_OUTSIDE:
		return "outside";
	case RULES_ENDPOINT_NONE:
		return "none";
	default:
		return NULL;
	}
}

/* The process behind the outside socket of a local destination, for an
 * alert (bounded: tracer/confine/endpoints.h).  EXE holds SIZE bytes. */
static void judge_listener(struct session *s, struct record *r, const struct judge_call *c,
			   size_t i, char *exe, size_t size)
{
	const struct rules_event *ev = &c->events[i];
	pid_t pid = 0;

	if (ev->kind != RULES_KIND_NET || ev->endpoint != RULES_ENDPOINT_OUTSIDE ||
	    !rules_net_local(ev))
		return;
	r->has_listener = true;
	if (s->endpoints && endpoints_owner(s->endpoints, c->listener[i], &pid, exe, size) == 0) {
		r->listener_pid = pid;
		r->listener_exe = exe;
	}
}

/* The object of event I of C into R; ADDR holds INET6_ADDRSTRLEN + 128
 * bytes for the address text. */
static void judge_object(struct record *r, const struct judge_call *c, size_t i, char *addr,
			 size_t addr_size)
{
	const struct rules_event *ev = &c->events[i];

	switch (ev->kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		/* Both paths of a rename or link, in the call's order. */
		r->path = c->n_events > 1 ? c->events[0].path : ev->path;
		if (c->n_events > 1 && c->events[1].kind == c->events[0].kind)
			r->path2 = c->events[1].path;
		r->flags = c->flags;
		r->has_flags = c->has_flags;
		/* An exchange reads the file at the second name too
		 * (rules_add_name_reads()): the record says so, for
		 * agenttrace-policy replay to judge the same events. */
		for (size_t j = 2; r->path2 && j < c->n_events; j++)
			r->exchange |= c->events[j].kind == RULES_KIND_READ &&
				       strcmp(c->events[j].path, r->path2) == 0;
		break;
	case RULES_KIND_NET:
		r->family = record_family_name(ev->family);
		if (record_addr_text(ev, addr, addr_size))
			r->addr = addr;
		if (ev->family != AF_UNIX) {
			r->port = ev->port;
			if (!ev->bind) {
				r->host = ev->host;
				r->host_source = judge_host_source(c->host_source[i],
								   ev->host != NULL);
			}
		}
		if (rules_net_local(ev))
			r->endpoint = judge_endpoint_name(ev->endpoint);
		break;
	case RULES_KIND_EXEC:
		/* The program judged; the argv as it was exec'ed (the loader's
		 * options are evidence too). */
		r->target = i == 0 && c->id && c->id_ready ? c->id->exe : ev->exe;
		r->target_argv = ev->argv;
		r->target_argc = ev->argc;
		if (i == 0 && c->id && c->id_ready) {
			r->loader = c->id->loader;
			r->script_path = c->id->script;
			r->program_name = c->id->script ? c->id->script_name : c->id->exe_name;
		} else if (i > 0) {
			/* An interpreter a "#!" line runs: its event holds its
			 * identity (judge_script_levels()). */
			r->loader = ev->loader;
			r->script_path = ev->script;
			r->program_name = ev->script ? ev->script_name : ev->exe_name;
		}
		break;
	default:
		break;
	}
}

/* The event name of an allowed event's record. */
static const char *judge_allowed_event(const struct judge_call *c, const struct rules_event *ev)
{
	switch (ev->kind) {
	case RULES_KIND_NET:
		return ev->bind ? "bind" : "connect";
	case RULES_KIND_EXEC:
		return "exec";
	case RULES_KIND_READ:
		return "open";
	default:
		return c->has_flags ? "open" : "write";
	}
}

/* The calling code's frames, for an alert: a stopped task is unwound
 * while it is still in its stop, bounded in depth and time
 * (tracer/inspect/backtrace.h), and a CPython's Python frames read
 * (tracer/inspect/pyframes.h). */
static void judge_frames(struct session *s, struct record *r, const struct judge_who *w)
{
	static struct bt_frame frames[BACKTRACE_DEPTH];
	static struct py_frame py[PYFRAMES_DEPTH];
	int n;

	if (w->frames && w->n_frames > 0) {
		r->frames = w->frames;
		r->n_frames = w->n_frames;
		return;
	}
	if (w->stopped_tid <= 0 || (s->frames_stop && !s->frames_stop(s, w->stopped_tid)))
		return;
	/* The names come from libelf: opened before the clock starts. */
	elfinfo_ready();
	n = backtrace_take(w->stopped_tid, frames, BACKTRACE_DEPTH, BACKTRACE_BUDGET_US);
	if (n > 0) {
		r->frames = frames;
		r->n_frames = n;
	}
	n = pyframes_take(w->pid, w->stopped_tid, py, PYFRAMES_DEPTH);
	if (n > 0) {
		r->py_frames = py;
		r->n_py_frames = n;
	}
}

/* With --evidence: the file an allowed call writes the bytes of, opened
 * for writing or renamed or linked into place, so that its exec is known
 * as a program written in the session (evidence.h). */
static void judge_note_written(struct session *s, const struct judge_call *c)
{
	if (s->evidence.dir_fd < 0 || !c->n_events || c->events[0].kind != RULES_KIND_WRITE)
		return;
	if (c->has_flags && ((c->flags & O_ACCMODE) != O_RDONLY || (c->flags & (O_CREAT | O_TRUNC))))
		evidence_note_write(&s->evidence, c->events[0].path);
	else if (c->n_events > 1 && c->events[1].kind == RULES_KIND_WRITE &&
		 (judge_is(c->syscall, "rename", "renameat") || judge_is(c->syscall, "renameat2", NULL) ||
		  judge_is(c->syscall, "link", "linkat")))
		evidence_note_write(&s->evidence, c->events[1].path);
}

void judge_record(struct session *s, const struct judge_who *w, const struct judge_call *c,
		  const struct judge_verdict *v)
{
	static struct evidence_file files[2];
	static char script[SCRIPT_TEXT_MAX];
	static struct elf_facts elf;
	const struct rules_event *ev = c->n_events ? &c->events[v->event] : NULL;
	char addr[INET6_ADDRSTRLEN + 128], listener_exe[PATH_MAX];
	struct rules_suggestion sg = { 0 };
	struct record r = { 0 };

	if (s->mute_records)
		return;
	if (v->quiet) {
		/* A local destination where nothing is got the kernel's own
		 * answer (or its datagram went): a destination tried, counted
		 * as the call that reached the kernel it stands for. */
		if (ev && ev->kind == RULES_KIND_NET && ev->endpoint == RULES_ENDPOINT_NONE &&
		    rules_net_local(ev))
			egress_note(&s->egress, c->events, c->n_events, false);
		return;
	}
	/* Every judged destination, allowed ones too (the summary's egress). */
	egress_note(&s->egress, c->events, c->n_events, v->effective == RULES_ACTION_DENY);
	if (v->effective != RULES_ACTION_DENY)
		judge_note_written(s, c);
	r.pid = w->pid;
	r.ppid = w->ppid;
	r.exe = w->exe;
	r.argv = w->argv;
	r.argc = w->argc;
	r.cwd = w->cwd;
	r.backend = w->backend;
	r.kind = v->kind;
	r.syscall = c->syscall;
	r.port = -1;
	if (ev)
		judge_object(&r, c, v->event, addr, sizeof(addr));
	if (v->object && ev && ev->path) {
		/* The name that reached it stands in the why. */
		if (r.path && strcmp(r.path, ev->path) == 0)
			r.path = v->object;
		else if (r.path2 && strcmp(r.path2, ev->path) == 0)
			r.path2 = v->object;
	}
	r.rule = v->rule ? rules_string(s->policy, v->rule->id) : v->rule_id;
	r.content = v->content;

	if (v->effective == RULES_ACTION_ALLOW && v->action == RULES_ACTION_ALLOW) {
		if (!s->record_all || !ev ||
		    (ev->kind == RULES_KIND_EXEC && c->exec_recorded_later))
			return;
		r.event = judge_allowed_event(c, ev);
		r.action = "allow";
		record_emit(s, &r);
		return;
	}

	r.event = "alert";
	r.action = rules_action_name(v->effective);
	if (ev)
		judge_listener(s, &r, c, v->event, listener_exe, sizeof(listener_exe));
	r.err = v->err;
	r.why = v->why ? v->why : v->rule ? rules_string(s->policy, v->rule->why) : NULL;
	/* Every alert of a policy rule suggests the layer that admits its
	 * event, and the option that does the same (for an alert rule: the
	 * allow-list entry a strict policy would need); an exec as the
	 * program it runs. */
	if (v->rule && ev) {
		struct rules_event judged[RULES_CALL_EVENTS];
		const struct rules_event *evs = judge_events(s, c, judged, NULL);
		const bool *edo = c->explicit_deny_only;
		size_t n = c->n_events;

		/* A script's exec: what admits the exec that decided, the
		 * script or an interpreter its line runs, alone. */
		if (c->n_script_levels) {
			evs += v->event;
			edo = edo ? edo + v->event : NULL;
			n = 1;
		}
		if (rules_suggest(s->policy, &s->anchors, s->suggest_base, evs, n, edo, v->action,
				  &sg) == 0) {
			r.suggest = sg.layer;
			r.suggest_option = sg.option;
		}
	}
	if (ev && ev->kind == RULES_KIND_EXEC) {
		const struct identity *id = v->event == 0 && c->id && c->id_ready ? c->id : NULL;
		const char *exe = id ? id->exe : ev->exe;

		r.script_len = id ? script_text(id->exe, id->argv, id->argc, id->script, script,
						sizeof(script)) :
				    script_text(ev->exe, ev->argv, ev->argc, NULL, script,
						sizeof(script));
		r.script = script;
		if (exe && elfinfo_read(exe, &elf) == 0)
			r.elf = &elf;
		record_exec_evidence(s, &r, files);
	}
	judge_frames(s, &r, w);
	record_emit(s, &r);
	rules_suggestion_free(&sg);
}
