/* agenttrace-policy learn LOG: the allow-list policy that admits what a
 * --record run did (agenttrace-policy(1), "LEARNING" says how paths,
 * programs and addresses are generalised; keep the two in sync).
 *
 * Admitted: events that went through (records with action "allow" or
 * "alert", and "exec" records).  Denials are not admitted: the run did
 * not do them.  The result is checked by loading it with the engine,
 * its own "tests" included, before it is printed. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "rules/generalise.h"
#include "rules/load.h"
#include "rules/suggest.h"
#include "tools/event.h"
#include "tools/learn.h"
#include "tools/logread.h"

/* Messages of a subcommand: "agenttrace-policy: TEXT" on standard error,
 * and with errno, ": strerror". */
static void learn_msg(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void learn_msg(int err, const char *fmt, ...)
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

#define LEARN_TESTS_EXEC 3
#define LEARN_TESTS_WRITE 3
#define LEARN_TESTS_NET 2
#define LEARN_TEST_ARGS 8

/* Directories whose file names are random (mkstemp): one rule for the
 * whole directory, whatever the run happened to write there. */
static const char *const learn_temp_dirs[] = { "/tmp", "/var/tmp", "/dev/shm", NULL };

/* ${ROOT} and ${TMPDIR} are one area each: everything under them is the
 * run's own; ${HOME} is not. */
static const bool learn_anchor_whole[RULES_ANCHORS] = { true, true, false };

struct learn {
	struct rules_anchors anchors;
	json_t *raw_execs;  /* "exe\x1fargv0" -> [exe, argv0, args...] */
	json_t *execs;      /* pattern -> one of raw_execs' arrays */
	json_t *writes;     /* path -> first seq (insertion order = log order) */
	json_t *nets;       /* pattern -> test string */
	size_t records, exec_records, denied;
	char *first_cwd, *summary_cwd, *session;
	const char *extends; /* the policy the learned one builds on; NULL: none */
	/* Per section: allow rules with "overrides" for what the run was
	 * allowed by an exception (--allow-write '${ROOT}/.git/config') and
	 * the base policy denies. */
	json_t *exempt[RULES_KIND_COUNT];
	/* The account of the learned policy against the run, per rule id:
	 * denials it still denies, denials it admits, events that went
	 * through and it denies. */
	json_t *still_denied, *admitted, *not_admitted;
	size_t exempted;
};

/* ---- text ---- */

/* The generaliser's literals (rules/generalise.h). */
static char *learn_escape(const char *prefix, const char *s, bool glob, bool alt)
{
	return xnonnull(rules_literal(prefix, s, glob, alt));
}

static char *learn_with_vars(const struct learn *l, const char *path, bool glob)
{
	return xnonnull(rules_path_literal(&l->anchors, path, glob));
}

/* "/a/b/c" and "/a/b/d/e" -> "/a/b" (in place in a). */
static void learn_common_dir(char *a, const char *b)
{
	size_t i = 0, last = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i;
		i++;
	}
	if (!a[i] && (b[i] == '/' || !b[i]))
		return; /* a is b or a parent of b */
	a[last ? last : 1] = '\0';
	if (!last)
		a[0] = '/';
}

static void learn_dirname(char *p)
{
	char *s = strrchr(p, '/');

	if (s && s != p)
		*s = '\0';
	else
		strcpy(p, "/");
}

/* ---- collecting ---- */

/* Programs are collected as they were run (exe, argv[0], a few
 * arguments), and turned into patterns once ${ROOT} is known. */
static void learn_exec(struct learn *l, const char *exe, const json_t *argv)
{
	const char *a0 = logread_argv_at(argv, 0);
	char *key;
	json_t *ex;

	if (!exe || !*exe)
		return;
	key = xasprintf("%s\x1f%s", exe, a0 ? a0 : "");
	if (!json_object_get(l->raw_execs, key)) {
		ex = json_array();
		json_array_append_new(ex, json_string(exe));
		json_array_append_new(ex, json_string(a0 ? a0 : ""));
		for (size_t i = 1; i < json_array_size(argv) && i <= LEARN_TEST_ARGS; i++) {
			const char *a = logread_argv_at(argv, i);

			json_array_append_new(ex, json_string(a ? a : ""));
		}
		json_object_set_new(l->raw_execs, key, ex);
	}
	free(key);
}

