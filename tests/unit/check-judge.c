/* The shared decide-and-record step (tracer/judge.c): each event class and
 * mode, and the same event given as the ptrace backend gives it (decided
 * here) and as the preload backend gives it (decided by the shim with
 * rules_decide_call(), then recorded here) makes the same record, but for
 * "backend" and the record's place in the log (seq, time). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/generalise.h"
#include "rules/load.h"
#include "tracer/judge.h"
#include "tracer/options.h"
#include "tracer/session.h"
#include "tracer/shim/hosts.h"

static struct session s;
static struct options opt;
static char dir[PATH_MAX], logpath[PATH_MAX + 16], home[PATH_MAX + 16], root[PATH_MAX + 16];

static void setup_mode(uint8_t mode, bool record_all)
{
	const char *names[] = { "default" };
	struct rules_vars vars = { 0 };
	struct rules_error err = { 0 };

	snprintf(dir, sizeof(dir), "%s/check-judge.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(root, sizeof(root), "%s/proj", dir);
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	ck_assert_int_eq(mkdir(home, 0700), 0);
	ck_assert_int_eq(mkdir(root, 0700), 0);
	ck_assert_int_eq(chdir(root), 0);
	/* The protected files exist: a call on a missing one gets the
	 * kernel's own ENOENT, with no record. */
	for (const char *const *f = (const char *const[]){ ".bashrc", ".profile", ".ssh/id_rsa", NULL };
	     *f; f++) {
		char p[2 * PATH_MAX];

		snprintf(p, sizeof(p), "%s/.ssh", home);
		mkdir(p, 0700);
		snprintf(p, sizeof(p), "%s/%s", home, *f);
		close(open(p, O_WRONLY | O_CREAT, 0600));
	}
	vars.root = root;
	vars.home = home;
	vars.tmpdir = "/tmp";
	vars.cwd = root;

	memset(&s, 0, sizeof(s));
	memset(&opt, 0, sizeof(opt));
	opt.log = logpath;
	s.opt = &opt;
	s.log_fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	ck_assert_int_ge(s.log_fd, 0);
	ck_assert_int_eq(rules_load(names, 1, NULL, 0, &vars, &s.policy, &err), 0);
	s.policy->mode = mode;
	ck_assert_int_eq(rules_anchors_set(&s.anchors, root, "/tmp", home), 0);
	s.record_all = record_all;
	s.hosts = hosts_new();
	snprintf(s.id, sizeof(s.id), "0123456789abcdef");
}

