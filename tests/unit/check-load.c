/* The loader: invalid policies (one folder per case, the exact error
 * line), valid policies (the exact --explain output), layering, variables,
 * command-line extras, error formatting and the shipped names.
 *
 * Data lives in $top_srcdir/tests/policies/{valid,invalid}/<case>/.
 * AGENTTRACE_TEST_REGEN=1 rewrites the "expected" files from what the
 * loader says now (review the diff before committing it). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/load.h"
#include "rules/rules.h"

#define MAX_CASES 256

static char srcdir[PATH_MAX];
static char resolv_conf[PATH_MAX];
static char resolv_empty[PATH_MAX];
static char resolv_v6[PATH_MAX];
static char *invalid_cases[MAX_CASES], *valid_cases[MAX_CASES];
static int n_invalid, n_valid;

static void fmt(char *out, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));

/* snprintf whose truncation the compiler does not second-guess: every
 * path here is far below PATH_MAX. */
static void fmt(char *out, size_t size, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(out, size, f, ap);
	va_end(ap);
}

static struct rules_vars fixed_vars(void)
{
	struct rules_vars v = {
		.root = "/home/u/proj",
		.home = "/home/u",
		.tmpdir = "/tmp/t",
		.cwd = "/home/u/proj",
		.resolv_conf = resolv_conf,
	};
	return v;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_cases(const char *kind, char **out)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int n = 0;

	fmt(dir, sizeof(dir), "%s/tests/policies/%s", srcdir, kind);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "cannot open %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	while ((e = readdir(d)) && n < MAX_CASES) {
		if (e->d_name[0] == '.')
			continue;
		out[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), name_cmp);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static bool regen(void)
{
	const char *s = getenv("AGENTTRACE_TEST_REGEN");

	return s && !strcmp(s, "1");
}

static void enter_case(const char *kind, const char *name)
{
	char dir[PATH_MAX];

	fmt(dir, sizeof(dir), "%s/tests/policies/%s/%s", srcdir, kind, name);
	ck_assert_msg(chdir(dir) == 0, "chdir %s: %s", dir, strerror(errno));
}

START_TEST(test_invalid_case)
{
	const char *name = invalid_cases[_i];
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "policy.json" };
	struct rules_policy *p = NULL;
	struct rules_error err;
	char line[2048], *expected;
	int rc;

	enter_case("invalid", name);
	rc = rules_load(names, 1, NULL, 0, &vars, &p, &err);
	ck_assert_msg(rc == -1, "%s: loaded but should not", name);
	ck_assert_ptr_null(p);
	rules_error_format(&err, line, sizeof(line));
	if (regen()) {
		strcat(line, "\n");
		spit("expected", line);
		return;
	}
	expected = slurp("expected");
	ck_assert_msg(expected, "%s: no expected file", name);
	expected[strcspn(expected, "\n")] = '\0';
	ck_assert_msg(!strcmp(line, expected), "%s:\n  got      %s\n  expected %s", name, line,
		      expected);
	free(expected);
}
END_TEST

START_TEST(test_valid_case)
{
	const char *name = valid_cases[_i];
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "policy.json" };
	struct rules_policy *p = NULL;
	struct rules_error err;
	char line[2048], *text, *expected;

	enter_case("valid", name);
	if (rules_load(names, 1, NULL, 0, &vars, &p, &err) < 0) {
		rules_error_format(&err, line, sizeof(line));
		ck_abort_msg("%s: %s", name, line);
	}
	ck_assert_int_eq(rules_policy_check(p, p->size), 0);
	text = rules_explain(p);
	ck_assert_ptr_nonnull(text);
	if (regen()) {
		spit("expected", text);
	} else {
		expected = slurp("expected");
		ck_assert_msg(expected, "%s: no expected file", name);
		ck_assert_msg(!strcmp(text, expected), "%s: explain differs:\n%s", name, text);
		free(expected);
	}
	free(text);
	free(p);
}
END_TEST

/* ---- helpers for the tests written in C ---- */

static char tmpdir[PATH_MAX];

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX + 64];

	fmt(path, sizeof(path), "%s/%s", tmpdir, name);
	spit(path, text);
}

static void setup_tmp(void)
{
	const char *b = getenv("top_builddir");

	fmt(tmpdir, sizeof(tmpdir), "%s/tests/unit/check-load.tmp.XXXXXX", b ? b : ".");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(chdir(tmpdir), 0);
}

/* Everything below DIR (the link tests make trees), then DIR. */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX + 300];
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void teardown_tmp(void)
{
	if (chdir(srcdir) == 0)
		remove_tree(tmpdir);
}

static struct rules_policy *load_ok(const char *const *names, size_t n,
				    const struct rules_extra *x, size_t nx,
				    const struct rules_vars *vars)
{
	struct rules_policy *p = NULL;
	struct rules_error err;
	char line[2048];

	if (rules_load(names, n, x, nx, vars, &p, &err) < 0) {
		rules_error_format(&err, line, sizeof(line));
		ck_abort_msg("load failed: %s", line);
	}
	return p;
}

static void load_fails(const char *const *names, size_t n, const struct rules_extra *x,
		       size_t nx, const struct rules_vars *vars, const char *want)
{
	struct rules_policy *p = NULL;
	struct rules_error err;
	char line[2048];

	ck_assert_int_eq(rules_load(names, n, x, nx, vars, &p, &err), -1);
	ck_assert_ptr_null(p);
	rules_error_format(&err, line, sizeof(line));
	ck_assert_msg(!strcmp(line, want), "got      %s\nexpected %s", line, want);
}