static void learn_exec_add(struct learn *l, char *pat, json_t *ex)
{
	if (!json_object_get(l->execs, pat))
		json_object_set(l->execs, pat, ex);
	free(pat);
}

/* A program under the project by its full path, others by base name.
 * Also the name it was called by: a PATH search (execvp) tries that name
 * in every PATH directory before it finds the program, and each try is
 * an exec the policy decides. */
static void learn_exec_patterns(struct learn *l)
{
	const char *key;
	json_t *ex;

	json_object_foreach(l->raw_execs, key, ex) {
		const char *exe = json_string_value(json_array_get(ex, 0));
		const char *a0 = json_string_value(json_array_get(ex, 1));

		if (rules_path_under(exe, l->anchors.dir[RULES_ANCHOR_ROOT]))
			learn_exec_add(l, learn_with_vars(l, exe, true), ex);
		else
			learn_exec_add(l, learn_escape("", logread_base(exe), true, true), ex);
		if (a0 && *a0 && !strchr(a0, '/') && strcmp(a0, logread_base(exe)) != 0)
			learn_exec_add(l, learn_escape("", a0, true, true), ex);
	}
}

static void learn_write(struct learn *l, const char *path)
{
	if (path && path[0] == '/' && !json_object_get(l->writes, path))
		json_object_set_new(l->writes, path, json_true());
}

static void learn_net(struct learn *l, const struct logrec *rec)
{
	char *pat, *test;

	if (rec->family && strcmp(rec->family, "unix") == 0) {
		if (!rec->addr || !*rec->addr)
			return; /* unnamed: nothing to allow or deny */
		pat = learn_escape("unix:", rec->addr, true, false);
		test = learn_escape("unix:", rec->addr, false, false);
	} else if (rec->host && *rec->host && rec->port >= 0) {
		pat = xasprintf("%s:%ld", rec->host, rec->port);
		test = xstrdup(pat);
	} else if (rec->addr && rec->port >= 0) {
		pat = xasprintf(strchr(rec->addr, ':') ? "[%s]:%ld" : "%s:%ld", rec->addr, rec->port);
		test = xstrdup(pat);
	} else {
		return;
	}
	if (!json_object_get(l->nets, pat))
		json_object_set_new(l->nets, pat, json_string(test));
	free(pat);
	free(test);
}

static void learn_record(struct learn *l, const struct logrec *rec)
{
	bool went_through;

	if (!l->first_cwd && rec->cwd)
		l->first_cwd = xstrdup(rec->cwd);
	if (!l->session && rec->session)
		l->session = xstrdup(rec->session);
	if (strcmp(rec->event, "summary") == 0) {
		free(l->summary_cwd);
		l->summary_cwd = rec->cwd ? xstrdup(rec->cwd) : NULL;
		return;
	}
	if (strcmp(rec->event, "exec") == 0) {
		l->exec_records++;
		learn_exec(l, rec->exe, rec->argv);
		return;
	}
	if (!rec->kind || !rec->action)
		return;
	went_through = strcmp(rec->action, "allow") == 0 || strcmp(rec->action, "alert") == 0;
	if (!went_through) {
		if (strcmp(rec->action, "deny") == 0)
			l->denied++;
		return;
	}
	if (strcmp(rec->kind, "exec") == 0) {
		learn_exec(l, rec->target, rec->target_argv);
	} else if (strcmp(rec->kind, "write") == 0) {
		learn_write(l, rec->path);
		learn_write(l, rec->path2);
	} else if (strcmp(rec->kind, "net") == 0) {
		learn_net(l, rec);
	}
}

/* ---- generalising writes ---- */

/* The area of a path: the whole anchor for ROOT and TMPDIR, one entry
 * below HOME, a temp dir, else the first two components. */
