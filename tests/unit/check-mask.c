/* The plan of the command's masks (tracer/confine/mask-plan.c): which
 * existing objects the compiled policy denies as a whole, what its
 * exceptions keep unmasked, the pins, the order; mask_covers(); whether
 * the read deny rules' objects were all looked for, and whether an
 * object of a read alert rule exists. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rules/load.h"
#include "tracer/confine/linked.h"
#include "tracer/confine/mask.h"

static char dir[PATH_MAX], home[PATH_MAX + 16], root[PATH_MAX + 16];
static struct rules_policy *policy; /* the entries' rule names point into it */
static struct linked linked;        /* the last plan's denied files with other names */
static bool walker;                 /* the denied trees walked by a process of their own */
static bool unfinished;             /* the walker left running */

static void make(const char *base, const char *rel, bool is_dir)
{
	char p[2 * PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (is_dir)
		ck_assert_int_eq(mkdir(p, 0755), 0);
	else
		ck_assert_int_ge(close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), 0);
}

static void setup(void)
{
	static const char *const home_dirs[] = { ".ssh", ".aws", ".gnupg", ".gnupg/sub", NULL };
	static const char *const home_files[] = { ".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/config",
						  ".aws/credentials", ".aws/config",
						  ".gnupg/a", ".gnupg/sub/b", NULL };
	static const char *const root_dirs[] = { ".git", ".git/hooks", ".git/objects", ".github",
						 ".github/workflows", ".claude", ".claude/commands",
						 "src", "node_modules", "node_modules/x",
						 "node_modules/x/.github", NULL };
	static const char *const root_files[] = { ".git/config", ".git/hooks/pre-commit.sample",
						  ".github/workflows/ci.yml", ".claude/settings.json",
						  ".claude/notes.md", "src/a.c", "README", NULL };

	snprintf(dir, sizeof(dir), "%s/check-mask.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(root, sizeof(root), "%s/proj", dir);
	ck_assert_int_eq(mkdir(home, 0700), 0);
	ck_assert_int_eq(mkdir(root, 0700), 0);
	for (size_t i = 0; home_dirs[i]; i++)
		make(home, home_dirs[i], true);
	for (size_t i = 0; home_files[i]; i++)
		make(home, home_files[i], false);
	for (size_t i = 0; root_dirs[i]; i++)
		make(root, root_dirs[i], true);
	for (size_t i = 0; root_files[i]; i++)
		make(root, root_files[i], false);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];

	free(policy);
	policy = NULL;
	linked_free(&linked);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The plan under policy NAME and EXTRAS (N of them). */
static struct mask *plan_of(const char *name, const struct rules_extra *extras, size_t n)
{
	const char *names[] = { name };
	struct rules_vars vars = { .root = root, .home = home, .tmpdir = dir, .cwd = root };
	struct rules_error err = { 0 };
	struct mask *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->status_fd[0] = m->status_fd[1] = m->view_fd = -1;
	free(policy);
	policy = NULL;
	ck_assert_msg(rules_load(names, 1, extras, n, &vars, &policy, &err) == 0, "%s", err.text);
	linked_free(&linked);
	mask_plan(m, policy, root, &linked);
	if (walker || unfinished)
		linked_start(&linked);
	if (!unfinished)
		linked_finish(&linked);
	return m;
}

static struct mask *plan(const struct rules_extra *extras, size_t n)
{
	return plan_of("default", extras, n);
}

/* The plan under a layer of TEXT (JSON). */
static struct mask *plan_layer(const char *text)
{
	char file[PATH_MAX + 32];
	FILE *f;

	snprintf(file, sizeof(file), "%s/layer.json", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return plan_of(file, NULL, 0);
}

/* The kind of the entry for BASE/REL, -1 when there is none. */
static int kind_of(const struct mask *m, const char *base, const char *rel)
{
	char p[2 * PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s%s%s", base, *rel ? "/" : "", rel);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].path, p) == 0)
			return (int)m->v[i].kind;
	return -1;
}

START_TEST(default_policy)
{
	struct mask *m = plan(NULL, 0);

	/* Credentials: a denied file, a directory denied as a whole. */
	ck_assert_int_eq(kind_of(m, home, ".ssh/id_rsa"), MASK_EMPTY_FILE);
	ck_assert_int_eq(kind_of(m, home, ".ssh/id_rsa.pub"), -1);
	ck_assert_int_eq(kind_of(m, home, ".ssh/config"), -1);
	ck_assert_int_eq(kind_of(m, home, ".ssh"), -1);
	ck_assert_int_eq(kind_of(m, home, ".aws"), MASK_EMPTY_DIR);
	ck_assert_int_eq(kind_of(m, home, ".aws/credentials"), -1); /* beneath the empty one */
	ck_assert_int_eq(kind_of(m, home, ".gnupg"), MASK_EMPTY_DIR);
	/* The project: protected trees and files read-only, their way pinned;
	 * the *.sample exception does not keep .git/hooks writable. */
	ck_assert_int_eq(kind_of(m, root, ".git/hooks"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".git/hooks/pre-commit.sample"), -1);
	ck_assert_int_eq(kind_of(m, root, ".git/config"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".git"), MASK_PIN);
	ck_assert_int_eq(kind_of(m, root, ".git/objects"), -1);
	ck_assert_int_eq(kind_of(m, root, ".github/workflows"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".github"), MASK_PIN);
	ck_assert_int_eq(kind_of(m, root, ".claude/settings.json"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".claude/commands"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".claude"), MASK_PIN);
	ck_assert_int_eq(kind_of(m, root, ".claude/notes.md"), -1);
	ck_assert_int_eq(kind_of(m, root, ""), -1);
	ck_assert_int_eq(kind_of(m, root, "src"), -1);
	ck_assert_int_eq(kind_of(m, root, "node_modules/x/.github"), -1);
	ck_assert_uint_ge(m->n_read, 3); /* and /etc/shadow, where it exists */
	ck_assert_uint_eq(m->n_write, 5);
	/* Parents first: the order the child mounts in. */
	for (size_t i = 1; i < m->n; i++)
		ck_assert_int_lt(strcmp(m->v[i - 1].path, m->v[i].path), 0);
	for (size_t i = 0; i < m->n; i++)
		ck_assert_msg(strncmp(m->v[i].path, "/proc", 5) && strncmp(m->v[i].path, "/dev", 4),
			      "%s", m->v[i].path);
	mask_free(m);
}
END_TEST

/* The denied files with another link, by device and inode: a denied
 * file, one in a tree denied as a whole, a write-denied file outside the
 * project; not a file with one name, nor one no rule denies.  The trees
 * walked in line (_i 0), by a walker process (_i 1), and by one that
 * fails after its first file, the rest then walked in line (_i 2). */
START_TEST(linked_files)
{
	static const struct { const char *base, *rel, *other; bool noted; } cases[] = {
		{ home, ".ssh/id_rsa", "key-copy", true },
		{ home, ".aws/credentials", "aws-copy", true },
		{ home, ".bashrc", "rc-copy", true },
		{ root, ".git/hooks/pre-commit.sample", "hook-copy", true },
		{ home, ".ssh/id_rsa.pub", "pub-copy", true }, /* readable, but ~/.ssh is no place to write */
		{ root, "src/a.c", "a-copy", false },
	};
	char p[2 * PATH_MAX + 32], q[2 * PATH_MAX + 32];
	struct stat st;
	struct mask *m;

	walker = _i >= 1;
	if (_i == 2)
		setenv("AGENTTRACE_TEST_LINKED_WALKER_FAIL", "1", 1);
	make(home, ".bashrc", false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", cases[i].base, cases[i].rel);
		snprintf(q, sizeof(q), "%s/%s", root, cases[i].other);
		ck_assert_int_eq(link(p, q), 0);
	}
	m = plan(NULL, 0);
	walker = false;
	unsetenv("AGENTTRACE_TEST_LINKED_WALKER_FAIL");
	ck_assert_int_eq(linked.walker, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct linked_file *f;

		snprintf(p, sizeof(p), "%s/%s", cases[i].base, cases[i].rel);
		snprintf(q, sizeof(q), "%s/%s", root, cases[i].other);
		ck_assert_int_eq(lstat(p, &st), 0);
		f = linked_find(&linked, st.st_dev, st.st_ino);
		ck_assert_msg((f != NULL) == cases[i].noted, "%s", p);
		if (!f)
			continue;
		ck_assert_str_eq(f->path, p);
		ck_assert_ptr_eq(linked_other_name(&linked, q), f);
		ck_assert_ptr_null(linked_other_name(&linked, p)); /* its own name */
	}
	ck_assert_ptr_null(linked_other_name(&linked, "relative"));
	mask_free(m);
	/* A file with one name is no one's other name. */
	snprintf(q, sizeof(q), "%s/README", root);
	ck_assert_ptr_null(linked_other_name(&linked, q));
}
END_TEST

/* A session that ends before it needs the walk's findings leaves no
 * walker behind, not even as a zombie. */
START_TEST(linked_walker_reaped)
{
	struct mask *m;
	pid_t pid;

	unfinished = true;
	m = plan(NULL, 0);
	unfinished = false;
	ck_assert_uint_gt(linked.n_trees, 0);
	pid = linked.walker;
	ck_assert_int_gt(pid, 0);
	linked_free(&linked);
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	mask_free(m);
}
END_TEST

START_TEST(exceptions_stay_unmasked)
{
	char aws_config[PATH_MAX + 32];
	struct rules_extra x[] = {
		{ RULES_KIND_READ, RULES_ACTION_ALLOW, aws_config, NULL, NULL },
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "${ROOT}/.git/hooks/pre-commit", NULL, NULL },
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "${ROOT}/.claude/**", NULL, NULL },
	};
	struct mask *m;

	snprintf(aws_config, sizeof(aws_config), "%s/.aws/config", home);
	m = plan(x, sizeof(x) / sizeof(x[0]));
	/* ~/.aws holds an admitted file: only what is denied in it. */
	ck_assert_int_eq(kind_of(m, home, ".aws"), -1);
	ck_assert_int_eq(kind_of(m, home, ".aws/credentials"), MASK_EMPTY_FILE);
	ck_assert_int_eq(kind_of(m, home, ".aws/config"), -1);
	/* A hook admitted by name: .git/hooks stays the supervisor's. */
	ck_assert_int_eq(kind_of(m, root, ".git/hooks"), -1);
	ck_assert_int_eq(kind_of(m, root, ".git/config"), MASK_READONLY);
	ck_assert_int_eq(kind_of(m, root, ".git"), MASK_PIN);
	/* Everything of .claude admitted: nothing of it masked or pinned. */
	ck_assert_int_eq(kind_of(m, root, ".claude/settings.json"), -1);
	ck_assert_int_eq(kind_of(m, root, ".claude/commands"), -1);
	ck_assert_int_eq(kind_of(m, root, ".claude"), -1);
	mask_free(m);
}
END_TEST

START_TEST(everything_admitted)
{
	struct rules_extra x[] = {
		{ RULES_KIND_WRITE, RULES_ACTION_ALLOW, "${ROOT}/**", NULL, NULL },
		{ RULES_KIND_READ, RULES_ACTION_ALLOW, "${HOME}/**", NULL, NULL },
	};
	struct mask *m = plan(x, sizeof(x) / sizeof(x[0]));

	for (size_t i = 0; i < m->n; i++)
		ck_assert_msg(strncmp(m->v[i].path, dir, strlen(dir)) != 0, "masked: %s",
			      m->v[i].path);
	mask_free(m);
}
END_TEST

START_TEST(symlink_to_admitted)
{
	char link[PATH_MAX + 32], target[PATH_MAX + 32];
	struct mask *m;

	/* The supervisor judges a symlink's target, and a link in ~/.aws
	 * gives the rule a twin where it leads (rules/linkscan.h): the
	 * file there is a credential too, masked by its own name, and
	 * ~/.aws is emptied whole.  A link the rule does not match (an
	 * exception's name) leaves the tree as it was: its target admitted,
	 * it would read as ENOENT under an empty ~/.aws. */
	snprintf(target, sizeof(target), "%s/README", root);
	snprintf(link, sizeof(link), "%s/.aws/shared", home);
	ck_assert_int_eq(symlink(target, link), 0);
	m = plan(NULL, 0);
	ck_assert_int_eq(kind_of(m, home, ".aws"), MASK_EMPTY_DIR);
	ck_assert_int_eq(kind_of(m, root, "README"), MASK_EMPTY_FILE);
	mask_free(m);
	m = plan_layer("{\"agenttrace\": 1, \"read\": {\"deny\": "
		       "[{\"path\": \"${HOME}/.aws/**\", \"unless\": [\"${HOME}/.aws/shared\"]}]}}");
	ck_assert_int_eq(kind_of(m, home, ".aws"), -1);
	ck_assert_int_eq(kind_of(m, home, ".aws/credentials"), MASK_EMPTY_FILE);
	ck_assert_int_eq(kind_of(m, home, ".aws/shared"), -1);
	ck_assert_int_eq(kind_of(m, root, "README"), -1);
	mask_free(m);
}
END_TEST

/* A credential that is a FIFO (fed by a process outside the session)
 * gets an empty file over it, and one kept in /dev/shm (a file system
 * of files, unlike the rest of /dev) is masked where it is. */
START_TEST(fifo_and_shm)
{
	char fifo[PATH_MAX + 32], shm[64], layer[256];
	struct mask *m;
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/.netrc", home);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(shm, sizeof(shm), "/dev/shm/agenttrace-check-mask-%d", (int)getpid());
	fd = open(shm, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(layer, sizeof(layer),
		 "{\"agenttrace\": 1, \"extends\": \"default\", \"read\": {\"deny\": [\"%s\"]}}", shm);
	m = plan_layer(layer);
	ck_assert_int_eq(kind_of(m, home, ".netrc"), MASK_EMPTY_FILE);
	if (fd >= 0)
		ck_assert_int_eq(kind_of(m, shm, ""), MASK_EMPTY_FILE);
	mask_free(m);
	unlink(shm);
}
END_TEST

/* A credential tree with more entries than the plan lists (kubectl's
 * cache) is masked whole when no exception could admit a name in it,
 * not by files until the plan's bounds; ~/.ssh, which has one (its
 * id_*.pub), still has its files masked one by one. */
START_TEST(big_tree_masked_whole)
{
	char p[PATH_MAX + 64];
	struct mask *m;

	make(home, ".kube", true);
	make(home, ".kube/cache", true);
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), ".kube/cache/c%d", i);
		make(home, p, false);
	}
	m = plan(NULL, 0);
	ck_assert_int_eq(kind_of(m, home, ".kube"), MASK_EMPTY_DIR);
	ck_assert_int_eq(kind_of(m, home, ".ssh/id_rsa"), MASK_EMPTY_FILE);
	ck_assert_int_eq(kind_of(m, home, ".ssh"), -1);
	ck_assert(!m->truncated);
	mask_free(m);
}
END_TEST

