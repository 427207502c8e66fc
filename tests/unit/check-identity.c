/* Unit tests of rules/identity.c: which argument of a command line is the
 * program the dynamic loader runs, and the script an interpreter runs
 * (agenttrace-policy(5), "Exec identity"). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ARGV_MAX 8

static size_t argc_of(const char *const *argv)
{
	size_t n = 0;

	while (n < ARGV_MAX && argv[n])
		n++;
	return n;
}

struct name_case {
	const char *base;
	bool loader;
};

static const struct name_case name_cases[] = {
	{ "ld-linux-x86-64.so.2", true },
	{ "ld-linux.so.2", true },
	{ "ld-linux-aarch64.so.1", true },
	{ "ld-musl-x86_64.so.1", true },
	{ "ld-2.31.so", true },
	{ "ld.so", true },
	{ "ld", false },
	{ "ld.bfd", false },
	{ "ld.gold", false },
	{ "ldd", false },
	{ "ld-linux", false },
	{ "", false },
};

START_TEST(test_loader_name)
{
	const struct name_case *c = &name_cases[_i];

	ck_assert_msg(rules_loader_name(c->base) == c->loader, "%s", c->base);
}
END_TEST

struct loader_case {
	const char *argv[ARGV_MAX];
	size_t prog;
};

static const struct loader_case loader_cases[] = {
	{ { "ld.so", "/tmp/evil", "-x" }, 1 },
	{ { "ld.so", "--library-path", "/tmp", "/tmp/evil" }, 3 },
	{ { "ld.so", "--preload", "/tmp/x.so", "--argv0", "ls", "./evil", "a" }, 5 },
	{ { "ld.so", "--audit", "a", "--inhibit-rpath", "b", "--inhibit-cache", "p" }, 6 },
	{ { "ld.so", "--glibc-hwcaps-prepend", "x", "--glibc-hwcaps-mask", "y", "p" }, 5 },
	{ { "ld.so", "--verify", "/bin/ls" }, 2 },
	{ { "ld.so", "--list", "/bin/ls" }, 2 },
	{ { "ld.so", "--", "/tmp/evil" }, 2 },
	{ { "ld.so", "-x" }, 1 }, /* glibc: a word not starting "--" is the program */
	{ { "ld.so", "--help", "/tmp/evil" }, 0 },
	{ { "ld.so", "--version" }, 0 },
	{ { "ld.so", "--list-tunables" }, 0 },
	{ { "ld.so", "--library-path" }, 0 },
	{ { "ld.so", "--" }, 0 },
	{ { "ld.so" }, 0 },
	{ { NULL }, 0 },
};

START_TEST(test_loader_prog)
{
	const struct loader_case *c = &loader_cases[_i];

	ck_assert_uint_eq(rules_loader_prog(c->argv, argc_of(c->argv)), c->prog);
}
END_TEST

struct interp_case {
	const char *exe;
	const char *argv[ARGV_MAX];
	size_t script;
	size_t text;     /* the inline code's argument, 0 none */
	size_t text_off; /* and where in it the code starts */
	size_t script_off; /* where in its argument the script's name starts */
};

