/* cgroup_fork() and cgroup_enter_self() on this machine's real cgroups:
 * a child made by clone3(CLONE_INTO_CGROUP) into a v2 cgroup, one that
 * moves itself into v2 (the fallback) and into a v1 hierarchy, each
 * checked from the child's own /proc/self/cgroup.  Needs root; a machine
 * without a hierarchy of one version tests the other. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/confine/cgroup.h"

/* Where this process's cgroup of one hierarchy is: the v2 one (CTL NULL)
 * or the v1 one with controller CTL.  The mount's root must be "/" (no
 * cgroup namespace), else the test cannot name the directory. */
static bool own_cgroup(const char *ctl, char *out, size_t size)
{
	char line[4096], mnt[PATH_MAX] = "", rel[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!mnt[0] && fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], fstype[64], opts[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(dash, " - %63s %*s %1023s", fstype, opts) != 2 || strcmp(root, "/") != 0)
			continue;
		if (ctl ? strcmp(fstype, "cgroup") == 0 && strstr(opts, ctl) :
			  strcmp(fstype, "cgroup2") == 0)
			snprintf(mnt, sizeof(mnt), "%s", point);
	}
	fclose(f);
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return false;
	while (!rel[0] && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		if (ctl ? strcmp(a + 1, ctl) == 0 : strncmp(line, "0:", 2) == 0 && !a[1])
			snprintf(rel, sizeof(rel), "%.*s", (int)strcspn(b + 1, "\n"), b + 1);
	}
	fclose(f);
	return mnt[0] && rel[0] &&
	       (size_t)snprintf(out, size, "%s%s", mnt, strcmp(rel, "/") ? rel : "") < size;
}

/* The child: in DIR's cgroup (of the hierarchy that line LINE_PREFIX of
 * /proc/self/cgroup names) after cgroup_enter_self() when it was not made
 * there.  Exit 0 when so. */
static void child_check(const struct cgroup_session *cg, bool entered, const char *want)
{
	char line[4096];
	FILE *f;
	int found = 0;

	if (!entered && cgroup_enter_self(cg) < 0)
		_exit(2);
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		_exit(3);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want))
			found = 1;
	_exit(found ? 0 : 1);
}

/* Makes DIR/agenttrace-check.PID, forks into it by CG of VERSION and
 * waits: what the child found, and whether it was made there. */
static void run_case(int version, const char *base, bool want_entered)
{
	struct cgroup_session cg = { .version = version };
	char dir[PATH_MAX + 64], want[128];
	bool entered;
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s/agenttrace-check.%d", base, (int)getpid());
	ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
	cg.pids_dir = dir;
	snprintf(want, sizeof(want), "/agenttrace-check.%d\n", (int)getpid());
	pid = cgroup_fork(&cg, &entered);
	if (pid == 0)
		child_check(&cg, entered, want);
	ck_assert_msg(pid > 0, "cgroup_fork: %s", strerror(errno));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	rmdir(dir);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child is not in %s (status %#x)",
		      dir, st);
	ck_assert_int_eq(entered, want_entered);
}

/* Not root: nothing can be tested, which CI (AGENTTRACE_MUST_WORK=1)
 * does not accept. */
static bool can_test(const char *what, const char *ctl, char *base, size_t size)
{
	bool must = getenv("AGENTTRACE_MUST_WORK") && !strcmp(getenv("AGENTTRACE_MUST_WORK"), "1");

	if (geteuid() != 0) {
		ck_assert_msg(!must, "%s: needs root, and AGENTTRACE_MUST_WORK=1", what);
		fprintf(stderr, "# %s: skipped (not root)\n", what);
		return false;
	}
	if (!own_cgroup(ctl, base, size)) {
		fprintf(stderr, "# %s: no such hierarchy here\n", what);
		return false;
	}
	return true;
}

START_TEST(test_v2_clone_into_cgroup)
{
	char base[PATH_MAX];

	if (can_test("v2, clone3", NULL, base, sizeof(base)))
		run_case(2, base, true);
}
END_TEST

START_TEST(test_v2_child_enters)
{
	char base[PATH_MAX];

	setenv("AGENTTRACE_TEST_NO_CLONE_INTO_CGROUP", "1", 1);
	if (can_test("v2, the child moves itself", NULL, base, sizeof(base)))
		run_case(2, base, false);
	unsetenv("AGENTTRACE_TEST_NO_CLONE_INTO_CGROUP");
}
END_TEST

START_TEST(test_v1_child_enters)
{
	char base[PATH_MAX];

	if (can_test("v1 pids, the child moves itself", "pids", base, sizeof(base)))
		run_case(1, base, false);
}
END_TEST

/* At least one hierarchy is there to be tested. */
START_TEST(test_some_hierarchy)
{
	char base[PATH_MAX];

	if (geteuid() == 0)
		ck_assert_msg(own_cgroup(NULL, base, sizeof(base)) ||
				      own_cgroup("pids", base, sizeof(base)),
			      "neither a cgroup2 mount nor a v1 pids hierarchy");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("fork");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_v2_clone_into_cgroup);
	tcase_add_test(tc, test_v2_child_enters);
	tcase_add_test(tc, test_v1_child_enters);
	tcase_add_test(tc, test_some_hierarchy);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
