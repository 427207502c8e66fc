/* agenttrace-policy replay LOG --policy P...: re-decide the recorded
 * events under another policy and list those decided differently.
 *
 * An event is what the supervisor decided on: an "exec" record (the
 * program a process became), an "open"/"write"/"connect" record of a
 * --record log (action "allow"), or an alert of kind exec, write, read or
 * net.  "syscall" and "limit" alerts are not policy decisions and are
 * not replayed.  Actions are compared after the mode: in audit mode a
 * recorded "alert" may stand for a deny that was let through. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/textesc.h"
#include "lib/xalloc.h"
#include "rules/load.h"
#include "tools/event.h"
#include "tools/learn.h"
#include "tools/logread.h"

/* Messages of a subcommand: "agenttrace-policy: TEXT" on standard error,
 * and with errno, ": strerror". */
static void replay_msg(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void replay_msg(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("agenttrace-policy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

struct replay {
	const struct rules_policy *policy;
	json_t *seen;          /* difference line -> index into lines */
	json_t *lines;         /* [text, count] in first-seen order */
	size_t events, differ, skipped;
	/* An allowed exec alert is followed by the "exec" record of the same
	 * program in the same process: one event, not two. */
	long alert_exec_pid;
	char *alert_exec_target;
};

/* "write /x", "exec /usr/bin/curl -s ...", "net 10.0.0.1:443 (example.com)" */
static char *replay_object(const struct logrec *rec, int kind, const struct log_event *e)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		die("out of memory");
	fputs(rules_kind_name((enum rules_kind)kind), f);
	fputc(' ', f);
	switch (kind) {
	case RULES_KIND_EXEC:
		fputs(e->ev[0].exe, f);
		for (size_t i = 1; i < e->ev[0].argc && i < 16; i++)
			fprintf(f, " %s", e->ev[0].argv[i]);
		if (e->ev[0].argc > 16)
			fputs(" ...", f);
		break;
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		fputs(rec->path, f);
		if (rec->path2)
			fprintf(f, " -> %s", rec->path2);
		break;
	default:
		if (e->ev[0].family == AF_UNIX)
			fprintf(f, "unix:%s", rec->addr);
		else
			fprintf(f, e->ev[0].family == AF_INET6 ? "[%s]:%u" : "%s:%u", rec->addr,
				e->ev[0].port);
		if (rec->host)
			fprintf(f, " (%s)", rec->host);
		break;
	}
	if (fclose(f) != 0)
		die("out of memory");
	return out;
}

static void replay_record(struct replay *rp, const struct logrec *rec)
{
	struct log_event *e = xmalloc(sizeof(*e));
	struct rules_call_verdict cv;
	const char *was, *now;
	char *object, *line;
	json_t *idx;
	int kind;

	if (!log_event_of(rec, e, &kind))
		goto out;
	if (strcmp(rec->event, "exec") == 0 && rp->alert_exec_target &&
	    rp->alert_exec_pid == rec->pid && strcmp(rp->alert_exec_target, rec->exe) == 0) {
		free(rp->alert_exec_target);
		rp->alert_exec_target = NULL;
		goto out;
	}
	if (kind == RULES_KIND_EXEC && strcmp(rec->event, "alert") == 0 &&
	    strcmp(rec->action, "deny") != 0) {
		free(rp->alert_exec_target);
		rp->alert_exec_target = xstrdup(e->ev[0].exe);
		rp->alert_exec_pid = rec->pid;
	}
	log_event_decide(rp->policy, rec, e, &cv);
	rp->events++;
	was = strcmp(rec->event, "exec") == 0 ? "allow" : rec->action;
	now = rules_action_name(cv.effective);
	if (strcmp(was, now) == 0)
		goto out;
	rp->differ++;
	object = replay_object(rec, kind, e);
	line = xasprintf("was %s, now %s: %s (rule %s)", was, now, object,
			 cv.rule ? rules_string(rp->policy, cv.rule->id) : "?");
	free(object);
	idx = json_object_get(rp->seen, line);
	if (idx) {
		json_t *entry = json_array_get(rp->lines, (size_t)json_integer_value(idx));

		json_array_set_new(entry, 1,
				   json_integer(json_integer_value(json_array_get(entry, 1)) + 1));
	} else {
		json_object_set_new(rp->seen, line, json_integer((json_int_t)json_array_size(rp->lines)));
		json_array_append_new(rp->lines, json_pack("[s,i]", line, 1));
	}
	free(line);
out:
	free(e);
}

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: agenttrace-policy replay LOG --policy P [--policy P2...] [OPTIONS]\n"
		"\n"
		"Decide every event recorded in LOG again under the policy P (layered like\n"
		"agenttrace --policy) and list the events decided differently:\n"
		"  was allow, now deny: write /x (rule write.fallback)\n"
		"\n"
		"options:\n"
		"  -p, --policy NAME|FILE  a shipped policy or a file; repeatable (default: default)\n"
		"  --root DIR     ${ROOT} (default: the run's directory, from the log)\n"
		"  --home DIR     ${HOME} (default: $HOME)\n"
		"  --tmpdir DIR   ${TMPDIR} (default: $TMPDIR, else /tmp)\n"
		"  -q             no summary line on standard error\n"
		"\n"
		"exit status: 0 none differ, 1 some differ, 125 error.\n");
}

