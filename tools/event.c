/* A record as the engine's events (event.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/openflags.h"
#include "lib/syscall-open.h"
#include "lib/syscall-rename.h"
#include "tools/event.h"
#include "tracer/syscall/table.h"

static int log_event_kind(const char *k)
{
	if (!k)
		return -1;
	for (int i = 0; i < RULES_KIND_COUNT; i++)
		if (strcmp(k, rules_kind_name((enum rules_kind)i)) == 0)
			return i;
	return -1;
}

static void log_event_argv(struct log_event *e, const json_t *argv)
{
	size_t n = json_array_size(argv);

	if (n > LOG_EVENT_ARGV_MAX)
		n = LOG_EVENT_ARGV_MAX;
	for (size_t i = 0; i < n; i++) {
		const char *a = logread_argv_at(argv, i);

		e->argv[i] = a ? a : "";
	}
	e->argv[n] = NULL;
	e->ev[0].argv = e->argv;
	e->ev[0].argc = n;
}

/* The identity the record names (agenttrace-policy(5), "Exec identity"):
 * the argv from the program the loader ran, the script and the package's
 * name, as the backend judged them. */
static void log_event_identity(struct log_event *e, const struct logrec *rec)
{
	struct rules_event *ev = &e->ev[0];

	ev->loader = rec->loader;
	for (int depth = 0; rec->loader && depth < 4; depth++) {
		size_t p = rules_loader_prog(ev->argv, ev->argc);
		const char *a = p ? ev->argv[p] : NULL, *slash = a ? strrchr(a, '/') : NULL;

		if (!p)
			break;
		ev->argv += p;
		ev->argc -= p;
		/* The loader ran once more when the program it named was a loader. */
		if (!rules_loader_name(slash ? slash + 1 : a))
			break;
	}
	if (rec->script_path) {
		ev->script = rec->script_path;
		ev->script_arg = rules_interp_script(ev->exe, ev->argv, ev->argc, NULL, NULL, NULL);
		ev->script_name = rec->program_name;
		if (!ev->script_arg)
			ev->script = ev->script_name = NULL;
	} else {
		ev->exe_name = rec->program_name;
	}
}

/* The program REC's process ran when it made the call (an alert's "exe"
 * and "argv"), as the one program of the call's line that a record
 * tells: rules with "under" are replayed against it alone. */
static void log_event_caller(struct log_event *e, const struct logrec *rec)
{
	size_t n = json_array_size(rec->argv), script;

	if (!rec->exe || !n)
		return;
	if (n > LOG_EVENT_ARGV_MAX)
		n = LOG_EVENT_ARGV_MAX;
	for (size_t i = 0; i < n; i++) {
		const char *a = logread_argv_at(rec->argv, i);

		e->caller_argv[i] = a ? a : "";
	}
	e->caller_argv[n] = NULL;
	e->caller.kind = RULES_KIND_EXEC;
	e->caller.exe = rec->exe;
	e->caller.argv = e->caller_argv;
	e->caller.argc = n;
	script = rules_interp_script(rec->exe, e->caller_argv, n, NULL, NULL, NULL);
	if (script) {
		e->caller.script = e->caller_argv[script];
		e->caller.script_arg = script;
	}
	for (size_t i = 0; i < e->n; i++) {
		e->ev[i].lineage = &e->caller;
		e->ev[i].n_lineage = 1;
	}
}

/* Whether REC's call has the syscall table's option OPT (the preload
 * backend's libc functions are named as the calls). */
static bool log_event_call_is(const struct logrec *rec, unsigned opt)
{
	const struct syscall_entry *call = syscall_lookup_name(rec->syscall);

	return call && (call->opts & opt);
}

/* A rename or link was judged as writes of both names and a read of
 * the file that gets a new name (both, for an exchange), whichever of
 * them the record's kind is (rules_add_name_reads()). */
static void log_event_new_name(const struct logrec *rec, struct log_event *e)
{
	if (e->n != 2 || !log_event_call_is(rec, SYSCALL_OPT_NEW_NAME))
		return;
	e->ev[0].kind = e->ev[1].kind = RULES_KIND_WRITE;
	e->n = rules_add_name_reads(e->ev, e->n,
				    RULES_READS_PATH | (syscall_exchange_recorded(rec->flags) ? RULES_READS_PATH2 : 0),
				    rec->path, rec->path2);
}

/* An open for writing that reads its file too (an O_RDWR open: lib/syscall-open.h)
 * was judged as a write and a read of it, whichever of them the record's
 * kind is. */
static void log_event_open(const struct logrec *rec, struct log_event *e)
{
	int flags;

	if (e->n != 1 || !rec->flags || !openflags_parse(rec->flags, &flags) ||
	    syscall_open_kind(flags) != SYSCALL_OPEN_WRITE || !syscall_open_write_reads(flags))
		return;
	e->ev[0].kind = RULES_KIND_WRITE;
	e->n = rules_add_name_reads(e->ev, e->n, RULES_READS_PATH, rec->path, NULL);
}