static const struct rules_rule *find_rule(const struct rules_policy *p, const char *id,
					  int nth)
{
	for (uint32_t i = 0; i < p->rules_count; i++) {
		const struct rules_rule *r = rules_rule_at(p, i);

		if (!strcmp(rules_string(p, r->id), id) && nth-- == 0)
			return r;
	}
	return NULL;
}

static enum rules_action decide_write(const struct rules_policy *p, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct rules_verdict v;

	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	return v.action;
}

static enum rules_action decide_read(const struct rules_policy *p, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_READ, .path = path };
	struct rules_verdict v;

	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	return v.action;
}

/* ---- layering ---- */

START_TEST(test_layers_two_files)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "a.json", "b.json" };
	struct rules_policy *p;
	const struct rules_rule *r;

	write_file("a.json", "{\"agenttrace\": 1, \"mode\": \"audit\", \"record\": true,\n"
		   " \"write\": {\"allow\": [\"/a/**\"]},\n"
		   " \"env\": {\"drop\": [\"A_*\"]},\n"
		   " \"limits\": {\"max_procs\": 5, \"timeout\": 10}}\n");
	write_file("b.json", "{\"agenttrace\": 1, \"name\": \"bee\", \"mode\": \"enforce\",\n"
		   " \"write\": {\"allow\": [\"/b/**\"]},\n"
		   " \"env\": {\"drop\": [\"B_*\"]},\n"
		   " \"limits\": {\"timeout\": 20, \"max_memory\": \"2G\"}}\n");
	p = load_ok(names, 2, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, p->name), "bee");
	ck_assert_str_eq(rules_string(p, p->layers), "a.json+b.json");
	ck_assert_int_eq(p->mode, RULES_MODE_ENFORCE); /* from the last layer */
	ck_assert_int_eq(p->record, 1);                /* any layer */
	ck_assert_uint_eq(p->limits.max_procs, 5);     /* per key, last that sets it */
	ck_assert_uint_eq(p->limits.timeout_sec, 20);
	ck_assert_uint_eq(p->limits.max_memory, 2ULL << 30);
	ck_assert_uint_eq(p->limits.max_cpu_sec, 0);
	ck_assert_uint_eq(p->span[RULES_KIND_WRITE][RULES_ACTION_ALLOW].count, 2);
	/* generated ids count through the merged list: stable and unique */
	r = rules_rule_at(p, p->span[RULES_KIND_WRITE][RULES_ACTION_ALLOW].first);
	ck_assert_str_eq(rules_string(p, r->id), "write.allow.1");
	ck_assert_str_eq(rules_string(p, r->source), "/a/**");
	ck_assert_str_eq(rules_string(p, r->origin), "a.json:2:22");
	r++;
	ck_assert_str_eq(rules_string(p, r->id), "write.allow.2");
	ck_assert_str_eq(rules_string(p, r->origin), "b.json:2:22");
	ck_assert_uint_eq(p->env_drop_count, 2);
	ck_assert(rules_env_dropped(p, "A_X", 3));
	ck_assert(rules_env_dropped(p, "B_X", 3));
	ck_assert(!rules_env_dropped(p, "C_X", 3));
	ck_assert_int_eq(decide_write(p, "/a/x"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_write(p, "/b/x"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_write(p, "/c/x"), RULES_ACTION_DENY);
	free(p);
}
END_TEST

START_TEST(test_layers_repeated_base)
{
	/* strict and ci both extend default: default is merged once, so
	 * its ids are not duplicates. */
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "strict", "ci", "default" };
	struct rules_policy *p = load_ok(names, 3, NULL, 0, &vars);

	ck_assert_str_eq(rules_string(p, p->layers), "default+strict+ci");
	ck_assert_str_eq(rules_string(p, p->name), "ci");
	ck_assert_ptr_nonnull(find_rule(p, "write.git-hooks", 0));
	ck_assert_ptr_null(find_rule(p, "write.git-hooks", 1));
	ck_assert_ptr_nonnull(find_rule(p, "exec.allow.git", 0));
	ck_assert_ptr_nonnull(find_rule(p, "net.registry.pypi", 0));
	free(p);
}
END_TEST

START_TEST(test_layers_default_when_none)
{
	struct rules_vars vars = fixed_vars();
	struct rules_policy *p = load_ok(NULL, 0, NULL, 0, &vars);

	ck_assert_str_eq(rules_string(p, p->name), "default");
	ck_assert_str_eq(rules_string(p, p->layers), "default");
	free(p);
}
END_TEST

START_TEST(test_layers_extends_file_and_mode)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "top.json" };
	struct rules_policy *p;

	write_file("top.json", "{\"agenttrace\": 1, \"extends\": \"audit\",\n"
		   " \"write\": {\"allow\": [\"/opt/out/**\"]}}\n");
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_int_eq(p->mode, RULES_MODE_AUDIT); /* top does not set it */
	ck_assert_int_eq(p->record, 1);
	ck_assert_str_eq(rules_string(p, p->layers), "default+audit+top.json");
	ck_assert_str_eq(rules_string(p, p->name), "top.json");
	ck_assert_int_eq(rules_effective(p, RULES_ACTION_DENY), RULES_ACTION_ALERT);
	free(p);
}
END_TEST