static char *learn_area(const struct learn *l, const char *path, bool *whole)
{
	int a = rules_anchor_of(&l->anchors, path);
	const char *base, *p;

	*whole = false;
	if (a >= 0 && learn_anchor_whole[a]) {
		*whole = true;
		return xstrdup(l->anchors.dir[a]);
	}
	for (size_t i = 0; learn_temp_dirs[i]; i++)
		if (a < 0 && rules_path_under(path, learn_temp_dirs[i])) {
			*whole = true;
			return xstrdup(learn_temp_dirs[i]);
		}
	if (a >= 0) {
		base = path + strlen(l->anchors.dir[a]);
		if (!*base)
			return xstrdup(path);
		p = strchr(base + 1, '/');
	} else {
		p = strchr(path + 1, '/');
		p = p ? strchr(p + 1, '/') : NULL;
	}
	return p ? xstrndup(path, (size_t)(p - path)) : xstrdup(path);
}

/* writes -> sorted, distinct allow patterns (json array of strings),
 * and example paths for tests (one per pattern, log order). */
static json_t *learn_write_rules(const struct learn *l, json_t *examples)
{
	json_t *areas = json_object(), *pats = json_object(), *out = json_array(), *v;
	const char *path, *area;

	/* area -> [common dir or null, below?, whole?] */
	json_object_foreach(l->writes, path, v) {
		bool whole, below;
		char *ar = learn_area(l, path, &whole), *contrib = xstrdup(path);
		json_t *st = json_object_get(areas, ar);

		below = strcmp(path, ar) != 0;
		if (below)
			learn_dirname(contrib);
		if (!st) {
			st = json_pack("[s,b,b,s]", contrib, below, whole, path);
			json_object_set_new(areas, ar, st);
		} else {
			char *common = xstrdup(json_string_value(json_array_get(st, 0)));

			learn_common_dir(common, contrib);
			json_array_set_new(st, 0, json_string(common));
			if (below)
				json_array_set_new(st, 1, json_true());
			free(common);
		}
		free(contrib);
		free(ar);
	}
	json_object_foreach(areas, area, v) {
		const char *common = json_string_value(json_array_get(v, 0));
		bool below = json_is_true(json_array_get(v, 1)), whole = json_is_true(json_array_get(v, 2));
		char *lit, *pat;

		if (whole) {
			lit = learn_with_vars(l, area, true);
			pat = xasprintf("%s/**", lit);
		} else if (below) {
			lit = learn_with_vars(l, common, true);
			pat = strcmp(common, "/") == 0 ? xstrdup("/**") : xasprintf("%s/**", lit);
		} else {
			lit = learn_with_vars(l, area, true);
			pat = xstrdup(lit);
		}
		if (!json_object_get(pats, pat)) {
			json_object_set_new(pats, pat, json_true());
			json_array_append_new(out, json_string(pat));
			json_array_append_new(examples, json_copy(json_array_get(v, 3)));
		}
		free(lit);
		free(pat);
	}
	json_decref(areas);
	json_decref(pats);
	return out;
}

/* ---- output ---- */

static int learn_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Keys of an object, sorted. */
static const char **learn_sorted_keys(const json_t *o, size_t *n)
{
	const char **k = xcalloc(json_object_size(o) + 1, sizeof(*k));
	const char *key;
	json_t *v;

	*n = 0;
	json_object_foreach((json_t *)o, key, v)
		k[(*n)++] = key;
	qsort(k, *n, sizeof(*k), learn_cmp);
	return k;
}

/* A pattern -> an id the loader accepts ("learned.write.ROOT"). */
static char *learn_id(json_t *used, const char *section, const char *text)
{
	char *id = xasprintf("learned.%s.", section), *p;
	size_t base = strlen(id);
	int n = 2;

	for (const char *s = text; *s && strlen(id) < base + 48; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == ':'))
			c = '-';
		if (c == '-' && (id[strlen(id) - 1] == '-' || id[strlen(id) - 1] == '.'))
			continue;
		p = xasprintf("%s%c", id, c);
		free(id);
		id = p;
	}
	while (strlen(id) > base && (id[strlen(id) - 1] == '-' || id[strlen(id) - 1] == '.'))
		id[strlen(id) - 1] = '\0';
	if (strlen(id) == base) {
		p = xasprintf("%srule", id);
		free(id);
		id = p;
	}
	p = xstrdup(id);
	while (json_object_get(used, p)) {
		free(p);
		p = xasprintf("%s-%d", id, n++);
	}
	free(id);
	json_object_set_new(used, p, json_true());
	return p;
}