static void setup(void)
{
	setup_mode(RULES_MODE_ENFORCE, false);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];

	close(s.log_fd);
	hosts_free(s.hosts);
	rules_anchors_free(&s.anchors);
	free(s.policy);
	ck_assert_int_eq(chdir("/"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The records of the log so far, as a JSON array. */
static json_t *records(void)
{
	json_t *a = json_array();
	FILE *f = fopen(logpath, "re");
	char line[65536];

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		json_error_t e;
		json_t *o = json_loads(line, 0, &e);

		ck_assert_msg(o, "not JSON: %s", line);
		json_array_append_new(a, o);
	}
	fclose(f);
	return a;
}

static const char *const self_argv[] = { "agent", "--run", NULL };

static struct judge_who who(const char *backend)
{
	static char cwd[PATH_MAX];
	struct judge_who w = { .pid = getpid(), .ppid = getppid(), .exe = "/usr/bin/agent",
			       .argv = self_argv, .argc = 2, .backend = backend };

	/* The shim reports its cwd; the ptrace backend reads /proc/PID/cwd. */
	if (backend) {
		ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
		w.cwd = cwd;
	}
	return w;
}

/* As the ptrace loop does: decide here, record. */
static struct judge_verdict as_ptrace(struct judge_call *c)
{
	struct judge_who w = who(NULL);
	struct judge_verdict v;

	judge_decide(&s, c, &v);
	judge_record(&s, &w, c, &v);
	return v;
}

/* As the preload backend does: the shim decides in-process (the same
 * combining step, its own host names), the supervisor records. */
static struct judge_verdict as_preload(struct judge_call *c)
{
	struct judge_who w = who("preload");
	struct rules_call_verdict cv;
	struct judge_verdict v;
	uint32_t rule;

	rules_decide_call(s.policy, c->events, c->n_events, c->explicit_deny_only, &cv);
	rule = cv.rule ? (uint32_t)(cv.rule - rules_rule_at(s.policy, 0)) : UINT32_MAX;
	judge_names(&s, c);
	judge_shim_verdict(&s, c, cv.action, cv.effective, rule,
			   cv.effective == RULES_ACTION_DENY ? c->deny_errno : 0, &v);
	judge_record(&s, &w, c, &v);
	return v;
}

/* The last two records are the same but for backend, seq and time. */
static void same_records(void)
{
	json_t *a = records(), *x, *y;
	size_t n = json_array_size(a);

	ck_assert_uint_ge(n, 2);
	x = json_deep_copy(json_array_get(a, n - 2));
	y = json_deep_copy(json_array_get(a, n - 1));
	ck_assert_str_eq(json_string_value(json_object_get(x, "backend")), "ptrace");
	ck_assert_str_eq(json_string_value(json_object_get(y, "backend")), "preload");
	for (json_t *o = x; o; o = o == x ? y : NULL) {
		json_object_del(o, "backend");
		json_object_del(o, "seq");
		json_object_del(o, "time");
	}
	if (!json_equal(x, y)) {
		char *tx = json_dumps(x, JSON_SORT_KEYS), *ty = json_dumps(y, JSON_SORT_KEYS);

		ck_abort_msg("records differ:\n  ptrace:  %s\n  preload: %s", tx, ty);
	}
	json_decref(x);
	json_decref(y);
	json_decref(a);
}

static json_t *last_record(void)
{
	json_t *a = records(), *r;

	ck_assert_uint_ge(json_array_size(a), 1);
	r = json_incref(json_array_get(a, json_array_size(a) - 1));
	json_decref(a);
	return r;
}

static size_t n_records(void)
{
	json_t *a = records();
	size_t n = json_array_size(a);

	json_decref(a);
	return n;
}

#define STR(o, k) json_string_value(json_object_get((o), (k)))

START_TEST(write_denied_same_under_both)
{
	char path[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct judge_call c = { .syscall = "openat", .events = &ev, .n_events = 1,
				.has_flags = true, .flags = O_WRONLY | O_APPEND, .deny_errno = EACCES };
	struct judge_verdict v;
	json_t *r;

	snprintf(path, sizeof(path), "%s/.bashrc", home);
	v = as_ptrace(&c);
	ck_assert_int_eq(v.effective, RULES_ACTION_DENY);
	ck_assert_int_eq(v.err, EACCES);
	v = as_preload(&c);
	ck_assert_int_eq(v.err, EACCES);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "event"), "alert");
	ck_assert_str_eq(STR(r, "kind"), "write");
	ck_assert_str_eq(STR(r, "flags"), "O_WRONLY|O_APPEND");
	ck_assert_str_eq(STR(r, "errno"), "EACCES");
	/* The fix, a layer over the run's policy, its path under ${HOME}. */
	ck_assert_str_eq(STR(r, "suggest"), "{\"agenttrace\":1,\"extends\":\"default\",\"write\":{\"allow\":"
			  "[{\"path\":\"${HOME}/.bashrc\",\"overrides\":[\"write.home.bashrc\"]}]}}");
	json_decref(r);
}
END_TEST

/* A cache-like name above the session's own directories (distcheck's
 * "_build") is no cache: the suggestion stays the path itself. */
START_TEST(generalise_skips_caches_holding_the_session)
{
	struct rules_anchors a;
	struct rules_event ev = { .kind = RULES_KIND_WRITE };
	char *g;

	ck_assert_int_eq(rules_anchors_set(&a, "/w/_build/sub/t/root", "/w/_build/sub/t/tmp",
					   "/w/_build/sub/t/home"), 0);
	ev.path = "/w/_build/sub/t/outside/x";
	g = rules_generalise(&a, RULES_KIND_WRITE, &ev);
	ck_assert_str_eq(g, "/w/_build/sub/t/outside/x");
	free(g);
	ev.path = "/w/_build/sub/t/outside/.cache/pip/x";
	g = rules_generalise(&a, RULES_KIND_WRITE, &ev);
	ck_assert_str_eq(g, "/w/_build/sub/t/outside/.cache/pip/**");
	free(g);
	ev.path = "/w/_build/sub/t/home/.gradle/caches/x/y";
	g = rules_generalise(&a, RULES_KIND_WRITE, &ev);
	ck_assert_str_eq(g, "${HOME}/.gradle/caches/**");
	free(g);
	rules_anchors_free(&a);
}
END_TEST

