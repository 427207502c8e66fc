/* path_resolve() against a real child: it chdirs, opens dirfds and a pipe
 * in a temp dir under the build dir, then waits; the test resolves names
 * in its view. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rules/rules.h"
#include "tracer/syscall/path.h"

static char T[PATH_MAX];     /* the temp dir, resolved */
static pid_t child;
static int child_dfd, child_pipe; /* fd numbers in the child */

static void mk(const char *name)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", T, name);
	ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
}

static void ln(const char *target, const char *name)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", T, name);
	unlink(p);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s: %s", p, strerror(errno));
}

static void touch(const char *name)
{
	char p[PATH_MAX * 2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", T, name);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void setup(void)
{
	char tmpl[] = "tmp-check-path-XXXXXX";
	char sub[PATH_MAX + 16], d[PATH_MAX + 16];
	int pfd[2], info[2];

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, T));
	mk("d");
	mk("d/sub");
	mk("n\xff\xfe");
	touch("d/f");
	touch("n\xff\xfe/file");
	ln("d", "ln-d");                       /* relative dir link */
	ln("d/sub", "ln-sub");                 /* ln-sub/.. is d, not T */
	ln("d/newfile", "dangling");
	ln("loop2", "loop1");
	ln("loop1", "loop2");
	snprintf(sub, sizeof(sub), "%s/d", T);
	ln(sub, "abs-d");                      /* absolute dir link */

	ck_assert_int_eq(pipe(pfd), 0);
	ck_assert_int_eq(pipe(info), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int fds[2];

		close(info[0]);
		snprintf(sub, sizeof(sub), "%s/d/sub", T);
		snprintf(d, sizeof(d), "%s/d", T);
		if (chdir(sub) < 0)
			_exit(1);
		fds[0] = open(d, O_RDONLY | O_DIRECTORY);
		fds[1] = pfd[0];
		if (write(info[1], fds, sizeof(fds)) != (ssize_t)sizeof(fds))
			_exit(2);
		pause();
		_exit(0);
	}
	close(info[1]);
	close(pfd[0]);
	close(pfd[1]);
	{
		int fds[2];

		ck_assert_int_eq(read(info[0], fds, sizeof(fds)), (ssize_t)sizeof(fds));
		child_dfd = fds[0];
		child_pipe = fds[1];
	}
	close(info[0]);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", T);
}

/* Resolve NAME in the child's view and compare with T + EXPECT_SUFFIX. */
static void expect(int dirfd, const char *name, int flags, const char *suffix)
{
	char out[PATH_MAX], want[PATH_MAX * 2];
	int rc = path_resolve(child, dirfd, name, flags, out, sizeof(out));

	snprintf(want, sizeof(want), "%s%s", T, suffix);
	ck_assert_msg(rc == 0, "%s: rc %d", name, rc);
	ck_assert_str_eq(out, want);
}

static void expect_abs(int dirfd, const char *name, int flags, const char *want)
{
	char out[PATH_MAX];
	int rc = path_resolve(child, dirfd, name, flags, out, sizeof(out));

	ck_assert_msg(rc == 0, "%s: rc %d", name, rc);
	ck_assert_str_eq(out, want);
}

static const char *at(const char *suffix)
{
	static char buf[4][PATH_MAX * 2];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", T, suffix);
	return buf[i];
}

START_TEST(cwd_relative)
{
	expect(AT_FDCWD, "x", 0, "/d/sub/x");
	expect(AT_FDCWD, "./x/", 0, "/d/sub/x");
	expect(AT_FDCWD, ".", 0, "/d/sub");
	expect(AT_FDCWD, "..//f", 0, "/d/f");
}
END_TEST

START_TEST(dirfd_relative)
{
	expect(child_dfd, "f", 0, "/d/f");
	expect(child_dfd, "sub/../f", 0, "/d/f");
	/* an absolute name ignores the dirfd */
	expect(child_dfd, at("/d/f"), 0, "/d/f");
	{
		char out[PATH_MAX];

		ck_assert_int_eq(path_resolve(child, 999, "x", 0, out, sizeof(out)), -EBADF);
		ck_assert_int_eq(path_resolve(child, child_pipe, "x", 0, out, sizeof(out)),
				 -ENOTDIR);
	}
}
END_TEST

START_TEST(dotdot)
{
	expect(AT_FDCWD, "../../d/./f", 0, "/d/f");
	expect_abs(AT_FDCWD, "/..", 0, "/");
	expect_abs(AT_FDCWD, "/../../etc/./passwd", 0, "/etc/passwd");
	expect_abs(AT_FDCWD, "//", 0, "/");
}
END_TEST

START_TEST(symlinked_parent)
{
	expect(AT_FDCWD, at("/ln-d/f"), 0, "/d/f");
	expect(AT_FDCWD, at("/abs-d/sub/new"), 0, "/d/sub/new");
	/* ".." after a symlink leaves the link's target, not the link */
	expect(AT_FDCWD, at("/ln-sub/../f"), 0, "/d/f");
	/* a final link not followed is the link itself */
	expect(AT_FDCWD, at("/ln-d"), PATH_NOFOLLOW, "/ln-d");
	expect(AT_FDCWD, at("/ln-d"), 0, "/d");
	/* a trailing slash follows even without follow */
	expect(AT_FDCWD, at("/ln-d/"), PATH_NOFOLLOW, "/d");
}
END_TEST