static void learn_print_list(FILE *out, const char *section, json_t *rules, bool last)
{
	fprintf(out, "  \"%s\": {\n    \"allow\": [\n", section);
	for (size_t i = 0; i < json_array_size(rules); i++) {
		char *t = json_dumps(json_array_get(rules, i), JSON_PRESERVE_ORDER);

		fprintf(out, "      %s%s\n", t ? t : "null", i + 1 < json_array_size(rules) ? "," : "");
		free(t);
	}
	fprintf(out, "    ]\n  }%s\n", last ? "" : ",");
}

/* The exception rules of one section, each with an id first. */
static json_t *learn_exempt_rules(const struct learn *l, json_t *used, enum rules_kind k)
{
	const char *section = rules_kind_name(k);
	json_t *out = json_array(), *rule;
	size_t i;

	json_array_foreach(l->exempt[k], i, rule) {
		const char *pkey = k == RULES_KIND_EXEC ? "argv" : k == RULES_KIND_NET ? "addr" : "path";
		json_t *pat = json_object_get(rule, pkey);
		const char *text = json_is_array(pat) ? json_string_value(json_array_get(pat, 0))
						      : json_string_value(pat);
		char *idtext = xasprintf("exempt.%s", text ? logread_base(text) : "rule");
		char *id = learn_id(used, section, idtext);

		json_array_append_new(out, json_pack("{s:s,s:O,s:O}", "id", id, pkey, pat, "overrides",
						     json_object_get(rule, "overrides")));
		free(id);
		free(idtext);
	}
	return out;
}