START_TEST(test_extras)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "default" };
	struct rules_extra x[] = {
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "${ROOT}/.git/config", NULL, NULL },
		{ RULES_KIND_NET, RULES_ACTION_ALLOW, "pypi.org:443", NULL, NULL },
		{ RULES_KIND_EXEC, RULES_ACTION_ALLOW, "make", NULL, NULL },
		{ RULES_KIND_WRITE, RULES_ACTION_DENY, "/home/u/proj/agenttrace.log", "write.self-log",
		  "agenttrace's own log" },
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "/home/u/proj/*.log", NULL, NULL },
	};
	/* default's own test "write ${ROOT}/.git/config: deny" still passes:
	 * the tests check the policy without the command-line rules */
	struct rules_policy *p = load_ok(names, 1, x, 5, &vars);
	const struct rules_rule *r = find_rule(p, "net.allow.10", 0);
	struct rules_event ev = { .kind = RULES_KIND_NET, .host = "pypi.org", .port = 443 };
	struct rules_verdict v;

	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(rules_string(p, r->origin), "<command line>");
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_ALLOW);
	/* a command-line allow exempts exactly what it matches from the
	 * policy's denies (git init needs --allow-write '${ROOT}/.git/config') */
	ck_assert_int_eq(decide_write(p, "/home/u/proj/.git/config"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_write(p, "/home/u/proj/sub/.git/config"), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_write(p, "/home/u/proj/.git/hooks/x"), RULES_ACTION_DENY);
	r = find_rule(p, "write.git-config", 0);
	/* default's own two (node_modules, site-packages) + the two extras
	 * (.git/config and *.log) */
	ck_assert_uint_eq(r->unless_count, 4);
	/* ... but never from the program's own denies */
	ck_assert_int_eq(decide_write(p, "/home/u/proj/agenttrace.log"), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_write(p, "/home/u/proj/other.log"), RULES_ACTION_ALLOW);
	r = find_rule(p, "write.self-log", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(rules_string(p, r->why), "agenttrace's own log");
	/* --allow-exec adds an exception; it does not turn default (which has
	 * no exec allow-list) into one that refuses every other program */
	r = rules_rule_at(p, p->fallback[RULES_KIND_EXEC]);
	ck_assert_str_eq(rules_string(p, r->id), "exec.fallback");
	ck_assert_int_eq(r->action, RULES_ACTION_ALLOW);
	free(p);
}
END_TEST

START_TEST(test_extras_exec)
{
	struct rules_vars vars = fixed_vars();
	const char *def[] = { "default" }, *strict[] = { "strict" };
	struct rules_extra x[] = { { RULES_KIND_EXEC, RULES_ACTION_ALLOW, "sudo", NULL, NULL } };
	const char *sudo_argv[] = { "sudo", "-n", "true" };
	const char *tool_argv[] = { "frobnicate" };
	struct rules_event sudo = { .kind = RULES_KIND_EXEC, .exe = "/usr/bin/sudo",
				    .argv = sudo_argv, .argc = 3 };
	struct rules_event tool = { .kind = RULES_KIND_EXEC, .exe = "/usr/bin/frobnicate",
				    .argv = tool_argv, .argc = 1 };
	struct rules_verdict v;
	struct rules_policy *p;

	/* default: the command-line allow lifts default's sudo deny, and
	 * every other program stays allowed */
	p = load_ok(def, 1, x, 1, &vars);
	ck_assert_int_eq(rules_decide(p, &sudo, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_ALLOW);
	ck_assert_int_eq(rules_decide(p, &tool, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_ALLOW);
	free(p);
	/* strict is an allow-list: the extra joins it, others stay out */
	p = load_ok(strict, 1, x, 1, &vars);
	ck_assert_int_eq(rules_decide(p, &sudo, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_ALLOW);
	ck_assert_int_eq(rules_decide(p, &tool, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "exec.not-allowed");
	free(p);
}
END_TEST

START_TEST(test_extras_errors)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "default" };
	struct rules_extra bad_net[] = { { RULES_KIND_NET, RULES_ACTION_ALLOW, "pypi.org:99999", NULL, NULL } };
	struct rules_extra bad_path[] = { { RULES_KIND_WRITE, RULES_ACTION_ALLOW, "build/**", NULL, NULL } };
	struct rules_extra dup[] = { { RULES_KIND_WRITE, RULES_ACTION_DENY, "/x", "write.git-hooks", "x" } };

	load_fails(names, 1, bad_net, 1, &vars,
		   "<command line>: net rule \"pypi.org:99999\": port out of range or not a number in \"99999\" (1-65535)");
	load_fails(names, 1, bad_path, 1, &vars,
		   "<command line>: write rule \"build/**\": path pattern \"build/**\" must be absolute after expansion");
	load_fails(names, 1, dup, 1, &vars,
		   "<command line>: duplicate id \"write.git-hooks\" (first used at <builtin:default>:38:14)");
}
END_TEST

/* The policies' tests judge the policy as written, without the
 * command-line rules, even though the loader runs them on the block
 * with them whenever no test event touches one (compiling twice was
 * half of agenttrace's start-up).  Each extra here matches one test's
 * event and would flip its outcome: the loader must notice and decide
 * that test without the extras. */
static const char flip_policy[] =
	"{\"agenttrace\": 1,\n"
	" \"write\": {\"allow\": [\"/w/**\"],\n"
	"           \"deny\": [{\"id\": \"write.secret\", \"path\": \"/w/secret/**\"}]},\n"
	" \"net\": {\"allow\": [\"pypi.org:443\"]},\n"
	" \"exec\": {\"deny\": [\"curl\"]},\n"
	" \"tests\": [\n"
	"  {\"write\": \"/w/secret/k\", \"expect\": \"deny\"},\n"
	"  {\"write\": \"/w/a\", \"expect\": \"allow\"},\n"
	"  {\"write\": \"/elsewhere/x\", \"expect\": \"deny\"},\n"
	"  {\"connect\": \"example.com:443\", \"expect\": \"deny\"},\n"
	"  {\"exec\": [\"curl\", \"-s\"], \"expect\": \"deny\"},\n"
	"  {\"exec\": [\"make\"], \"expect\": \"allow\"}\n"
	" ]}\n";

START_TEST(test_extras_flip_a_test)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	static const struct rules_extra flips[] = {
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "/w/secret/**", NULL, NULL },
		{ RULES_KIND_WRITE, RULES_ACTION_DENY, "/w/a", "write.self", "agenttrace's" },
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "/elsewhere/**", NULL, NULL },
		{ RULES_KIND_NET, RULES_ACTION_ALLOW, "example.com:443", NULL, NULL },
		{ RULES_KIND_EXEC, RULES_ACTION_ALLOW, "curl", NULL, NULL },
		{ RULES_KIND_EXEC, RULES_ACTION_DENY, "make", "exec.no-make", NULL },
	};
	static const char *const path[] = { "/w/secret/k", "/w/a", "/elsewhere/x" };
	static const enum rules_action want[] = {
		RULES_ACTION_ALLOW, RULES_ACTION_DENY, RULES_ACTION_ALLOW,
	};

	write_file("p.json", flip_policy);
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		/* alone, and after an extra that no test touches */
		struct rules_extra two[2] = {
			{ RULES_KIND_WRITE, RULES_ACTION_DENY, "/unrelated/log", "write.log", NULL },
			flips[i],
		};
		struct rules_policy *p = load_ok(names, 1, &flips[i], 1, &vars);
		struct rules_policy *q = load_ok(names, 1, two, 2, &vars);

		/* ... and the block in force has the extra all the same */
		if (i < 3) {
			ck_assert_int_eq(decide_write(p, path[i]), want[i]);
			ck_assert_int_eq(decide_write(q, path[i]), want[i]);
		}
		ck_assert_int_eq(decide_write(q, "/unrelated/log"), RULES_ACTION_DENY);
		free(p);
		free(q);
	}
}
END_TEST