/* A read of an unlinked file ("NAME (deleted)") was judged as a read of
 * NAME (lib/syscall-open.h). */
static void log_event_unlinked(const struct logrec *rec, struct log_event *e)
{
	const char *const names[2] = { rec->path, rec->path2 };

	for (size_t i = 0; i < e->n; i++)
		for (size_t k = 0; k < 2; k++)
			if (e->ev[i].kind == RULES_KIND_READ && names[k] && e->ev[i].path == names[k] &&
			    syscall_unlinked_name(names[k], e->unlinked[k], sizeof(e->unlinked[k])))
				e->ev[i].path = e->unlinked[k];
}

static bool log_event_of_kind(const struct logrec *rec, struct log_event *e, int *kind);

bool log_event_of(const struct logrec *rec, struct log_event *e, int *kind)
{
	if (!log_event_of_kind(rec, e, kind))
		return false;
	/* An "exec" record's process is the program it became. */
	if (strcmp(rec->event, "exec") != 0)
		log_event_caller(e, rec);
	return true;
}

static bool log_event_of_kind(const struct logrec *rec, struct log_event *e, int *kind)
{
	bool exec_rec = strcmp(rec->event, "exec") == 0, own;

	memset(e, 0, sizeof(*e));
	*kind = exec_rec ? RULES_KIND_EXEC : log_event_kind(rec->kind);
	if (*kind < 0 || (!exec_rec && !rec->action))
		return false;
	e->n = 1;
	e->ev[0].kind = (enum rules_kind)*kind;
	switch (*kind) {
	case RULES_KIND_EXEC:
		/* An exec record of the preload backend names the caller
		 * and, as its target, the program run. */
		own = exec_rec && !rec->target;
		e->ev[0].exe = own ? rec->exe : rec->target;
		if (!e->ev[0].exe)
			return false;
		log_event_argv(e, own ? rec->argv : rec->target_argv);
		log_event_identity(e, rec);
		return true;
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		if (!rec->path)
			return false;
		e->ev[0].path = rec->path;
		if (rec->path2) {
			e->ev[1] = e->ev[0];
			e->ev[1].path = rec->path2;
			e->n = 2;
			e->explicit_deny_only[1] = log_event_call_is(rec, SYSCALL_OPT_SYMLINK);
		}
		log_event_new_name(rec, e);
		log_event_open(rec, e);
		log_event_unlinked(rec, e);
		return true;
	case RULES_KIND_NET:
		/* Whose a local destination was, as the session found out; a
		 * record without it (an older log) is judged as a server
		 * started outside. */
		if (rec->endpoint && strcmp(rec->endpoint, "session") == 0)
			e->ev[0].endpoint = RULES_ENDPOINT_SESSION;
		else if (rec->endpoint && strcmp(rec->endpoint, "none") == 0)
			e->ev[0].endpoint = RULES_ENDPOINT_NONE;
		else
			e->ev[0].endpoint = RULES_ENDPOINT_OUTSIDE;
		if (rec->family && strcmp(rec->family, "unix") == 0) {
			if (!rec->addr)
				return false;
			e->ev[0].family = AF_UNIX;
			snprintf(e->unix_path, sizeof(e->unix_path), "%s", rec->addr);
			e->ev[0].unix_path = e->unix_path;
			return true;
		}
		if (!rec->addr)
			return false;
		if (inet_pton(AF_INET, rec->addr, e->ev[0].addr) == 1)
			e->ev[0].family = AF_INET;
		else if (inet_pton(AF_INET6, rec->addr, e->ev[0].addr) == 1)
			e->ev[0].family = AF_INET6;
		else
			return false;
		e->ev[0].port = rec->port >= 0 && rec->port <= 65535 ? (uint16_t)rec->port : 0;
		e->ev[0].host = rec->host;
		return true;
	default:
		return false;
	}
}

bool log_event_content_passed(const struct logrec *rec, enum rules_action action,
			      const struct rules_rule *r)
{
	const char *check;

	if (action != RULES_ACTION_DENY || !r || !r->content)
		return false;
	if (rec->syscall && (strcmp(rec->syscall, "chmod") == 0 ||
			     strcmp(rec->syscall, "fchmodat") == 0 ||
			     strcmp(rec->syscall, "fchmodat2") == 0))
		return true;
	if (!rec->content)
		return false;
	check = rules_content_name((enum rules_content)r->content);
	return check && strcmp(check, rec->content) == 0;
}

void log_event_decide(const struct rules_policy *p, const struct logrec *rec,
		      const struct log_event *e, struct rules_call_verdict *cv)
{
	rules_decide_call(p, e->ev, e->n, e->explicit_deny_only, cv);
	if (log_event_content_passed(rec, cv->action, cv->rule))
		rules_decide_call_beside_content(p, e->ev, e->n, e->explicit_deny_only, cv);
}