static char *learn_policy_text(const struct learn *l, const char *log, const char *name,
			       const char *extends)
{
	json_t *used = json_object(), *exec_rules = json_array(), *write_rules = json_array();
	json_t *net_rules = json_array(), *tests = json_array(), *examples = json_array(), *wpats;
	json_t *read_rules;
	char *text = NULL, *s;
	size_t len = 0, n, n_exec_tests = 0;
	const char **keys;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		die("out of memory");
	/* exec: one rule per program, any arguments. */
	keys = learn_sorted_keys(l->execs, &n);
	for (size_t i = 0; i < n; i++) {
		char *id = learn_id(used, "exec", logread_base(keys[i]));

		json_array_append_new(exec_rules, json_pack("{s:s,s:[s,s]}", "id", id, "argv", keys[i],
							    "**"));
		free(id);
	}
	free(keys);
	/* The first programs of the run, in log order, as tests. */
	{
		const char *pat;
		json_t *ex;

		json_object_foreach(l->raw_execs, pat, ex) {
			json_t *argv;

			if (n_exec_tests++ >= LEARN_TESTS_EXEC)
				break;
			argv = json_array();
			s = learn_with_vars(l, json_string_value(json_array_get(ex, 0)), false);
			json_array_append_new(argv, json_string(s));
			free(s);
			for (size_t i = 2; i < json_array_size(ex); i++) {
				s = learn_escape("", json_string_value(json_array_get(ex, i)), false, false);
				json_array_append_new(argv, json_string(s));
				free(s);
			}
			json_array_append_new(tests, json_pack("{s:o,s:s}", "exec", argv, "expect",
							       "allow"));
		}
	}

	{
		json_t *ex = learn_exempt_rules(l, used, RULES_KIND_EXEC);

		json_array_extend(exec_rules, ex);
		json_decref(ex);
	}
	wpats = learn_write_rules(l, examples);
	for (size_t i = 0; i < json_array_size(wpats); i++) {
		const char *pat = json_string_value(json_array_get(wpats, i));
		char *id = learn_id(used, "write", pat);

		json_array_append_new(write_rules, json_pack("{s:s,s:s}", "id", id, "path", pat));
		free(id);
		if (i < LEARN_TESTS_WRITE) {
			s = learn_with_vars(l, json_string_value(json_array_get(examples, i)), false);
			json_array_append_new(tests, json_pack("{s:s,s:s}", "write", s, "expect", "allow"));
			free(s);
		}
	}

	{
		json_t *ex = learn_exempt_rules(l, used, RULES_KIND_WRITE);

		json_array_extend(write_rules, ex);
		json_decref(ex);
	}
	read_rules = learn_exempt_rules(l, used, RULES_KIND_READ);
	keys = learn_sorted_keys(l->nets, &n);
	for (size_t i = 0; i < n; i++) {
		char *id = learn_id(used, "net", keys[i]);

		json_array_append_new(net_rules, json_pack("{s:s,s:s}", "id", id, "addr", keys[i]));
		free(id);
		if (i < LEARN_TESTS_NET)
			json_array_append_new(tests, json_pack("{s:s,s:s}", "connect",
							       json_string_value(json_object_get(l->nets, keys[i])),
							       "expect", "allow"));
	}
	free(keys);
	{
		json_t *ex = learn_exempt_rules(l, used, RULES_KIND_NET);

		json_array_extend(net_rules, ex);
		json_decref(ex);
	}

	fprintf(out, "{\n  \"agenttrace\": 1,\n");
	{
		json_t *js = json_string(name);

		s = json_dumps(js, JSON_ENCODE_ANY);
		fprintf(out, "  \"name\": %s,\n", s);
		free(s);
		json_decref(js);
	}
	{
		char *d = xasprintf("Learned by agenttrace-policy learn from %s%s%s: admits what that "
				    "run did (programs, written paths generalised to directories, "
				    "destinations)%s%s%s. Review and tighten before use.",
				    log, l->session ? ", session " : "", l->session ? l->session : "",
				    extends ? ", on top of " : ", nothing else", extends ? extends : "",
				    extends ? ", whose denials still hold" : "");
		json_t *js = json_string(d);

		s = json_dumps(js, JSON_ENCODE_ANY);
		fprintf(out, "  \"description\": %s,\n", s);
		free(s);
		json_decref(js);
		free(d);
	}
	if (extends) {
		json_t *js = json_string(extends);

		s = json_dumps(js, JSON_ENCODE_ANY);
		fprintf(out, "  \"extends\": %s,\n", s);
		free(s);
		json_decref(js);
	}
	fprintf(out, "  \"mode\": \"enforce\",\n");
	if (json_array_size(exec_rules))
		learn_print_list(out, "exec", exec_rules, false);
	if (json_array_size(write_rules))
		learn_print_list(out, "write", write_rules, false);
	if (json_array_size(read_rules))
		learn_print_list(out, "read", read_rules, false);
	if (json_array_size(net_rules))
		learn_print_list(out, "net", net_rules, false);
	fprintf(out, "  \"tests\": [\n");
	for (size_t i = 0; i < json_array_size(tests); i++) {
		s = json_dumps(json_array_get(tests, i), JSON_PRESERVE_ORDER);
		fprintf(out, "    %s%s\n", s ? s : "null", i + 1 < json_array_size(tests) ? "," : "");
		free(s);
	}
	fprintf(out, "  ]\n}\n");
	if (fclose(out) != 0)
		die("out of memory");
	json_decref(used);
	json_decref(exec_rules);
	json_decref(write_rules);
	json_decref(net_rules);
	json_decref(read_rules);
	json_decref(tests);
	json_decref(examples);
	json_decref(wpats);
	return text;
}

/* The learned policy must load, tests included, with the values it was
 * learned for: anything else is a bug here, not a user error.  The block
 * (free() it), or NULL after saying why. */
static struct rules_policy *learn_verify(const struct learn *l, const char *text)
{
	char dir[PATH_MAX], *path;
	const char *tmp = getenv("TMPDIR");
	const char *names[1];
	struct rules_vars vars;
	struct rules_policy *p = NULL;
	struct rules_error err;
	FILE *f;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", tmp && *tmp ? tmp : "/tmp");
	path = xasprintf("%s/agenttrace-learn.XXXXXX.json", dir);
	fd = mkstemps(path, 5);
	if (fd < 0) {
		learn_msg(errno, "cannot check the learned policy: %s", path);
		free(path);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		learn_msg(errno, "cannot check the learned policy: %s", path);
		unlink(path);
		free(path);
		return NULL;
	}
	rules_vars_from_env(&vars, l->anchors.dir[RULES_ANCHOR_ROOT]);
	if (l->anchors.dir[RULES_ANCHOR_HOME])
		vars.home = l->anchors.dir[RULES_ANCHOR_HOME];
	if (l->anchors.dir[RULES_ANCHOR_TMPDIR])
		vars.tmpdir = l->anchors.dir[RULES_ANCHOR_TMPDIR];
	names[0] = path;
	rc = rules_load(names, 1, NULL, 0, &vars, &p, &err);
	if (rc < 0) {
		char line[2048];

		rules_error_format(&err, line, sizeof(line));
		learn_msg(0, "the learned policy does not load (a bug in agenttrace-policy learn): %s",
			 line);
		p = NULL;
	}
	unlink(path);
	free(path);
	return p;
}