START_TEST(test_extras_do_not_hide_a_failing_test)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "q.json" };
	struct rules_extra fix[] = { { RULES_KIND_WRITE, RULES_ACTION_ALLOW, "/elsewhere/**", NULL, NULL } };
	struct rules_extra other[] = { { RULES_KIND_WRITE, RULES_ACTION_DENY, "/unrelated", NULL, NULL } };
	struct rules_extra dup[] = { { RULES_KIND_WRITE, RULES_ACTION_DENY, "/x", "write.w", NULL } };
	struct rules_extra bad[] = { { RULES_KIND_WRITE, RULES_ACTION_ALLOW, "rel/**", NULL, NULL } };
	const char *want = "q.json:4:3: tests[0]: expected allow, got deny (rule write.fallback)";

	write_file("q.json", "{\"agenttrace\": 1,\n"
		   " \"write\": {\"allow\": [{\"id\": \"write.w\", \"path\": \"/w/**\"}]},\n"
		   " \"tests\": [\n"
		   "  {\"write\": \"/elsewhere/x\", \"expect\": \"allow\"}]}\n");
	/* the extra would make the test pass: it still fails */
	load_fails(names, 1, fix, 1, &vars, want);
	/* an extra no test touches: the same failure */
	load_fails(names, 1, other, 1, &vars, want);
	/* the policy's own failure comes before the extras' errors */
	load_fails(names, 1, dup, 1, &vars, want);
	load_fails(names, 1, bad, 1, &vars, want);
	load_fails(names, 1, NULL, 0, &vars, want);
	/* and with the test passing, the extras' errors */
	write_file("q.json", "{\"agenttrace\": 1,\n"
		   " \"write\": {\"allow\": [{\"id\": \"write.w\", \"path\": \"/w/**\"}]},\n"
		   " \"tests\": [\n"
		   "  {\"write\": \"/elsewhere/x\", \"expect\": \"deny\"}]}\n");
	load_fails(names, 1, dup, 1, &vars,
		   "<command line>: duplicate id \"write.w\" (first used at q.json:2:29)");
	load_fails(names, 1, bad, 1, &vars,
		   "<command line>: write rule \"rel/**\": path pattern \"rel/**\" must be absolute after expansion");
}
END_TEST

/* ---- variables ---- */

START_TEST(test_vars_root_unset_uses_cwd)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	struct rules_policy *p;

	vars.root = NULL;
	vars.cwd = "/work/x";
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": [\"${ROOT}/**\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, rules_rule_at(p, 0)->source), "/work/x/**");
	free(p);
}
END_TEST

START_TEST(test_vars_home_unset)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	const char *dflt[] = { "default" };
	struct rules_policy *p;

	vars.home = NULL;
	/* not used: fine */
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": [\"${ROOT}/**\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
	free(p);
	/* used: an error naming the variable */
	write_file("p.json", "{\"agenttrace\": 1,\n \"read\": {\"deny\": [\"${HOME}/.netrc\"]}}");
	load_fails(names, 1, NULL, 0, &vars,
		   "p.json:2:20: read.deny[0]: ${HOME} is unset (no HOME and no home directory in the passwd entry)");
	load_fails(dflt, 1, NULL, 0, &vars,
		   "<builtin:default>:16:37: write.allow[8].path: ${HOME} is unset (no HOME and no home directory in the passwd entry)");
}
END_TEST