START_TEST(dangling_final_symlink)
{
	/* O_CREAT through a dangling link creates its target */
	expect(AT_FDCWD, at("/dangling"), 0, "/d/newfile");
	/* O_CREAT|O_EXCL, unlink, rename: the link itself */
	expect(AT_FDCWD, at("/dangling"), PATH_NOFOLLOW, "/dangling");
}
END_TEST

START_TEST(not_existing)
{
	expect(AT_FDCWD, "nope/deeper/../x", 0, "/d/sub/nope/x");
	expect(AT_FDCWD, at("/d/new.txt"), 0, "/d/new.txt");
	expect(AT_FDCWD, at("/ln-d/nope"), 0, "/d/nope");
}
END_TEST

START_TEST(proc_self_fd)
{
	char name[64], out[PATH_MAX];

	snprintf(name, sizeof(name), "/proc/self/fd/%d", child_dfd);
	expect(AT_FDCWD, name, 0, "/d");
	snprintf(name, sizeof(name), "/proc/self/fd/%d/f", child_dfd);
	expect(AT_FDCWD, name, 0, "/d/f");
	snprintf(name, sizeof(name), "/proc/thread-self/fd/%d/sub", child_dfd);
	expect(AT_FDCWD, name, 0, "/d/sub");
	snprintf(name, sizeof(name), "/proc/%d/fd/%d/../f", (int)child, child_dfd);
	expect(AT_FDCWD, name, 0, "/f");
	/* a pipe is no file-system object */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", child_pipe);
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, name, 0, out, sizeof(out)), PATH_NOT_FS);
	ck_assert_msg(strncmp(out, "pipe:[", 6) == 0, "%s", out);
	ck_assert_int_eq(path_fd(child, child_pipe, out, sizeof(out)), PATH_NOT_FS);
	ck_assert_int_eq(path_fd(child, child_dfd, out, sizeof(out)), 0);
	ck_assert_str_eq(out, at("/d"));
	/* the fd itself, not followed: still the magic link's name */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", child_dfd);
	snprintf(out, sizeof(out), "x");
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, name, PATH_NOFOLLOW, out, sizeof(out)), 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "/proc/%d/fd/%d", (int)child, child_dfd);
		ck_assert_str_eq(out, want);
	}
}
END_TEST

START_TEST(proc_self_cwd)
{
	expect(AT_FDCWD, "/proc/self/cwd/x", 0, "/d/sub/x");
	expect(AT_FDCWD, "/proc/self/cwd", 0, "/d/sub");
	expect_abs(AT_FDCWD, "/proc/self/root/etc/passwd", 0, "/etc/passwd");
}
END_TEST

START_TEST(proc_reported_as_self)
{
	char out[PATH_MAX], want[64];

	ck_assert_int_eq(path_resolve(child, AT_FDCWD, "/proc/self/environ", 0, out, sizeof(out)),
			 0);
	snprintf(want, sizeof(want), "/proc/%d/environ", (int)child);
	ck_assert_str_eq(out, want);
	rules_proc_self(out, sizeof(out), child, NULL, NULL);
	ck_assert_str_eq(out, "/proc/self/environ");
	/* a process outside the session keeps its number */
	snprintf(out, sizeof(out), "/proc/1/environ");
	rules_proc_self(out, sizeof(out), child, NULL, NULL);
	ck_assert_str_eq(out, "/proc/1/environ");
	snprintf(out, sizeof(out), "/proc/%d", (int)child);
	rules_proc_self(out, sizeof(out), child, NULL, NULL);
	ck_assert_str_eq(out, "/proc/self");
	/* /proc/mounts is an ordinary link to self/mounts */
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, "/proc/mounts", 0, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "/proc/%d/mounts", (int)child);
	ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(long_paths)
{
	char name[PATH_MAX + 64], out[PATH_MAX];
	size_t n;

	/* an absolute name of 4095 bytes whose tail does not exist */
	n = (size_t)snprintf(name, sizeof(name), "%s/d/", T);
	for (; n < PATH_MAX - 1; n++)
		name[n] = (n % 50 == 0) ? '/' : 'a';
	name[PATH_MAX - 1] = '\0';
	if (name[PATH_MAX - 2] == '/')
		name[PATH_MAX - 2] = 'b';
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, name, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, name);
	/* relative to a cwd, the result outgrows PATH_MAX */
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, name + 1, 0, out, sizeof(out)),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(non_utf8)
{
	expect(AT_FDCWD, at("/n\xff\xfe/file"), 0, "/n\xff\xfe/file");
	expect(AT_FDCWD, "../../n\xff\xfe/./new\x80", 0, "/n\xff\xfe/new\x80");
}
END_TEST

