/* tracer/confine/ownpath.c: the supervisor's own opens by a given name
 * follow no symbolic link whose name a write rule admits, and every other
 * link as the kernel would. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/blockbuild.h"
#include "tracer/confine/ownpath.h"

static char dir[PATH_MAX];
static struct rules_policy *policy; /* writes admitted beneath DIR/w only */

static const char *at(const char *rel)
{
	static char buf[4][2 * PATH_MAX];
	static unsigned k;
	char *b = buf[k++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, rel);
	return b;
}

static void setup(void)
{
	char tmpl[] = "/tmp/check-ownpath.XXXXXX", pat[PATH_MAX + 8];

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, dir));
	snprintf(pat, sizeof(pat), "%s/w/**", dir);
	policy = bb_one(RULES_KIND_WRITE, pat);
	ck_assert_int_eq(mkdir(at("w"), 0700), 0);
	ck_assert_int_eq(mkdir(at("u"), 0700), 0);
	ck_assert_int_eq(mkdir(at("out"), 0700), 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(policy);
}

/* PATH opened with FLAGS: the descriptor's name (asserted), closed. */
static void opens_as(const char *path, int flags, const char *want)
{
	char link[PATH_MAX] = "x";
	int fd = ownpath_open(policy, path, flags, 0600, link, sizeof(link));
	char *name;

	ck_assert_msg(fd >= 0, "%s: %s (link %s)", path, strerror(-fd), link);
	name = ownpath_name(fd);
	ck_assert_str_eq(name, want);
	free(name);
	close(fd);
}

/* PATH refused for the link LINK ("" for too many links). */
static void refused_for(const char *path, int flags, const char *want)
{
	char link[PATH_MAX] = "x";
	int fd = ownpath_open(policy, path, flags, 0600, link, sizeof(link));

	ck_assert_msg(fd == -ELOOP, "%s: %d", path, fd);
	ck_assert_str_eq(link, want);
}

START_TEST(plain_names)
{
	/* Looked up whole (_i 0), and walked as without openat2(2) (_i 1). */
	ownpath_force_walk(_i == 1);
	opens_as(at("w/f"), O_WRONLY | O_CREAT | O_APPEND, at("w/f"));
	opens_as(at("w/f"), O_WRONLY | O_APPEND, at("w/f"));
	opens_as(at("u/../w/./f"), O_RDONLY, at("w/f"));
	opens_as("/", O_PATH, "/");
	opens_as(at("u/"), O_PATH, at("u"));
	opens_as("/dev/null", O_WRONLY, "/dev/null");
	ck_assert_int_eq(chdir(at("w")), 0);
	opens_as("../out/rel", O_WRONLY | O_CREAT, at("out/rel"));
	ck_assert_int_eq(ownpath_open(policy, at("nope/x"), O_WRONLY | O_CREAT, 0600, NULL, 0),
			 -ENOENT);
	ck_assert_int_eq(ownpath_open(policy, at("w/f/x"), O_RDONLY, 0, NULL, 0), -ENOTDIR);
}
END_TEST

START_TEST(links_a_session_could_make)
{
	ck_assert_int_eq(symlink(at("out/f"), at("w/l")), 0);
	refused_for(at("w/l"), O_WRONLY | O_CREAT | O_APPEND, at("w/l"));
	refused_for(at("w/l"), O_PATH, at("w/l"));
	ck_assert_int_eq(access(at("out/f"), F_OK), -1); /* nothing made there */
	ck_assert_int_eq(symlink(at("out"), at("w/dl")), 0);
	refused_for(at("w/dl/x"), O_WRONLY | O_CREAT, at("w/dl"));
	/* A link of the user's leading to one a session could make. */
	ck_assert_int_eq(symlink("../w/l", at("u/l2")), 0);
	refused_for(at("u/l2"), O_WRONLY | O_CREAT, at("w/l"));
	/* The session's chain: run.jsonl -> a/x, then a -> elsewhere. */
	ck_assert_int_eq(symlink(at("out"), at("w/a")), 0);
	ck_assert_int_eq(symlink("a/x", at("w/run")), 0);
	refused_for(at("w/run"), O_WRONLY | O_CREAT, at("w/run"));
}
END_TEST

START_TEST(links_of_the_user)
{
	ck_assert_int_eq(symlink(at("out/f"), at("u/l")), 0);
	opens_as(at("u/l"), O_WRONLY | O_CREAT, at("out/f"));
	ck_assert_int_eq(symlink("../out", at("u/dl")), 0);
	opens_as(at("u/dl/g"), O_WRONLY | O_CREAT, at("out/g"));
	/* /proc's links are the kernel's to follow: /dev/stdout. */
	opens_as("/proc/self/fd/0", O_PATH, "/dev/null");
	ck_assert_int_eq(symlink("b", at("u/a")), 0);
	ck_assert_int_eq(symlink("a", at("u/b")), 0);
	refused_for(at("u/a"), O_RDONLY, "");
}
END_TEST

START_TEST(directories_made)
{
	char link[PATH_MAX];
	int fd = ownpath_mkdir(policy, at("u/kept"), 0700, link, sizeof(link));
	char *name;
	struct stat st;

	ck_assert_int_ge(fd, 0);
	name = ownpath_name(fd);
	ck_assert_str_eq(name, at("u/kept"));
	free(name);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	close(fd);
	fd = ownpath_mkdir(policy, at("u/kept"), 0700, link, sizeof(link));
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(symlink(at("out"), at("w/ev")), 0);
	ck_assert_int_eq(ownpath_mkdir(policy, at("w/ev"), 0700, link, sizeof(link)), -ELOOP);
	ck_assert_str_eq(link, at("w/ev"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ownpath");
	TCase *tc = tcase_create("ownpath");
	SRunner *sr;
	int failed;

	/* fd 0 is /dev/null in every test's process. */
	if (!freopen("/dev/null", "r", stdin))
		return 99;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, plain_names, 0, 2);
	tcase_add_test(tc, links_a_session_could_make);
	tcase_add_test(tc, links_of_the_user);
	tcase_add_test(tc, directories_made);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