static const struct interp_case interp_cases[] = {
	/* shells */
	{ "/bin/sh", { "sh", "x.sh", "a" }, 1, 0, 0, 0 },
	{ "/bin/bash", { "bash", "-e", "-x", "/tmp/x.sh" }, 3, 0, 0, 0 },
	{ "/bin/bash", { "bash", "-o", "pipefail", "x.sh" }, 3, 0, 0, 0 },
	{ "/bin/bash", { "bash", "-eo", "pipefail", "x.sh" }, 3, 0, 0, 0 },
	{ "/bin/bash", { "bash", "+o", "posix", "+e", "x.sh" }, 4, 0, 0, 0 },
	{ "/bin/bash", { "bash", "--norc", "--rcfile", "rc", "x.sh" }, 4, 0, 0, 0 },
	{ "/bin/bash", { "bash", "--", "-x.sh" }, 2, 0, 0, 0 },
	{ "/bin/bash", { "bash", "-", "x.sh" }, 2, 0, 0, 0 },
	{ "/bin/dash", { "dash", "-c", "echo hi", "x.sh" }, 0, 2, 0, 0 },
	{ "/bin/dash", { "dash", "-ec", "echo hi" }, 0, 2, 0, 0 },
	{ "/bin/bash", { "bash", "-c", "-x", "echo hi" }, 0, 3, 0, 0 },
	{ "/bin/sh", { "sh", "-s", "x.sh" }, 0, 0, 0, 0 },
	{ "/bin/sh", { "sh" }, 0, 0, 0, 0 },
	{ "/bin/zsh", { "zsh", "-f", "x.zsh" }, 2, 0, 0, 0 },
	{ "/bin/zsh", { "zsh", "--emulate", "sh", "x.sh" }, 3, 0, 0, 0 },
	/* busybox: the applet is argv[0]'s name, or argv[1] */
	{ "/bin/busybox", { "sh", "x.sh" }, 1, 0, 0, 0 },
	{ "/bin/busybox", { "busybox", "sh", "x.sh" }, 2, 0, 0, 0 },
	{ "/bin/busybox", { "busybox", "ls", "x.sh" }, 0, 0, 0, 0 },
	{ "/bin/busybox", { "ls", "x.sh" }, 0, 0, 0, 0 },
	/* python */
	{ "/usr/bin/python3.11", { "python3", "/tmp/x.py" }, 1, 0, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-u", "-W", "ignore", "-X", "dev", "x.py" }, 6, 0, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-Wignore", "-B", "x.py" }, 3, 0, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-c", "print(1)", "x.py" }, 0, 2, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-Bc", "print(1)" }, 0, 2, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-cprint(1)" }, 0, 1, 2, 0 },
	{ "/usr/bin/python3", { "python3", "-m", "pip", "install" }, 0, 0, 0, 0 },
	{ "/usr/bin/python3", { "python3", "-", "x.py" }, 0, 0, 0, 0 },
	{ "/usr/bin/python3", { "python3", "--", "x.py" }, 2, 0, 0, 0 },
	{ "/usr/bin/pypy3", { "pypy3", "x.py" }, 1, 0, 0, 0 },
	{ "/usr/bin/python3-config", { "python3-config", "x" }, 0, 0, 0, 0 },
	/* node */
	{ "/usr/bin/node", { "node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "install" }, 1, 0,
	  0, 0 },
	{ "/usr/bin/node", { "node", "--max-old-space-size=99", "-r", "ts-node/register", "x.ts" },
	  4, 0, 0, 0 },
	{ "/usr/bin/node", { "node", "-e", "1", "x.js" }, 0, 2, 0, 0 },
	{ "/usr/bin/node", { "node", "--eval=1+1" }, 0, 1, 7, 0 },
	{ "/usr/bin/node", { "node", "-i" }, 0, 0, 0, 0 },
	/* perl, ruby, php */
	{ "/usr/bin/perl", { "perl", "-w", "-Ilib", "x.pl" }, 3, 0, 0, 0 },
	{ "/usr/bin/perl", { "perl", "-I", "lib", "x.pl" }, 3, 0, 0, 0 },
	{ "/usr/bin/perl", { "perl", "-lne", "print", "f" }, 0, 2, 0, 0 },
	{ "/usr/bin/perl", { "perl", "-eprint" }, 0, 1, 2, 0 },
	{ "/usr/bin/ruby3.1", { "ruby", "-r", "json", "x.rb" }, 3, 0, 0, 0 },
	{ "/usr/bin/ruby", { "ruby", "-e", "p 1" }, 0, 2, 0, 0 },
	/* ruby's -v runs the script too; -E and --encoding are encodings */
	{ "/usr/bin/ruby", { "ruby", "-v", "x.rb" }, 2, 0, 0, 0 },
	{ "/usr/bin/ruby", { "ruby", "-Eutf-8", "x.rb" }, 2, 0, 0, 0 },
	{ "/usr/bin/ruby", { "ruby", "--encoding", "utf-8", "x.rb" }, 3, 0, 0, 0 },
	{ "/usr/bin/perl", { "perl", "-v", "x.pl" }, 0, 0, 0, 0 },
	{ "/usr/bin/perl", { "perl", "-0777", "-n", "x.pl" }, 3, 0, 0, 0 },
	{ "/usr/bin/php8.2", { "php", "-d", "x=1", "x.php", "--", "a" }, 3, 0, 0, 0 },
	{ "/usr/bin/php", { "php", "-f", "x.php" }, 2, 0, 0, 0 },
	{ "/usr/bin/php", { "php", "-f/tmp/x.php", "a" }, 1, 0, 0, 2 },
	{ "/usr/bin/php", { "php", "-r", "echo 1;" }, 0, 2, 0, 0 },
	{ "/usr/bin/php", { "php", "-S", "localhost:8000" }, 0, 0, 0, 0 },
	/* not interpreters */
	{ "/usr/bin/env", { "env", "python3", "x.py" }, 0, 0, 0, 0 },
	{ "/usr/bin/gcc", { "gcc", "x.c" }, 0, 0, 0, 0 },
	{ NULL, { "sh", "x.sh" }, 0, 0, 0, 0 },
};

START_TEST(test_interp_script)
{
	const struct interp_case *c = &interp_cases[_i];
	size_t text = 99, off = 99, soff = 99;
	size_t got = rules_interp_script(c->exe, c->argv, argc_of(c->argv), &soff, &text, &off);

	ck_assert_msg(got == c->script && text == c->text && off == c->text_off &&
			      soff == c->script_off,
		      "case %d (%s %s): script %zu+%zu text %zu+%zu, want %zu+%zu %zu+%zu", _i,
		      c->exe ? c->exe : "(null)", c->argv[1] ? c->argv[1] : "", got, soff, text,
		      off, c->script, c->script_off, c->text, c->text_off);
	/* The outputs are optional. */
	ck_assert_uint_eq(rules_interp_script(c->exe, c->argv, argc_of(c->argv), NULL, NULL, NULL),
			  c->script);
}
END_TEST