START_TEST(test_vars_tmpdir_unset)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	struct rules_policy *p;

	vars.tmpdir = NULL;
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": [\"${TMPDIR}/**\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, rules_rule_at(p, 0)->source), "/tmp/**");
	free(p);
}
END_TEST

START_TEST(test_vars_ssh_auth_sock)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "default" };
	struct rules_policy *p;
	const struct rules_rule *r;
	struct rules_event ev = { .kind = RULES_KIND_NET, .family = 1 /* AF_UNIX */,
				  .unix_path = "/run/user/1000/agent.sock" };
	struct rules_verdict v;
	char *text;

	/* unset: the rule is dropped and listed as such */
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_ptr_null(find_rule(p, "net.ssh-agent", 0));
	text = rules_explain(p);
	ck_assert_ptr_nonnull(strstr(text, "\"dropped\": [\n"));
	ck_assert_ptr_nonnull(strstr(text, "      \"id\": \"net.ssh-agent\",\n"
				 "      \"pattern\": \"unix:${SSH_AUTH_SOCK}\""));
	ck_assert_ptr_nonnull(strstr(text, "\"unset\": \"SSH_AUTH_SOCK\""));
	free(text);
	free(p);
	/* set: denied */
	vars.env_path[RULES_ENV_SSH_AUTH_SOCK] = "/run/user/1000/agent.sock";
	p = load_ok(names, 1, NULL, 0, &vars);
	r = find_rule(p, "net.ssh-agent", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(rules_string(p, r->source), "unix:/run/user/1000/agent.sock");
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_DENY);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.ssh-agent");
	free(p);
}
END_TEST

/* ${CLAUDE_CODE_SSE_PORT}: the agent policy's IDE port, dropped unset. */
START_TEST(test_vars_ide_port)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "agent" };
	struct rules_policy *p;
	const struct rules_rule *r;
	struct rules_event ev = { .kind = RULES_KIND_NET, .family = AF_INET,
				  .addr = { 127, 0, 0, 1 }, .port = 43210,
				  .endpoint = RULES_ENDPOINT_OUTSIDE };
	struct rules_verdict v;
	struct rules_vars env;

	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_ptr_null(find_rule(p, "net.agent-ide.claude", 0));
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.local-outside");
	free(p);

	vars.ide_port = "43210";
	p = load_ok(names, 1, NULL, 0, &vars);
	r = find_rule(p, "net.agent-ide.claude", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(rules_string(p, r->source), "127.0.0.1:43210");
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, RULES_ACTION_ALLOW);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.agent-ide.claude");
	ev.port = 43211;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_str_eq(rules_string(p, v.rule->id), "net.local-outside");
	free(p);

	/* Only a port is taken from the environment. */
	setenv("CLAUDE_CODE_SSE_PORT", "43210", 1);
	rules_vars_from_env(&env, NULL);
	ck_assert_str_eq(env.ide_port, "43210");
	setenv("CLAUDE_CODE_SSE_PORT", "1-65535", 1);
	rules_vars_from_env(&env, NULL);
	ck_assert_ptr_null(env.ide_port);
	setenv("CLAUDE_CODE_SSE_PORT", "70000", 1);
	rules_vars_from_env(&env, NULL);
	ck_assert_ptr_null(env.ide_port);
	unsetenv("CLAUDE_CODE_SSE_PORT");

	/* A port in a path is an error. */
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": "
		   "[\"/x/${CLAUDE_CODE_SSE_PORT}\"]}}");
	names[0] = "p.json";
	load_fails(names, 1, NULL, 0, &vars,
		   "p.json:1:39: write.allow[0]: ${CLAUDE_CODE_SSE_PORT} is only valid in net patterns");
}
END_TEST

START_TEST(test_vars_resolvers)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "default" };
	struct rules_policy *p;
	const struct rules_rule *r;

	p = load_ok(names, 1, NULL, 0, &vars);
	r = find_rule(p, "net.resolvers", 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(rules_string(p, r->source), "192.0.2.53:53");
	free(p);
	/* IPv6 resolvers get brackets when a port follows; several -> several rules */
	vars.resolv_conf = resolv_v6;
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, find_rule(p, "net.resolvers", 0)->source), "192.0.2.53:53");
	ck_assert_str_eq(rules_string(p, find_rule(p, "net.resolvers", 1)->source), "[2001:db8::53]:53");
	free(p);
	/* no nameserver: the pattern is dropped */
	vars.resolv_conf = resolv_empty;
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_ptr_null(find_rule(p, "net.resolvers", 0));
	free(p);
}
END_TEST

START_TEST(test_vars_glob_chars_escaped)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	struct rules_policy *p;

	vars.root = "/home/u/my[proj]*";
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": [\"${ROOT}/**\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, rules_rule_at(p, 0)->source), "/home/u/my\\[proj\\]\\*/**");
	ck_assert_int_eq(decide_write(p, "/home/u/my[proj]*/x"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_write(p, "/home/u/myp]*/x"), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_write(p, "/home/u/my[proj]zz/x"), RULES_ACTION_DENY);
	free(p);
}
END_TEST