/* ---- the run against the learned policy ---- */

static void learn_count(json_t *o, const char *id)
{
	json_t *n = json_object_get(o, id ? id : "?");

	json_object_set_new(o, id ? id : "?", json_integer(n ? json_integer_value(n) + 1 : 1));
}

/* Whether REC went through in the run: an exec record, or an allowed or
 * alerted event.  *BY_EXCEPTION: allowed outright (not an alert), so
 * nothing but an exception of the run's (a command-line allow, another
 * policy) can have admitted what the base denies. */
static bool learn_went_through(const struct logrec *rec, bool *by_exception)
{
	bool exec_rec = strcmp(rec->event, "exec") == 0;

	*by_exception = exec_rec || (rec->action && strcmp(rec->action, "allow") == 0);
	return exec_rec || (rec->action && (strcmp(rec->action, "allow") == 0 ||
					   strcmp(rec->action, "alert") == 0));
}

/* The allow rules of each section of a suggested layer into L->exempt,
 * once (one call's events may be of two kinds: a rename's read). */
static void learn_take_exempt(struct learn *l, const char *layer)
{
	json_t *o = json_loads(layer, 0, NULL);

	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		json_t *rules = json_object_get(json_object_get(o, rules_kind_name((enum rules_kind)k)),
						"allow"), *rule;
		size_t i, j;

		json_array_foreach(rules, i, rule) {
			json_t *have;
			bool seen = false;

			if (!json_is_object(rule))
				continue; /* a plain allow: the learned rules have it already */
			json_array_foreach(l->exempt[k], j, have)
				seen |= json_equal(have, rule);
			if (!seen) {
				json_array_append(l->exempt[k], rule);
				l->exempted++;
			}
		}
	}
	json_decref(o);
}

/* Every event of LOG decided under P.  EXEMPT: a first look, taking for
 * each event the run was allowed and P denies the rule that exempts it;
 * else the account (still denied, admitted, not admitted). */
static int learn_against(struct learn *l, const char *log, const struct rules_policy *p,
			 bool exempt)
{
	struct log_event *e = xmalloc(sizeof(*e));
	struct logread lr;
	const struct logrec *rec;
	int rc, kind;

	rc = logread_open(&lr, log);
	if (rc < 0) {
		free(e);
		return rc;
	}
	while ((rc = logread_next(&lr, &rec)) > 0) {
		bool by_exception, through;
		struct rules_call_verdict cv;

		if (!log_event_of(rec, e, &kind))
			continue;
		log_event_decide(p, rec, e, &cv);
		through = learn_went_through(rec, &by_exception);
		if (exempt) {
			struct rules_suggestion sg;

			if (!through || !by_exception || cv.action != RULES_ACTION_DENY)
				continue;
			if (rules_suggest(p, &l->anchors, l->extends, e->ev, e->n, e->explicit_deny_only,
					  RULES_ACTION_DENY, &sg) == 0 && sg.layer)
				learn_take_exempt(l, sg.layer);
			rules_suggestion_free(&sg);
			continue;
		}
		if (!through && rec->action && strcmp(rec->action, "deny") == 0) {
			if (cv.action == RULES_ACTION_DENY)
				learn_count(l->still_denied, cv.rule ? rules_string(p, cv.rule->id) : NULL);
			else
				learn_count(l->admitted, cv.rule ? rules_string(p, cv.rule->id) : NULL);
		} else if (through && cv.action == RULES_ACTION_DENY) {
			learn_count(l->not_admitted, cv.rule ? rules_string(p, cv.rule->id) : NULL);
		}
	}
	logread_close(&lr);
	free(e);
	return rc;
}

/* "write.git-hooks 5, read.aws 1" (malloc'ed); TOTAL gets the sum. */
static char *learn_rules_text(const json_t *o, size_t *total)
{
	char *text = xstrdup(""), *next;
	const char *id;
	json_t *n;

	*total = 0;
	json_object_foreach((json_t *)o, id, n) {
		next = xasprintf("%s%s%s %lld", text, *text ? ", " : "", id,
				 (long long)json_integer_value(n));
		free(text);
		text = next;
		*total += (size_t)json_integer_value(n);
	}
	return text;
}