START_TEST(read_deny_exactness)
{
	struct rules_extra mid[] = { { RULES_KIND_READ, RULES_ACTION_DENY, "${HOME}/**/token", NULL, NULL } };
	struct rules_extra proc[] = { { RULES_KIND_READ, RULES_ACTION_DENY, "/proc/[0-9]*/cmdline", NULL, NULL } };
	struct mask *m = plan(NULL, 0);

	/* The default's /proc environ and mem are Landlock's to refuse. */
	ck_assert(!m->read_inexact);
	mask_free(m);
	m = plan(mid, 1);
	ck_assert(m->read_inexact); /* "**" before more: only zero levels looked at */
	mask_free(m);
	m = plan(proc, 1);
	ck_assert(m->read_inexact); /* world-readable, no ptrace check */
	mask_free(m);
	m = plan_layer("{\"agenttrace\": 1, \"read\": {\"deny\": "
		       "[{\"path\": \"${HOME}/.config/x/*\", \"under\": [\"/usr/bin/npm\"]}]}}");
	ck_assert(m->read_inexact); /* planned without a lineage: not masked */
	mask_free(m);
}
END_TEST

START_TEST(read_alert_objects)
{
	char p[2 * PATH_MAX + 32];
	struct mask *m = plan(NULL, 0);

	ck_assert(!mask_plan_read_alerts_exist(policy));
	/* What the rule's exceptions admit is no alert's object, and a tree
	 * they admit whole is not looked into. */
	make(root, "node_modules/x/.env", false);
	make(root, ".env.example", false);
	for (int i = 0; i < 4200; i++) {
		snprintf(p, sizeof(p), "node_modules/x/f%d", i);
		make(root, p, false);
	}
	ck_assert(!mask_plan_read_alerts_exist(policy));
	/* At any depth. */
	make(root, "src/deep", true);
	make(root, "src/deep/er", true);
	make(root, "src/deep/er/.env.local", false);
	ck_assert(mask_plan_read_alerts_exist(policy));
	snprintf(p, sizeof(p), "%s/src/deep/er/.env.local", root);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert(!mask_plan_read_alerts_exist(policy));
	/* Past the bound of the look: it cannot tell, so one may exist. */
	for (int i = 0; i < 4200; i++) {
		snprintf(p, sizeof(p), "src/f%d", i);
		make(root, p, false);
	}
	ck_assert(mask_plan_read_alerts_exist(policy));
	mask_free(m);
}
END_TEST