START_TEST(rename_two_paths_same_under_both)
{
	char from[2 * PATH_MAX], to[2 * PATH_MAX];
	struct rules_event ev[2] = { { .kind = RULES_KIND_WRITE, .path = from },
				     { .kind = RULES_KIND_WRITE, .path = to } };
	struct judge_call c = { .syscall = "rename", .events = ev, .n_events = 2,
				.deny_errno = EACCES };
	json_t *r;

	snprintf(from, sizeof(from), "%s/x", root);
	snprintf(to, sizeof(to), "%s/.git/hooks/pre-commit", root);
	ck_assert_int_eq(as_ptrace(&c).effective, RULES_ACTION_DENY);
	as_preload(&c);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "path"), from);
	ck_assert_str_eq(STR(r, "path2"), to);
	json_decref(r);
}
END_TEST

START_TEST(read_denied_same_under_both)
{
	char path[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_READ, .path = path };
	struct judge_call c = { .syscall = "openat", .events = &ev, .n_events = 1,
				.has_flags = true, .flags = O_RDONLY, .deny_errno = EACCES };

	snprintf(path, sizeof(path), "%s/.ssh/id_rsa", home);
	ck_assert_int_eq(as_ptrace(&c).effective, RULES_ACTION_DENY);
	as_preload(&c);
	same_records();
}
END_TEST

START_TEST(net_denied_same_under_both)
{
	struct rules_event ev = { .kind = RULES_KIND_NET, .family = AF_INET,
				  .addr = { 192, 0, 2, 10 }, .port = 443 };
	struct judge_call c = { .syscall = "connect", .events = &ev, .n_events = 1,
				.deny_errno = EACCES };
	json_t *r;

	/* A name the shim reported for the address. */
	hosts_add(s.hosts, "evil.example", AF_INET, ev.addr, CHANNEL_SOURCE_SHIM);
	ck_assert_int_eq(as_ptrace(&c).effective, RULES_ACTION_DENY);
	ev.host = NULL;
	c.host_source[0] = 0;
	as_preload(&c);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "family"), "inet");
	ck_assert_str_eq(STR(r, "addr"), "192.0.2.10");
	ck_assert_str_eq(STR(r, "host"), "evil.example");
	ck_assert_str_eq(STR(r, "host_source"), "shim");
	ck_assert_str_eq(STR(r, "suggest"), "{\"agenttrace\":1,\"extends\":\"default\",\"net\":{\"allow\":[\"evil.example:443\"]}}");
	json_decref(r);
}
END_TEST

START_TEST(exec_alert_same_under_both)
{
	static const char *const argv[] = { "pip", "install", "x", NULL };
	char exe[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = exe, .argv = argv, .argc = 3 };
	struct judge_call c = { .syscall = "execve", .events = &ev, .n_events = 1,
				.deny_errno = EACCES, .exec_recorded_later = true };
	struct judge_verdict v;
	json_t *r;

	snprintf(exe, sizeof(exe), "%s/pip", root);
	close(open(exe, O_WRONLY | O_CREAT, 0755));
	v = as_ptrace(&c);
	ck_assert_int_eq(v.effective, RULES_ACTION_ALERT);
	ck_assert_int_eq(v.err, 0);
	as_preload(&c);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "action"), "alert");
	ck_assert_str_eq(STR(r, "target"), exe);
	/* Every alert of a policy rule carries its suggestion: that alert
	 * silenced, for that command line. */
	ck_assert_str_eq(STR(r, "suggest"), "{\"agenttrace\":1,\"extends\":\"default\",\"exec\":{\"allow\":"
			  "[{\"argv\":[\"${ROOT}/pip\",\"install\",\"x\"],\"overrides\":[\"exec.install.pip\"]}]}}");
	json_decref(r);
}
END_TEST

START_TEST(allowed_recorded_only_with_record)
{
	char path[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct judge_call c = { .syscall = "unlink", .events = &ev, .n_events = 1,
				.deny_errno = EACCES };
	json_t *r;

	snprintf(path, sizeof(path), "%s/a.txt", root);
	ck_assert_int_eq(as_ptrace(&c).effective, RULES_ACTION_ALLOW);
	ck_assert_uint_eq(n_records(), 0);
	s.record_all = true;
	as_ptrace(&c);
	as_preload(&c);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "event"), "write");
	ck_assert_str_eq(STR(r, "action"), "allow");
	json_decref(r);
}
END_TEST