/* The notes on standard error: what of the run the policy does not admit,
 * what it admits that the run was denied, and why. */
static void learn_account(const struct learn *l)
{
	size_t n_still, n_admitted, n_not;
	char *still = learn_rules_text(l->still_denied, &n_still);
	char *admitted = learn_rules_text(l->admitted, &n_admitted);
	char *not = learn_rules_text(l->not_admitted, &n_not);
	const char *base = l->extends ? l->extends : "the learned policy";

	if (n_still + n_admitted)
		learn_msg(0, "learn: %zu denied event%s of the run: %zu still denied%s%s%s", n_still +
			  n_admitted, n_still + n_admitted == 1 ? "" : "s", n_still, n_still ? " (" : "",
			  still, n_still ? ")" : "");
	if (n_admitted)
		learn_msg(0, "learn: %zu denied event%s of the run admitted by the learned policy (%s): "
			  "its rules generalise what the run did; review them%s", n_admitted,
			  n_admitted == 1 ? "" : "s", admitted,
			  l->extends ? "" : " (or keep --extends default, whose denials hold)");
	if (n_not)
		learn_msg(0, "learn: %zu event%s the run let through not admitted: %s denies them (%s); "
			  "in --mode audit the run let its denials through%s", n_not, n_not == 1 ? "" : "s",
			  base, not, l->extends ? ", and --extends none would admit them" : "");
	if (l->exempted)
		learn_msg(0, "learn: %zu rule%s with \"overrides\" admit%s what the run was allowed by "
			  "an exception (an --allow-* option) that %s denies", l->exempted,
			  l->exempted == 1 ? "" : "s", l->exempted == 1 ? "s" : "", base);
	free(still);
	free(admitted);
	free(not);
}

/* ---- main ---- */

char *learn_log_root(const char *log)
{
	struct logread lr;
	const struct logrec *rec;
	char *first = NULL, *summary = NULL;

	if (logread_open(&lr, log) < 0)
		return NULL;
	while (logread_next(&lr, &rec) > 0) {
		if (!first && rec->cwd)
			first = xstrdup(rec->cwd);
		if (strcmp(rec->event, "summary") == 0 && rec->cwd) {
			free(summary);
			summary = xstrdup(rec->cwd);
		}
	}
	logread_close(&lr);
	if (summary) {
		free(first);
		return summary;
	}
	return first;
}

static void learn_usage(FILE *f)
{
	fprintf(f,
		"usage: agenttrace-policy learn LOG [OPTIONS]\n"
		"\n"
		"Print an allow-list policy that admits what a run recorded with\n"
		"`agenttrace --record --log LOG` did: the programs it ran, the paths it wrote\n"
		"(generalised to directories), the destinations it reached.\n"
		"\n"
		"options:\n"
		"  --root DIR     the project root of the run, ${ROOT} (default: the run's directory)\n"
		"  --home DIR     ${HOME} of the run (default: $HOME)\n"
		"  --tmpdir DIR   ${TMPDIR} of the run (default: $TMPDIR, else /tmp)\n"
		"  --name NAME    the policy's name (default: learned)\n"
		"  --extends NAME the policy the learned rules are layered on, whose denials\n"
		"                 still win (default: default; none: a standalone policy)\n"
		"  -o FILE        write the policy to FILE\n"
		"  -q             no notes on standard error\n");
}