START_TEST(covers)
{
	struct mask *m = plan(NULL, 0);
	char p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/.git/config", root);
	ck_assert(!mask_covers(m, p)); /* nothing in force yet */
	m->ns = MASK_NS_MOUNT;
	m->applied = (unsigned)m->n;
	ck_assert(mask_covers(m, p));
	snprintf(p, sizeof(p), "%s/.git", root);
	ck_assert(mask_covers(m, p));
	snprintf(p, sizeof(p), "%s/.git/index", root);
	ck_assert(!mask_covers(m, p));
	snprintf(p, sizeof(p), "%s/.aws/credentials", home);
	ck_assert(mask_covers(m, p));
	snprintf(p, sizeof(p), "%s/.ssh/id_rsa.pub", home);
	ck_assert(!mask_covers(m, p));
	mask_free(m);
}
END_TEST

static Suite *mask_suite(void)
{
	Suite *su = suite_create("mask");
	TCase *tc = tcase_create("plan");

	/* Thousands of files made and removed per run: on ext4, which
	 * scans the inodes freed a moment before for every new one, a run
	 * just after another takes seconds. */
	tcase_set_timeout(tc, 60);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, default_policy);
	tcase_add_loop_test(tc, linked_files, 0, 3);
	tcase_add_test(tc, linked_walker_reaped);
	tcase_add_test(tc, exceptions_stay_unmasked);
	tcase_add_test(tc, everything_admitted);
	tcase_add_test(tc, symlink_to_admitted);
	tcase_add_test(tc, covers);
	tcase_add_test(tc, read_deny_exactness);
	tcase_add_test(tc, fifo_and_shm);
	tcase_add_test(tc, big_tree_masked_whole);
	tcase_add_test(tc, read_alert_objects);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	SRunner *sr = srunner_create(mask_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