START_TEST(loops_and_errors)
{
	char out[PATH_MAX];

	ck_assert_int_eq(path_resolve(child, AT_FDCWD, at("/loop1"), 0, out, sizeof(out)), -ELOOP);
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, at("/loop1/x"), PATH_NOFOLLOW, out,
				      sizeof(out)), -ELOOP);
	/* not followed: the loop is never entered */
	expect(AT_FDCWD, at("/loop1"), PATH_NOFOLLOW, "/loop1");
	ck_assert_int_eq(path_resolve(child, AT_FDCWD, "", 0, out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(path_resolve(999999999, AT_FDCWD, "x", 0, out, sizeof(out)), -ESRCH);
}
END_TEST

START_TEST(symlink_target_base)
{
	char out[PATH_MAX];

	/* a symlink's target is resolved from the link's directory */
	ck_assert_int_eq(path_resolve_from(child, at("/d/sub"), "../f", 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, at("/d/f"));
	ck_assert_int_eq(path_resolve_from(child, at("/d"), "/etc/../etc", 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/etc");
	/* the decoder resolves in place: input and output are one buffer */
	snprintf(out, sizeof(out), "/etc/../etc");
	ck_assert_int_eq(path_resolve_from(child, at("/d"), out, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/etc");
	snprintf(out, sizeof(out), "../f");
	ck_assert_int_eq(path_resolve_from(child, at("/d/sub"), out, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, at("/d/f"));
	snprintf(out, sizeof(out), "%s", at("/ln-d/f"));
	ck_assert_int_eq(path_resolve(child, child_dfd, out, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, at("/d/f"));
}
END_TEST

/* NAME resolved by the openat2(2) shortcuts and by the walk, the
 * reference, followed and not followed: the same answers. */
static void expect_agree(const char *name)
{
	static const int flags[] = {0, PATH_NOFOLLOW};
	char fast[PATH_MAX], walk[PATH_MAX];

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		int rf, rw;

		path_force_walk(false);
		rf = path_resolve(child, AT_FDCWD, name, flags[f], fast, sizeof(fast));
		path_force_walk(true);
		rw = path_resolve(child, AT_FDCWD, name, flags[f], walk, sizeof(walk));
		path_force_walk(false);
		ck_assert_msg(rf == rw, "%s (flags %d): fast rc %d, walk rc %d", name, flags[f], rf,
			      rw);
		if (rw == 0)
			ck_assert_msg(strcmp(fast, walk) == 0, "%s (flags %d): fast %s, walk %s", name,
				      flags[f], fast, walk);
	}
}

/* Names that take every branch of the shortcuts: present, missing at the
 * end or on the way (then ".."), through directory and final symlinks, a
 * dangling one, a file used as a directory. */
START_TEST(fast_agrees_with_walk)
{
	static const char *const names[] = {
		"/d/sub/x", "/d/sub", "/d/f", "/d/new", "/d/newdir/x", "/d/newdir/../f",
		"/d/newdir/../../d/sub", "/nope/a/b", "/d/sub/../../ln-sub/../f",
		"/ln-d/sub/x", "/ln-d/new", "/ln-d/newdir/x", "/ln-sub/../f", "/abs-d/sub/new",
		"/d/sub/../../dangling", "/dangling", "/d/./sub/./x/", "/d/sub/new/",
		"/d/f/x", "/d/f/../sub", "/d/f/../../ln-d/x", "/d//sub///new", "/loop1/x/y",
		"/d/sub/.", "/d/sub/..", "/n\xff\xfe/file", "/n\xff\xfe/new/x",
	};
	/* relative to the child's cwd, T/d/sub */
	static const char *const rel[] = {
		"../f", "../new", "../../d/sub/x", "x/y/z", "../../ln-d/sub", "./../newdir/../f",
	};
	/* Top-level names, only looked at: on a merged-/usr system /bin and
	 * /lib are symlinks, which path.c learns in the first round and
	 * follows at once in the second. */
	static const char *const top[] = {
		"/bin/sh", "/bin/no-such-x", "/bin/no-such-dir/x", "/lib/no-such/../x",
		"/usr/bin/sh", "/bin", "/bin/", "/etc/no-such-dir/x/y",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		expect_agree(at(names[i]));
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
		expect_agree(rel[i]);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
			expect_agree(top[i]);
}
END_TEST

static Suite *path_suite(void)
{
	Suite *s = suite_create("path");
	TCase *tc = tcase_create("resolve");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, cwd_relative);
	tcase_add_test(tc, dirfd_relative);
	tcase_add_test(tc, dotdot);
	tcase_add_test(tc, symlinked_parent);
	tcase_add_test(tc, dangling_final_symlink);
	tcase_add_test(tc, not_existing);
	tcase_add_test(tc, proc_self_fd);
	tcase_add_test(tc, proc_self_cwd);
	tcase_add_test(tc, proc_reported_as_self);
	tcase_add_test(tc, long_paths);
	tcase_add_test(tc, non_utf8);
	tcase_add_test(tc, loops_and_errors);
	tcase_add_test(tc, symlink_target_base);
	tcase_add_test(tc, fast_agrees_with_walk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(path_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