int learn_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "home", required_argument, NULL, 'H' },
		{ "tmpdir", required_argument, NULL, 'T' },
		{ "name", required_argument, NULL, 'n' },
		{ "extends", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *home = getenv("HOME"), *tmpdir = getenv("TMPDIR");
	const char *name = "learned", *extends = "default", *output = NULL, *log;
	struct rules_policy *p = NULL;
	bool quiet = false, bad_dir = false;
	struct learn l = { 0 };
	struct logread lr;
	const struct logrec *rec;
	char *text = NULL;
	int c, rc, status = AT_EXIT_FAILURE;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; bad_dir |= optarg[0] != '/'; break;
		case 'H': home = optarg; bad_dir |= optarg[0] != '/'; break;
		case 'T': tmpdir = optarg; bad_dir |= optarg[0] != '/'; break;
		case 'n': name = optarg; break;
		case 'e': extends = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = true; break;
		case 'h':
			learn_usage(stdout);
			return AT_EXIT_OK;
		default:
			learn_usage(stderr);
			return AT_EXIT_FAILURE;
		}
	}
	if (optind + 1 != argc) {
		learn_msg(0, "learn: %s", optind >= argc ? "a LOG is needed" : "one LOG only");
		learn_usage(stderr);
		return AT_EXIT_FAILURE;
	}
	log = argv[optind];
	if (strcmp(extends, "none") == 0)
		extends = NULL;
	if (bad_dir) {
		learn_msg(0, "learn: --root, --home and --tmpdir take absolute paths");
		return AT_EXIT_FAILURE;
	}

	rc = logread_open(&lr, log);
	if (rc < 0) {
		learn_msg(0, "learn: cannot read %s: %s", log, strerror(-rc));
		return AT_EXIT_FAILURE;
	}
	l.execs = json_object();
	l.raw_execs = json_object();
	l.writes = json_object();
	l.nets = json_object();
	l.extends = extends;
	l.still_denied = json_object();
	l.admitted = json_object();
	l.not_admitted = json_object();
	for (int k = 0; k < RULES_KIND_COUNT; k++)
		l.exempt[k] = json_array();
	while ((rc = logread_next(&lr, &rec)) > 0) {
		l.records++;
		learn_record(&l, rec);
	}
	if (rc < 0) {
		learn_msg(0, "learn: cannot read %s: %s", log, strerror(-rc));
		logread_close(&lr);
		goto out;
	}
	if (lr.malformed && !quiet)
		learn_msg(0, "learn: %s: %zu malformed line%s skipped", log, lr.malformed,
			 lr.malformed == 1 ? "" : "s");
	logread_close(&lr);
	if (!l.exec_records) {
		learn_msg(0, "learn: %s has no exec records: record the run with "
			 "`agenttrace --record --log LOG -- COMMAND`", log);
		goto out;
	}

	if (rules_anchors_set(&l.anchors, root ? root : l.summary_cwd ? l.summary_cwd : l.first_cwd,
			      tmpdir && *tmpdir ? tmpdir : "/tmp", home) < 0) {
		learn_msg(ENOMEM, "learn");
		goto out;
	}
	learn_exec_patterns(&l);

	/* The policy, then what of the run it refuses that the run was
	 * allowed (an exception of the run's: the rule that exempts it
	 * joins the policy), then the account of it against the run. */
	text = learn_policy_text(&l, log, name, extends);
	if (!(p = learn_verify(&l, text)))
		goto out;
	if (extends) {
		rc = learn_against(&l, log, p, true);
		if (rc < 0) {
			learn_msg(0, "learn: cannot read %s: %s", log, strerror(-rc));
			goto out;
		}
		if (l.exempted) {
			free(text);
			free(p);
			text = learn_policy_text(&l, log, name, extends);
			if (!(p = learn_verify(&l, text)))
				goto out;
		}
	}
	rc = learn_against(&l, log, p, false);
	if (rc < 0) {
		learn_msg(0, "learn: cannot read %s: %s", log, strerror(-rc));
		goto out;
	}
	if (output) {
		FILE *f = fopen(output, "we");

		if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
			learn_msg(errno, "learn: cannot write %s", output);
			goto out;
		}
	} else if (fputs(text, stdout) < 0 || fflush(stdout) != 0) {
		learn_msg(errno, "learn: cannot write the policy");
		goto out;
	}
	if (!quiet)
		learn_account(&l);
	status = AT_EXIT_OK;
out:
	free(p);
	for (int k = 0; k < RULES_KIND_COUNT; k++)
		json_decref(l.exempt[k]);
	json_decref(l.still_denied);
	json_decref(l.admitted);
	json_decref(l.not_admitted);
	rules_anchors_free(&l.anchors);
	json_decref(l.execs);
	json_decref(l.raw_execs);
	json_decref(l.writes);
	json_decref(l.nets);
	free(l.first_cwd);
	free(l.summary_cwd);
	free(l.session);
	free(text);
	return status;
}