START_TEST(test_vars_root_is_slash)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	struct rules_policy *p;

	vars.root = "/";
	write_file("p.json", "{\"agenttrace\": 1, \"write\": {\"allow\": [\"${ROOT}/**\", \"${ROOT}/x/../y/\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
	ck_assert_str_eq(rules_string(p, rules_rule_at(p, 0)->source), "/**");
	ck_assert_str_eq(rules_string(p, rules_rule_at(p, 1)->source), "/y");
	free(p);
}
END_TEST

/* The tree of a links test in the temp dir: DIRS, FILES ("x" in each),
 * then LINKS ({ target, name }); HOME gets its "h", the home the
 * variables name. */
#define MAKE_TREE(dirs, files, links, home)                                                    \
	make_tree(dirs, sizeof(dirs) / sizeof(dirs[0]), files, sizeof(files) / sizeof(files[0]), \
		  links, sizeof(links) / sizeof(links[0]), home)

static void make_tree(const char *const *dirs, size_t n_dirs, const char *const *files,
		      size_t n_files, const char *const (*links)[2], size_t n_links, char *home)
{
	for (size_t i = 0; i < n_dirs; i++)
		ck_assert_int_eq(mkdir(dirs[i], 0700), 0);
	for (size_t i = 0; i < n_files; i++)
		write_file(files[i], "x");
	for (size_t i = 0; i < n_links; i++)
		ck_assert_int_eq(symlink(links[i][0], links[i][1]), 0);
	fmt(home, PATH_MAX, "%s/h", tmpdir);
}

/* Names below a deny rule's glob that are links when the policy loads:
 * the rule names where they lead too (rules/linkscan.h), but not for an
 * exception's name, a link to the home tree or above it, or one deeper
 * than the walk goes. */
START_TEST(test_linked_names_below_glob)
{
	static const char *const dirs[] = { "h", "h/.creds", "h/.creds/a", "h/.creds/a/b",
					     "h/.creds/a/b/c", "h/.creds/a/b/c/d", "vault",
					     "vault/dir" };
	static const char *const files[] = { "vault/key", "vault/pub", "vault/dir/x",
					     "vault/deep", "vault/deeper" };
	static const char *const links[][2] = {
		{ "../../vault/key", "h/.creds/key" },
		{ "../../vault/pub", "h/.creds/key.pub" },
		{ "../../vault/dir", "h/.creds/d" },
		{ "..", "h/.creds/up" },
		{ "/", "h/.creds/root" },
		{ "../../../../../vault/deep", "h/.creds/a/b/c/deep" },
		{ "../../../../../../vault/deeper", "h/.creds/a/b/c/d/deeper" },
	};
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	char home[PATH_MAX], path[PATH_MAX + 64];
	struct rules_policy *p;

	MAKE_TREE(dirs, files, links, home);
	vars.home = home;
	/* The policy's own tests see its text, not this machine's links:
	 * the key is allowed by them, denied by the twin. */
	fmt(path, sizeof(path),
	    "{\"agenttrace\": 1, \"read\": {\"deny\": [{\"path\": \"${HOME}/.creds/**\", "
	    "\"unless\": [\"${HOME}/.creds/*.pub\"]}]}, "
	    "\"tests\": [{\"read\": \"%s/vault/key\", \"expect\": \"allow\"}]}", tmpdir);
	write_file("p.json", path);
	p = load_ok(names, 1, NULL, 0, &vars);
#define AT(name) (fmt(path, sizeof(path), "%s/%s", tmpdir, (name)), path)
	ck_assert_int_eq(decide_read(p, AT("h/.creds/key")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/key")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/pub")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, AT("vault/dir/x")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/dir")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/deep")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/deeper")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, AT("h/notes")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, AT("p.json")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, "/etc/hostname"), RULES_ACTION_ALLOW);
#undef AT
	free(p);
}
END_TEST

/* What the walk for links below a glob looks through and at: a
 * directory linked whole and the links inside it (a stow-folded
 * directory of links), the names near the top before a deep tree, a
 * linked head whose name holds glob characters; and what it leaves:
 * links to the system's files and to programs. */
START_TEST(test_linked_names_walk)
{
	static const char *const dirs[] = { "h", "h/.creds", "h/.creds/cache", "vault",
					    "vault/farm", "vault/dots [v2]", "vault/dots v" };
	static const char *const files[] = { "vault/key", "vault/k2", "vault/top",
					     "vault/dots [v2]/id_x", "vault/dots v/id_x" };
	static const char *const links[][2] = {
		{ "../../vault/farm", "h/.creds/farm" },
		{ "../key", "vault/farm/inner" },
		{ "../../vault/top", "h/.creds/zz-top" },
		{ "/etc/hostname", "h/.creds/hostname" },
		{ "/dev/null", "h/.creds/null" },
		{ "../../vault/prog", "h/.creds/prog" },
		{ "../vault/dots [v2]", "h/.keys" },
	};
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };
	char home[PATH_MAX], path[PATH_MAX + 64];
	struct rules_policy *p;

	MAKE_TREE(dirs, files, links, home);
	vars.home = home;
	write_file("vault/prog", "#!/bin/sh\n");
	ck_assert_int_eq(chmod("vault/prog", 0755), 0);
	/* More entries below than the walk looks at in one pattern. */
	for (int i = 0; i < 600; i++) {
		fmt(path, sizeof(path), "h/.creds/cache/c%d", i);
		write_file(path, "");
	}
	write_file("p.json", "{\"agenttrace\": 1, \"read\": {\"deny\": ["
			     "\"${HOME}/.creds/**\", \"${HOME}/.keys/id_*\"]}}");
	p = load_ok(names, 1, NULL, 0, &vars);