START_TEST(audit_mode_alerts_instead)
{
	char path[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct judge_call c = { .syscall = "openat", .events = &ev, .n_events = 1,
				.has_flags = true, .flags = O_WRONLY, .deny_errno = EACCES };
	struct judge_verdict v;
	json_t *r;

	s.policy->mode = RULES_MODE_AUDIT;
	snprintf(path, sizeof(path), "%s/.profile", home);
	v = as_ptrace(&c);
	ck_assert_int_eq(v.action, RULES_ACTION_DENY);
	ck_assert_int_eq(v.effective, RULES_ACTION_ALERT);
	ck_assert_int_eq(v.err, 0);
	as_preload(&c);
	same_records();
	r = last_record();
	ck_assert_str_eq(STR(r, "action"), "alert");
	ck_assert_str_eq(STR(r, "mode"), "audit");
	ck_assert_ptr_null(json_object_get(r, "errno"));
	json_decref(r);
}
END_TEST

START_TEST(kernel_answers_are_quiet)
{
	char path[2 * PATH_MAX], exe[2 * PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct judge_call c = { .syscall = "mkdir", .events = &ev, .n_events = 1,
				.deny_errno = EACCES };
	static const char *const argv[] = { "sudo", NULL };
	struct rules_event xev = { .kind = RULES_KIND_EXEC, .exe = exe, .argv = argv, .argc = 1 };
	struct judge_call x = { .syscall = "execve", .events = &xev, .n_events = 1,
				.deny_errno = EACCES, .exec_recorded_later = true };
	struct judge_verdict v;

	/* mkdir of a name that exists: EEXIST comes before any permission.
	 * (Not /usr: the default policy's cache for root's yarn lies below
	 * it, and a directory on the way to a write root is no denial.) */
	snprintf(path, sizeof(path), "/etc");
	v = as_ptrace(&c);
	ck_assert(v.quiet);
	ck_assert_int_eq(v.err, EEXIST);
	/* A PATH candidate that does not exist: ENOENT, execvp goes on. */
	snprintf(exe, sizeof(exe), "%s/no/sudo", root);
	v = as_ptrace(&x);
	ck_assert(v.quiet);
	ck_assert_int_eq(v.err, ENOENT);
	ck_assert_uint_eq(n_records(), 0);
}
END_TEST

START_TEST(own_verdict_is_recorded)
{
	struct judge_call c = { .syscall = "io_uring_setup" };
	struct judge_who w = who(NULL);
	struct judge_verdict v;
	json_t *r;

	judge_own(&v, SESSION_KIND_SYSCALL, 0, RULES_ACTION_DENY, "syscall.io_uring",
		  "io_uring steps around the supervisor", EPERM);
	judge_record(&s, &w, &c, &v);
	r = last_record();
	ck_assert_str_eq(STR(r, "kind"), "syscall");
	ck_assert_str_eq(STR(r, "rule"), "syscall.io_uring");
	ck_assert_str_eq(STR(r, "errno"), "EPERM");
	/* No policy rule: nothing to suggest. */
	ck_assert_ptr_null(json_object_get(r, "suggest"));
	json_decref(r);
	ck_assert_uint_eq(s.denials, 1);
}
END_TEST

static Suite *judge_suite(void)
{
	Suite *su = suite_create("judge");
	TCase *tc = tcase_create("judge");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, write_denied_same_under_both);
	tcase_add_test(tc, rename_two_paths_same_under_both);
	tcase_add_test(tc, generalise_skips_caches_holding_the_session);
	tcase_add_test(tc, read_denied_same_under_both);
	tcase_add_test(tc, net_denied_same_under_both);
	tcase_add_test(tc, exec_alert_same_under_both);
	tcase_add_test(tc, allowed_recorded_only_with_record);
	tcase_add_test(tc, audit_mode_alerts_instead);
	tcase_add_test(tc, kernel_answers_are_quiet);
	tcase_add_test(tc, own_verdict_is_recorded);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	SRunner *sr = srunner_create(judge_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