int replay_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'r' },
		{ "home", required_argument, NULL, 'H' },
		{ "tmpdir", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **names = xcalloc((size_t)argc + 1, sizeof(*names));
	const char *root = NULL, *home = NULL, *tmpdir = NULL, *log;
	char *log_root = NULL;
	size_t n_names = 0;
	bool quiet = false;
	struct replay rp = { 0 };
	struct rules_vars vars;
	struct rules_policy *p = NULL;
	struct rules_error err;
	struct logread lr;
	const struct logrec *rec;
	int c, rc, status = AT_EXIT_FAILURE;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': names[n_names++] = optarg; break;
		case 'r': root = optarg; break;
		case 'H': home = optarg; break;
		case 'T': tmpdir = optarg; break;
		case 'q': quiet = true; break;
		case 'h':
			replay_usage(stdout);
			free(names);
			return AT_EXIT_OK;
		default:
			replay_usage(stderr);
			free(names);
			return AT_EXIT_FAILURE;
		}
	}
	if (optind + 1 != argc) {
		replay_msg(0, "replay: %s", optind >= argc ? "a LOG is needed" : "one LOG only");
		replay_usage(stderr);
		free(names);
		return AT_EXIT_FAILURE;
	}
	log = argv[optind];
	if ((root && root[0] != '/') || (home && home[0] != '/') || (tmpdir && tmpdir[0] != '/')) {
		replay_msg(0, "replay: --root, --home and --tmpdir take absolute paths");
		free(names);
		return AT_EXIT_FAILURE;
	}
	if (!n_names)
		names[n_names++] = "default";

	/* ${ROOT} must be the run's, not ours: the log says where it ran. */
	if (!root && strcmp(log, "-") != 0)
		root = log_root = learn_log_root(log);
	rules_vars_from_env(&vars, root);
	if (home)
		vars.home = home;
	if (tmpdir)
		vars.tmpdir = tmpdir;
	if (rules_load(names, n_names, NULL, 0, &vars, &p, &err) < 0) {
		char line[2048];

		rules_error_format(&err, line, sizeof(line));
		fprintf(stderr, "%s\n", line);
		goto out;
	}
	rc = logread_open(&lr, log);
	if (rc < 0) {
		replay_msg(0, "replay: cannot read %s: %s", log, strerror(-rc));
		goto out;
	}
	rp.policy = p;
	rp.seen = json_object();
	rp.lines = json_array();
	while ((rc = logread_next(&lr, &rec)) > 0)
		replay_record(&rp, rec);
	if (rc < 0) {
		replay_msg(0, "replay: cannot read %s: %s", log, strerror(-rc));
		logread_close(&lr);
		goto out;
	}
	if (lr.malformed && !quiet)
		replay_msg(0, "replay: %s: %zu malformed line%s skipped", log, lr.malformed,
			 lr.malformed == 1 ? "" : "s");
	logread_close(&lr);

	for (size_t i = 0; i < json_array_size(rp.lines); i++) {
		const json_t *entry = json_array_get(rp.lines, i);
		json_int_t n = json_integer_value(json_array_get(entry, 1));

		/* The objects are the log's: escaped (lib/textesc.h). */
		textesc_fputs(stdout, json_string_value(json_array_get(entry, 0)), TEXTESC_LINE);
		if (n > 1)
			printf(" [%lld times]", (long long)n);
		putchar('\n');
	}
	if (fflush(stdout) != 0) {
		replay_msg(errno, "replay: cannot write the result");
		goto out;
	}
	if (!quiet)
		replay_msg(0, "replay: %zu of %zu events decided differently under %s", rp.differ,
			 rp.events, rules_string(p, p->layers));
	status = rp.differ ? 1 : AT_EXIT_OK;
out:
	json_decref(rp.seen);
	json_decref(rp.lines);
	free(rp.alert_exec_target);
	free(p);
	free(log_root);
	free(names);
	return status;
}