#define AT(name) (fmt(path, sizeof(path), "%s/%s", tmpdir, (name)), path)
	ck_assert_int_eq(decide_read(p, AT("vault/farm/x")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/key")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/top")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/k2")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, "/etc/hostname"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, "/dev/null"), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, AT("vault/prog")), RULES_ACTION_ALLOW);
	ck_assert_int_eq(decide_read(p, AT("vault/dots [v2]/id_x")), RULES_ACTION_DENY);
	ck_assert_int_eq(decide_read(p, AT("vault/dots v/id_x")), RULES_ACTION_ALLOW);
#undef AT
	free(p);
}
END_TEST

START_TEST(test_vars_from_env)
{
	struct rules_vars v;

	setenv("HOME", "/nonexistent-home/u/", 1);
	setenv("TMPDIR", "relative", 1);
	unsetenv("SSH_AUTH_SOCK");
	rules_vars_from_env(&v, "/nonexistent-root/./p/");
	ck_assert_str_eq(v.home, "/nonexistent-home/u");
	ck_assert_str_eq(v.root, "/nonexistent-root/p");
	ck_assert_ptr_null(v.tmpdir); /* not absolute: unset -> /tmp */
	ck_assert_ptr_null(v.env_path[RULES_ENV_SSH_AUTH_SOCK]);
	ck_assert_ptr_null(v.resolv_conf);
	ck_assert_ptr_nonnull(v.cwd);
	ck_assert_int_eq(v.cwd[0], '/');
	rules_vars_from_env(&v, NULL);
	ck_assert_ptr_null(v.root);
}
END_TEST

/* ---- check_file, errors, shipped names ---- */

struct collected {
	char lines[16][1024];
	int n;
};

static void collect(const struct rules_error *e, void *arg)
{
	struct collected *c = arg;

	if (c->n < 16)
		rules_error_format(e, c->lines[c->n++], sizeof(c->lines[0]));
}

START_TEST(test_check_file_every_error)
{
	struct rules_vars vars = fixed_vars();
	struct collected c = { .n = 0 };

	write_file("p.json", "{\"agenttrace\": 1,\n"
		   " \"write\": {\"allow\": [\"rel/x\", \"/ok\", \"/a**\"], \"bogus\": []},\n"
		   " \"net\": {\"allow\": [\"10.0.0.0/40\"]},\n"
		   " \"mode\": \"x\"}\n");
	ck_assert_int_eq(rules_check_file("p.json", &vars, collect, &c), 5);
	ck_assert_int_eq(c.n, 5);
	ck_assert_str_eq(c.lines[0], "p.json:2:22: write.allow[0]: path pattern \"rel/x\" must be absolute after expansion");
	ck_assert_str_eq(c.lines[1], "p.json:2:38: write.allow[2]: '**' must be a whole path component in \"/a**\"");
	ck_assert_str_eq(c.lines[2], "p.json:2:47: write.bogus: unknown key \"bogus\"");
	ck_assert_str_eq(c.lines[3], "p.json:3:20: net.allow[0]: bad CIDR prefix in \"10.0.0.0/40\" (0-32)");
	ck_assert_str_eq(c.lines[4], "p.json:4:10: mode: must be \"enforce\" or \"audit\"");
	c.n = 0;
	write_file("ok.json", "{\"agenttrace\": 1, \"extends\": \"strict\"}");
	ck_assert_int_eq(rules_check_file("ok.json", &vars, collect, &c), 0);
	ck_assert_int_eq(rules_check_file("agent", &vars, collect, &c), 0);
	ck_assert_int_eq(c.n, 0);
}
END_TEST

START_TEST(test_positions_count_characters)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "p.json" };

	/* "é" is two bytes but one column, as in jansson's own positions */
	write_file("p.json", "{\"description\": \"caf\xc3\xa9\", \"mode\": \"x\", \"agenttrace\": 1}");
	load_fails(names, 1, NULL, 0, &vars, "p.json:1:33: mode: must be \"enforce\" or \"audit\"");
	/* escapes in keys are decoded before comparing */
	write_file("p.json", "{\"agenttrace\": 1, \"mo\\u0064e\": 3}");
	load_fails(names, 1, NULL, 0, &vars, "p.json:1:32: mode: expected a string, got an integer");
}
END_TEST

START_TEST(test_error_format)
{
	struct rules_error e = { .file = "p.json", .line = 3, .column = 7, .keypath = "write.deny[1].path",
				 .text = "bad" };
	char buf[128];

	rules_error_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "p.json:3:7: write.deny[1].path: bad");
	e.keypath[0] = '\0';
	rules_error_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "p.json:3:7: bad");
	e.line = 0;
	rules_error_format(&e, buf, sizeof(buf));
	ck_assert_str_eq(buf, "p.json: bad");
	rules_error_format(&e, buf, 4);
	ck_assert_str_eq(buf, "p.j");
}
END_TEST