/* How an interpreter finds its script: the search, and the directories
 * it changes to first (their arguments and offsets). */
struct lookup_case {
	const char *exe;
	const char *argv[8];
	int how;
	int by;
	size_t n_dirs;
	size_t dir_arg[2], dir_off[2];
};

#define SH RULES_LOOKUP_BY_SHELL
#define PL RULES_LOOKUP_BY_PERL
#define RB RULES_LOOKUP_BY_RUBY
#define IF_ABSENT RULES_LOOKUP_PATH_IF_ABSENT
#define SEARCH RULES_LOOKUP_PATH
#define NAME RULES_LOOKUP_NAME

static const struct lookup_case lookup_cases[] = {
	/* a shell searches when the name names no file: bash in POSIX mode
	 * too, zsh with PATH_SCRIPT; one that does not runs nothing then */
	{ "/usr/bin/bash", { "bash", "x.sh" }, IF_ABSENT, SH, 0, { 0 }, { 0 } },
	{ "/usr/bin/bash", { "sh", "x.sh" }, IF_ABSENT, SH, 0, { 0 }, { 0 } },
	{ "/usr/bin/bash", { "bash", "--posix", "x.sh" }, IF_ABSENT, SH, 0, { 0 }, { 0 } },
	{ "/usr/bin/zsh", { "zsh", "-o", "pathscript", "x.sh" }, IF_ABSENT, SH, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-S", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-wS", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	/* -0 and -l take digits and the cluster goes on */
	{ "/usr/bin/perl", { "perl", "-0S", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-0777S", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-l0S", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-WS", "x.pl" }, SEARCH, PL, 0, { 0 }, { 0 } },
	/* a value holds the S: -I, -C */
	{ "/usr/bin/perl", { "perl", "-ISx", "x.pl" }, NAME, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "-CS", "x.pl" }, NAME, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/perl", { "perl", "x.pl" }, NAME, PL, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-S", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-Eutf-8", "-S", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "--encoding", "utf-8", "-S", "x.rb" }, SEARCH, RB, 0, { 0 },
	  { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-0S", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-KuS", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-KS", "x.rb" }, NAME, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-v", "-S", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-dS", "x.rb" }, SEARCH, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-C", "/d", "-S", "x.rb" }, SEARCH, RB, 1, { 2 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-C", "/d", "x.rb" }, NAME, RB, 1, { 2 }, { 0 } },
	{ "/usr/bin/ruby", { "ruby", "-C/d", "x.rb" }, NAME, RB, 1, { 1 }, { 2 } },
	{ "/usr/bin/ruby", { "ruby", "-x/d", "-C", "e", "x.rb" }, NAME, RB, 2, { 1, 3 }, { 2, 0 } },
	{ "/usr/bin/ruby", { "ruby", "-x", "x.rb" }, NAME, RB, 0, { 0 }, { 0 } },
	{ "/usr/bin/python3", { "python3", "x.py" }, NAME, SH, 0, { 0 }, { 0 } },
};

START_TEST(test_interp_lookup)
{
	const struct lookup_case *c = &lookup_cases[_i];
	size_t argc = argc_of(c->argv);
	size_t s = rules_interp_script(c->exe, c->argv, argc, NULL, NULL, NULL);
	struct rules_lookup lk;

	ck_assert_msg(s > 0, "case %d: no script", _i);
	rules_interp_lookup(c->exe, c->argv, argc, s, &lk);
	ck_assert_msg((int)lk.how == c->how && (c->how == NAME || (int)lk.by == c->by) &&
			      lk.n_dirs == c->n_dirs,
		      "case %d (%s %s): how %d by %d dirs %zu", _i, c->argv[0], c->argv[1],
		      (int)lk.how, (int)lk.by, lk.n_dirs);
	for (size_t k = 0; k < c->n_dirs; k++)
		ck_assert_msg(lk.dir_arg[k] == c->dir_arg[k] && lk.dir_off[k] == c->dir_off[k],
			      "case %d: dir %zu at %zu+%zu", _i, k, lk.dir_arg[k], lk.dir_off[k]);
}
END_TEST

static Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_loader_name, 0, (int)N(name_cases));
	tcase_add_loop_test(tc, test_loader_prog, 0, (int)N(loader_cases));
	tcase_add_loop_test(tc, test_interp_script, 0, (int)N(interp_cases));
	tcase_add_loop_test(tc, test_interp_lookup, 0, (int)N(lookup_cases));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(identity_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
