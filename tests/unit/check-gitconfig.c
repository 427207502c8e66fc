/* Unit tests of rules/gitconfig.c: git configuration texts read as git
 * reads them, judged for the variables that make git run a program, and
 * refused when they cannot be read (agenttrace-policy(5), "Content").
 * The list in the code and the list in the manual are the same. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules/gitconfig.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct judge_case {
	const char *text;
	const char *old;      /* NULL: no old file */
	enum gitconfig_outcome outcome;
	const char *name;     /* RUNS: the variable named */
	unsigned line;        /* RUNS, UNREADABLE: 0 = not checked */
};

#define INIT "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n" \
	     "\tbare = false\n\tlogallrefupdates = true\n"

static const struct judge_case judge_cases[] = {
	/* what git itself writes */
	{ "", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ INIT, NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ INIT "[remote \"origin\"]\n\turl = /srv/bare.git\n"
	  "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	  "[branch \"master\"]\n\tremote = origin\n\tmerge = refs/heads/master\n",
	  INIT, GITCONFIG_CLEAN, NULL, 0 },
	{ INIT "[user]\n\temail = a@example.com\n\tname = A U Thor\n", INIT, GITCONFIG_CLEAN,
	  NULL, 0 },
	{ INIT "\tworktree = ../../../sm\n[submodule \"sm\"]\n\turl = ../sm.git\n\tactive = true\n",
	  NULL, GITCONFIG_CLEAN, NULL, 0 },
	/* each kind of listed variable */
	{ INIT "\tfsmonitor = touch pwned\n", INIT, GITCONFIG_RUNS, "core.fsmonitor", 6 },
	{ "[core]\n\tfsmonitor\n", NULL, GITCONFIG_RUNS, "core.fsmonitor", 2 },
	{ "[Core]\n\tFsMonitor = x\n", NULL, GITCONFIG_RUNS, "core.fsmonitor", 2 },
	{ "[CORE]HOOKSPATH=/x", NULL, GITCONFIG_RUNS, "core.hookspath", 1 },
	{ "[core] sshCommand = ssh -i k", NULL, GITCONFIG_RUNS, "core.sshcommand", 1 },
	{ "[core]\n\tpager = \"less # not a comment\"\n", NULL, GITCONFIG_RUNS, "core.pager", 2 },
	{ "[core]\n\teditor = \\\n  vim\n", NULL, GITCONFIG_RUNS, "core.editor", 2 },
	{ "[sequence]\n\teditor = sed -i x\n", NULL, GITCONFIG_RUNS, "sequence.editor", 2 },
	{ "[credential]\n\thelper = store\n", NULL, GITCONFIG_RUNS, "credential.helper", 2 },
	{ "[credential \"https://host\"]\n\thelper = store\n", NULL, GITCONFIG_RUNS,
	  "credential.https://host.helper", 2 },
	{ "[alias]\n\tst = status\n\tx = !sh -c id\n", NULL, GITCONFIG_RUNS, "alias.x", 3 },
	{ "[alias]\n\tx = \"  !sh\"\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias.sub]\n\tx = !sh\n", NULL, GITCONFIG_RUNS, "alias.sub.x", 2 },
	{ "[alias]\n\tlg = log --oneline --graph\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[tar \"tgz\"]\n\tcommand = touch pwned; gzip -cn\n", NULL, GITCONFIG_RUNS,
	  "tar.tgz.command", 2 },
	{ "[tar \"tar.xz\"]\n\tremote = true\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	/* git reads an alias's leading options as its own (git.c,
	 * handle_alias): "-c alias.y=!sh y" runs a shell command too, and
	 * a quote or a backslash may spell the dash */
	{ "[alias]\n\tx = -c alias.y=!sh y\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias]\n\tx = --exec-path=/x zz\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias]\n\tx = \"'-c' core.pager=sh log\"\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias]\n\tx = \"\\\"-c\\\" core.pager=sh log\"\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias]\n\tx = \\\\-c core.pager=sh log\n", NULL, GITCONFIG_RUNS, "alias.x", 2 },
	{ "[alias]\n\tco = checkout -b\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n", NULL, GITCONFIG_RUNS,
	  "filter.lfs.clean", 2 },
	{ "[filter \"x\"]\n\tsmudge = cat\n", NULL, GITCONFIG_RUNS, "filter.x.smudge", 2 },
	{ "[filter \"x\"]\n\tprocess = cat\n", NULL, GITCONFIG_RUNS, "filter.x.process", 2 },
	{ "[filter \"x\"]\n\trequired = true\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[diff \"pdf\"] textconv = pdftotext", NULL, GITCONFIG_RUNS, "diff.pdf.textconv", 1 },
	{ "[diff \"x\"]\n\tcommand = sh\n", NULL, GITCONFIG_RUNS, "diff.x.command", 2 },
	{ "[diff]\n\texternal = sh\n", NULL, GITCONFIG_RUNS, "diff.external", 2 },
	{ "[diff]\n\talgorithm = histogram\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[merge \"x\"]\n\tdriver = sh %A\n", NULL, GITCONFIG_RUNS, "merge.x.driver", 2 },
	{ "[gpg]\n\tprogram = sh\n", NULL, GITCONFIG_RUNS, "gpg.program", 2 },
	{ "[gpg \"ssh\"]\n\tprogram = sh\n", NULL, GITCONFIG_RUNS, "gpg.ssh.program", 2 },
	{ "[include]\n\tpath = ../evil\n", NULL, GITCONFIG_RUNS, "include.path", 2 },
	{ "[includeIf \"gitdir:/x/\"]\n\tpath = y\n", NULL, GITCONFIG_RUNS,
	  "includeif.gitdir:/x/.path", 2 },
	{ "[remote \"o\"]\n\tuploadpack = sh\n", NULL, GITCONFIG_RUNS, "remote.o.uploadpack", 2 },
	{ "[remote \"o\"]\n\treceivepack = sh\n", NULL, GITCONFIG_RUNS, "remote.o.receivepack",
	  2 },
	{ "[remote \"o\"]\n\turl = ext::sh -c id\n", NULL, GITCONFIG_RUNS, "remote.o.url", 2 },
	{ "[remote \"o\"]\n\turl = EXT::sh\n", NULL, GITCONFIG_RUNS, "remote.o.url", 2 },
	{ "[remote \"o\"]\n\turl = https://example.com/x.git\n", NULL, GITCONFIG_CLEAN, NULL,
	  0 },
	{ "[url \"ext::sh -c id \"]\n\tinsteadOf = https://\n", NULL, GITCONFIG_RUNS,
	  "url.ext::sh -c id .insteadof", 2 },
	{ "[url \"git@host:\"]\n\tinsteadOf = https://host/\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[url \"https://x/\"]\n\tinsteadOf = ext::sh\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[protocol \"ext\"]\n\tallow = always\n", NULL, GITCONFIG_RUNS, "protocol.ext.allow",
	  2 },
	{ "[submodule \"a\"]\n\tupdate = rebase\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[submodule \"a\"]\n\tupdate = !sh\n", NULL, GITCONFIG_RUNS, "submodule.a.update", 2 },
	{ "[pager]\n\tlog = false\n\tdiff\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[pager]\n\tlog = less -R\n", NULL, GITCONFIG_RUNS, "pager.log", 2 },
	{ "[core]\n\tgitProxy = sh\n", NULL, GITCONFIG_RUNS, "core.gitproxy", 2 },
	{ "[core]\n\taskPass = sh\n", NULL, GITCONFIG_RUNS, "core.askpass", 2 },
	{ "[interactive]\n\tdiffFilter = sh\n", NULL, GITCONFIG_RUNS, "interactive.difffilter",
	  2 },
	/* comments, quotes and continuations hide nothing */
	{ "[user]\n\temail = a@b ; core.pager = x\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "# [core] pager = x\n[user]\n\tname = x # pager = y\n", NULL, GITCONFIG_CLEAN, NULL,
	  0 },
	{ "[user]\n\tname = a \\\n\tpager = x\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[user]\n\tname = \"a\n[core]\n\tpager = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[user]\n\tname = a\n[core]\n\tpager = x\n", NULL, GITCONFIG_RUNS, "core.pager", 4 },
	{ "[user]\n\tname = \"a\\\"\" ; \"\n\tx = y\n", NULL, GITCONFIG_CLEAN, NULL, 0 },
	{ "[core]\r\n\tfsmonitor = x\r\n", NULL, GITCONFIG_RUNS, "core.fsmonitor", 2 },
	{ "\xef\xbb\xbf[core]\n\tpager = x\n", NULL, GITCONFIG_RUNS, "core.pager", 2 },
	{ "[remote \"a\\\"b\"]\n\treceivepack = sh\n", NULL, GITCONFIG_RUNS,
	  "remote.a\"b.receivepack", 2 },
	/* compared with the old content */
	{ INIT "\tpager = less\n[user]\n\tname = x\n", INIT "\tpager = less\n", GITCONFIG_CLEAN,
	  NULL, 0 },
	{ "[core]\n\tpager = more\n", "[core]\n\tpager = less\n", GITCONFIG_RUNS, "core.pager",
	  2 },
	{ "[core]\n\tpager = less\n", "[CORE]\n  PAGER = \"less\"\n", GITCONFIG_CLEAN, NULL, 0 },
	{ "[core]\n\tpager\n", "[core]\n\tpager = \n", GITCONFIG_RUNS, "core.pager", 2 },
	{ "[alias]\n\ta = !a\n\tb = !b\n", "[alias]\n\ta = !a\n", GITCONFIG_RUNS, "alias.b", 3 },
	{ "[credential \"https://h\"]\n\thelper = x\n", "[credential \"HTTPS://h\"]\n\thelper = x\n",
	  GITCONFIG_RUNS, "credential.https://h.helper", 2 },
	{ "[core]\n\tpager = less\n", "[core]\n\tpager = less\n\x01[", GITCONFIG_RUNS,
	  "core.pager", 2 },
	{ "[user]\n\tname = x\n", "[core]\n\tpager = less\n", GITCONFIG_CLEAN, NULL, 0 },
	/* what this reader cannot read as git does: refused */
	{ "[core\n\tpager = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[core \"x]\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[core x]\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[co_re]\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[]\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[ \"x\"]\n\tpager = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "pager = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[core]\n\t9pager = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\tpager x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\tpa\\\nger = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\tpager = \"less\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\tpager = a\\qb\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\tpager = a\\", NULL, GITCONFIG_UNREADABLE, NULL, 0 },
	{ "\xef\xbb[core]\n", NULL, GITCONFIG_UNREADABLE, NULL, 1 },
	{ "[core]\n\tpager\v= x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
	{ "[core]\n\xc3\xa9 = x\n", NULL, GITCONFIG_UNREADABLE, NULL, 2 },
};

START_TEST(test_judge)
{
	const struct judge_case *c = &judge_cases[_i];
	struct gitconfig_verdict v;

	gitconfig_judge(c->text, strlen(c->text), c->old, c->old ? strlen(c->old) : 0, &v);
	ck_assert_msg(v.outcome == c->outcome, "case %d: outcome %d, want %d (%s, line %u)", _i,
		      v.outcome, c->outcome, v.what ? v.what : "-", v.line);
	if (c->outcome == GITCONFIG_RUNS) {
		ck_assert_str_eq(v.name, c->name);
		ck_assert_ptr_nonnull(v.what);
	}
	if (c->outcome == GITCONFIG_UNREADABLE)
		ck_assert_ptr_nonnull(v.what);
	if (c->line)
		ck_assert_msg(v.line == c->line, "case %d: line %u, want %u", _i, v.line, c->line);
}
END_TEST

/* A NUL byte: git reads a value up to it and a name past it. */
START_TEST(test_nul)
{
	static const char text[] = "[user]\n\tname = x\0\n[core]\n\tpager = x\n";
	static const char sub[] = "[core \"a\0b\"]\n";
	struct gitconfig_verdict v;

	gitconfig_judge(text, sizeof(text) - 1, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_UNREADABLE);
	ck_assert_uint_eq(v.line, 2);
	gitconfig_judge(sub, sizeof(sub) - 1, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_UNREADABLE);
}
END_TEST

/* The bounds: a text, a name and a value longer than the check reads. */
START_TEST(test_bounds)
{
	struct gitconfig_verdict v;
	size_t n = GITCONFIG_MAX + 2;
	char *text = malloc(n);
	size_t k;

	ck_assert_ptr_nonnull(text);
	memset(text, '#', n);
	memcpy(text, "[core]\n", 7);
	gitconfig_judge(text, GITCONFIG_MAX + 1, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_UNREADABLE);
	gitconfig_judge(text, GITCONFIG_MAX, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_CLEAN);

	/* a value of GITCONFIG_VALUE_MAX bytes does not fit */
	k = (size_t)snprintf(text, n, "[user]\n\tname = ");
	memset(text + k, 'v', GITCONFIG_VALUE_MAX);
	k += GITCONFIG_VALUE_MAX;
	gitconfig_judge(text, k, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_UNREADABLE);
	gitconfig_judge(text, k - 1, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_CLEAN);

	/* nor a section name of GITCONFIG_NAME_MAX */
	text[0] = '[';
	memset(text + 1, 's', GITCONFIG_NAME_MAX);
	text[GITCONFIG_NAME_MAX + 1] = ']';
	gitconfig_judge(text, GITCONFIG_NAME_MAX + 2, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, GITCONFIG_UNREADABLE);
	free(text);
}
END_TEST

/* The variables and values as git lists them (git config --list). */
struct each_case {
	const char *text;
	const char *list; /* "name=value\n" per variable, "name\n" without a value */
};

static const struct each_case each_cases[] = {
	{ "[core]\n\tbare = false\n\tfilemode\n", "core.bare=false\ncore.filemode\n" },
	{ "[Remote \"Origin\"]\n\tURL = x\n", "remote.Origin.url=x\n" },
	{ "[Remote.Origin]\n\tURL = x\n", "remote.origin.url=x\n" },
	{ "[a] b = c [d] e = f\n", "a.b=c [d] e = f\n" },
	{ "[a]b=1[c]d=2", "a.b=1[c]d=2\n" },
	{ "[a][b]c=1", "b.c=1\n" },
	{ "[a]\n\tb =   x \t y  \n", "a.b=x   y\n" },
	{ "[a]\n\tb = \"  x  \"\t\n", "a.b=  x  \n" },
	{ "[a]\n\tb = x\\ty\\nz\\\\\\\"\n", "a.b=x\ty\nz\\\"\n" },
	{ "[a]\n\tb = x\\\n y\n", "a.b=x y\n" },
	{ "[a]\n\tb = x #c\n\tc=\"#\"\n", "a.b=x\na.c=#\n" },
	{ "[a \"s\\x\\\\\"]\n\tk = v\n", "a.sx\\.k=v\n" },
	{ "[a]\n\tk =\n", "a.k=\n" },
	{ "[a]\n\tk-1 = v\n", "a.k-1=v\n" },
	{ "[a]\r\n\tk = v\r\n\tj = \"x\ry\"\n", "a.k=v\na.j=x\ry\n" },
};

struct list_buf {
	char s[512];
	size_t n;
};

static int list_add(const struct gitconfig_entry *e, void *arg)
{
	struct list_buf *b = arg;

	b->n += (size_t)snprintf(b->s + b->n, sizeof(b->s) - b->n, "%s%s%.*s\n", e->name,
				 e->value ? "=" : "", (int)e->value_len, e->value ? e->value : "");
	return 0;
}

START_TEST(test_each)
{
	const struct each_case *c = &each_cases[_i];
	struct list_buf b = { .n = 0 };
	int rc;

	b.s[0] = '\0';
	rc = gitconfig_each(c->text, strlen(c->text), list_add, &b, NULL, NULL);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(b.s, c->list);
}
END_TEST

/* The manual names every variable of the list. */
START_TEST(test_manual_lists_every_key)
{
	const char *top = getenv("top_srcdir");
	char path[PATH_MAX];
	static char man[1 << 20];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/man/agenttrace-policy.5", top ? top : "..");
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	n = fread(man, 1, sizeof(man) - 1, f);
	fclose(f);
	man[n] = '\0';
	for (const struct gitconfig_key *k = gitconfig_keys; k->section; k++) {
		char want[128];

		snprintf(want, sizeof(want), "\n.B %s\n", k->doc);
		ck_assert_msg(strstr(man, want) || (snprintf(want, sizeof(want), "\n.BR %s ", k->doc),
						    strstr(man, want)),
			      "agenttrace-policy(5) does not list %s", k->doc);
		ck_assert_msg(strncasecmp(k->doc, k->section, strlen(k->section)) == 0,
			      "%s: the manual's name is of another section", k->doc);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gitconfig");
	TCase *tc = tcase_create("gitconfig");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_judge, 0, (int)N(judge_cases));
	tcase_add_test(tc, test_nul);
	tcase_add_test(tc, test_bounds);
	tcase_add_loop_test(tc, test_each, 0, (int)N(each_cases));
	tcase_add_test(tc, test_manual_lists_every_key);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