START_TEST(test_builtin_names)
{
	static const char *const want[] = { "default", "strict", "ci", "audit", "agent", "registries", NULL };
	struct rules_vars vars = fixed_vars();

	for (int i = 0; want[i]; i++) {
		size_t len = 0;
		const char *text = rules_builtin(want[i], &len);
		const char *names[] = { want[i] };
		struct rules_policy *p;

		ck_assert_str_eq(rules_builtin_names[i], want[i]);
		ck_assert_ptr_nonnull(text);
		ck_assert_uint_gt(len, 100);
		ck_assert_uint_eq(strlen(text), len);
		p = load_ok(names, 1, NULL, 0, &vars);
		ck_assert_str_eq(rules_string(p, p->name), want[i]);
		free(p);
	}
	ck_assert_ptr_null(rules_builtin_names[6]);
	ck_assert_ptr_null(rules_builtin("nope", NULL));
}
END_TEST

/* A shipped policy's own tests must hold wherever the temp dir is, or
 * agenttrace refuses to start (125) there: a TMPDIR inside the project,
 * a project under /tmp or in the TMPDIR itself. */
START_TEST(test_builtin_any_tmpdir)
{
	static const struct { const char *root, *home, *tmpdir; } sets[] = {
		{ "/home/u/proj", "/home/u", "/home/u/proj/tmp" },
		{ "/tmp/proj", "/home/u", "/tmp" },
		{ "/tmp/proj", "/home/u", "/tmp/proj" },
		{ "/work/proj", "/home/u", "/work/tmp" },
	};

	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		struct rules_vars vars = fixed_vars();

		vars.root = vars.cwd = sets[k].root;
		vars.home = sets[k].home;
		vars.tmpdir = sets[k].tmpdir;
		for (int i = 0; rules_builtin_names[i]; i++) {
			const char *names[] = { rules_builtin_names[i] };

			free(load_ok(names, 1, NULL, 0, &vars));
		}
	}
}
END_TEST

START_TEST(test_unknown_name)
{
	struct rules_vars vars = fixed_vars();
	const char *names[] = { "defualt" };
	const char *files[] = { "missing.json" };

	load_fails(names, 1, NULL, 0, &vars,
		   "defualt: unknown shipped policy \"defualt\" (shipped: default, strict, ci, audit, agent, registries; a file name needs a '/' or \".json\")");
	load_fails(files, 1, NULL, 0, &vars,
		   "missing.json: cannot read \"missing.json\": No such file or directory");
}
END_TEST

static Suite *load_suite(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tcase_create("data");
	TCase *c = tcase_create("c");

	tcase_add_loop_test(tc, test_invalid_case, 0, n_invalid);
	tcase_add_loop_test(tc, test_valid_case, 0, n_valid);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(c, setup_tmp, teardown_tmp);
	tcase_add_test(c, test_layers_two_files);
	tcase_add_test(c, test_layers_repeated_base);
	tcase_add_test(c, test_layers_default_when_none);
	tcase_add_test(c, test_layers_extends_file_and_mode);
	tcase_add_test(c, test_extras);
	tcase_add_test(c, test_extras_exec);
	tcase_add_test(c, test_extras_errors);
	tcase_add_test(c, test_extras_flip_a_test);
	tcase_add_test(c, test_extras_do_not_hide_a_failing_test);
	tcase_add_test(c, test_vars_root_unset_uses_cwd);
	tcase_add_test(c, test_vars_home_unset);
	tcase_add_test(c, test_vars_tmpdir_unset);
	tcase_add_test(c, test_builtin_any_tmpdir);
	tcase_add_test(c, test_vars_ssh_auth_sock);
	tcase_add_test(c, test_vars_resolvers);
	tcase_add_test(c, test_vars_ide_port);
	tcase_add_test(c, test_vars_glob_chars_escaped);
	tcase_add_test(c, test_vars_root_is_slash);
	tcase_add_test(c, test_linked_names_below_glob);
	tcase_add_test(c, test_linked_names_walk);
	tcase_add_test(c, test_vars_from_env);
	tcase_add_test(c, test_check_file_every_error);
	tcase_add_test(c, test_positions_count_characters);
	tcase_add_test(c, test_error_format);
	tcase_add_test(c, test_builtin_names);
	tcase_add_test(c, test_unknown_name);
	tcase_set_timeout(c, 30);
	suite_add_tcase(s, c);
	return s;
}

static void make_resolv(char *path, const char *name, const char *text)
{
	const char *b = getenv("top_builddir");
	FILE *f;

	fmt(path, PATH_MAX, "%s/tests/unit/check-load.%s", b ? b : ".", name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	{
		char abs[PATH_MAX];

		if (!realpath(path, abs)) {
			perror(path);
			exit(1);
		}
		memcpy(path, abs, sizeof(abs));
	}
}

int main(void)
{
	const char *top = getenv("top_srcdir");
	SRunner *sr;
	int failed;

	if (!realpath(top ? top : "..", srcdir)) {
		fprintf(stderr, "set top_srcdir to the source tree\n");
		return 99;
	}
	fmt(resolv_conf, sizeof(resolv_conf), "%s/tests/policies/resolv.conf", srcdir);
	make_resolv(resolv_empty, "resolv-empty", "# no nameserver here\nsearch example\n");
	make_resolv(resolv_v6, "resolv-v6",
		    "nameserver 192.0.2.53\n  nameserver\t2001:db8::53%eth0 # v6\nnameserver bogus\n");
	n_invalid = list_cases("invalid", invalid_cases);
	n_valid = list_cases("valid", valid_cases);
	sr = srunner_create(load_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	unlink(resolv_empty);
	unlink(resolv_v6);
	for (int i = 0; i < n_invalid; i++)
		free(invalid_cases[i]);
	for (int i = 0; i < n_valid; i++)
		free(valid_cases[i]);
	return failed ? 1 : 0;
}
