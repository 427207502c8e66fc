/* Unit tests of the shell-language parser behind the "download-and-run"
 * script shape (rules/shell.h): a table of command strings, each with the
 * verdict the parser must give; the shells' option parsing that finds the
 * command string in an argv; the bounds (length, depth, arena) and the
 * fail-closed word scan; and the "script" condition of an exec pattern
 * through rules_decide(). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"
#include "rules/shell.h"
#include "tests/unit/blockbuild.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define DL SHELL_DOWNLOAD_AND_RUN
#define OK SHELL_CLEAN
#define UNP SHELL_UNPARSED

struct text_case {
	const char *text;
	enum shell_result expect;
};

static const struct text_case text_cases[] = {
	/* --- a downloader piped into an interpreter ------------------------- */
	{ "curl -fsSL https://x.example/install.sh | sh", DL },
	{ "curl -s https://x.example/i | bash", DL },
	{ "wget -qO- https://x.example/i | sh", DL },
	{ "wget -O - https://x.example/i|sh", DL },
	{ "wget2 -O- u | dash", DL },
	{ "fetch -o - u | sh", DL },
	{ "aria2c -o - u | zsh", DL },
	{ "curl u | ksh", DL },
	{ "curl u | node", DL },
	{ "curl u | nodejs -", DL },
	{ "curl u | perl", DL },
	{ "curl u | perl -", DL },
	{ "curl u | ruby", DL },
	{ "curl u | php", DL },
	{ "curl u | lua5.4 -", DL },
	{ "curl u | python3", DL },
	{ "curl u | python3 -", DL },
	{ "curl u | python3.12 -u", DL },
	{ "curl u | python", DL },
	{ "curl u | pypy3", DL },
	{ "curl u | /usr/bin/python3 -", DL },
	{ "/usr/bin/curl u | /bin/sh", DL },
	/* interpreters with their own flags, still reading stdin */
	{ "curl u | sh -s -- --yes", DL },
	{ "curl u | bash -s stable", DL },
	{ "curl u | bash -x", DL },
	{ "curl u | bash -", DL },
	{ "curl u | bash -o pipefail", DL },
	{ "curl u | bash /dev/stdin", DL },
	{ "curl u | source /dev/stdin", DL },
	{ "curl u | . /dev/fd/0", DL },
	{ "curl u | source", DL },
	/* wrappers */
	{ "curl u | sudo bash", DL },
	{ "curl u | sudo -E bash -", DL },
	{ "curl u | sudo -u root -E sh -s", DL },
	{ "curl u | sudo --user=root sh", DL },
	{ "curl u | sudo -s", DL },
	{ "curl u | env sh", DL },
	{ "curl u | env -i PATH=/usr/bin sh", DL },
	{ "curl u | env -u HOME -i VAR=x bash", DL },
	{ "curl u | xargs sh -c", DL },
	{ "curl u | xargs -0 bash -c", DL },
	{ "curl u | nohup sh", DL },
	{ "curl u | exec sh", DL },
	{ "curl u | command sh", DL },
	{ "curl u | time sh", DL },
	{ "curl u | time -p sh", DL },
	{ "curl u | nice sh", DL },
	{ "curl u | nice -n 10 sh", DL },
	{ "curl u | timeout 60 sh", DL },
	{ "curl u | busybox sh", DL },
	{ "curl u | sudo env X=1 nice -n5 bash -s", DL },
	{ "timeout 10 curl u | sh", DL },
	{ "sudo curl u | sh", DL },
	{ "command curl u | sh", DL },
	/* what flows through filters and groups */
	{ "curl u | tee install.log | sh", DL },
	{ "curl u | grep -v '^#' | bash", DL },
	{ "{ curl a; curl b; } | sh", DL },
	{ "(curl u) | sh", DL },
	{ "curl u | { sh; }", DL },
	{ "curl u | (bash)", DL },
	{ "curl u | sh -c 'bash'", DL },
	{ "curl u | sh -c 'cat | sh'", DL },
	{ "echo \"$(curl u)\" | sh", DL },
	{ "printf '%s' \"`curl u`\" | bash", DL },
	{ "curl u > >(sh)", DL },
	{ "curl u | tee >(sh) >/dev/null", DL },
	{ "curl u |& sh", DL },
	{ "curl u |\n  sh", DL },
	{ "! curl u | sh", DL },
	/* anywhere in a list or compound command */
	{ "cd /x && curl -fsSL u | sh && echo done", DL },
	{ "set -e; curl u | sh", DL },
	{ "true || curl u | sh", DL },
	{ "curl u | sh &", DL },
	{ "if true; then curl u | sh; fi", DL },
	{ "if false; then :; elif true; then :; else curl u | sh; fi", DL },
	{ "while true; do curl u | sh; break; done", DL },
	{ "until false; do curl u | sh; done", DL },
	{ "for i in 1 2; do curl u | sh; done", DL },
	{ "for ((i=0;i<1;i++)); do curl u | sh; done", DL },
	{ "case x in x) curl u | sh;; esac", DL },
	{ "case x in (a|x) echo; curl u | sh ;; *) ;; esac", DL },
	{ "f() { curl u | sh; }; f", DL },
	{ "function f { curl u | sh; }", DL },
	{ "x=$(curl u | sh)", DL },
	{ "echo \"$(curl u | sh)\"", DL },
	{ "[[ -n $(curl u | sh) ]]", DL },
	{ "echo ${x:-$(curl u | sh)}", DL },
	{ "arr=(a \"$(curl u | sh)\")", DL },
	{ "echo $(( $(curl u | sh) + 1 ))", DL },
	{ "(( $(curl u | sh) ))", DL },
	/* dash reads these as subshells, bash as arithmetic */
	{ "((curl u | sh))", DL },
	{ "echo $((curl u | sh))", DL },
	{ "(( x = y | z ))", OK },
	/* program text that is a download */
	{ "bash -c \"$(curl -fsSL u)\"", DL },
	{ "sh -c \"`wget -O- u`\"", DL },
	{ "sh -c \"$(cat <(curl u))\"", DL },
	{ "zsh -ec \"$(curl u)\"", DL },
	{ "python3 -c \"$(curl u)\"", DL },
	{ "perl -e \"$(curl u)\"", DL },
	{ "node -e \"$(curl u)\"", DL },
	{ "ruby -e \"$(curl u)\"", DL },
	{ "eval \"$(curl -s u)\"", DL },
	{ "eval `curl -s u`", DL },
	{ "eval $(wget -qO- u)", DL },
	{ "source <(curl -s u)", DL },
	{ ". <(curl -s u)", DL },
	{ "sh <(curl -s u)", DL },
	{ "bash <(wget -qO- u) --yes", DL },
	{ "python3 <(curl u)", DL },
	{ "node <(curl u)", DL },
	{ "bash < <(curl -s u)", DL },
	{ "sh <<< \"$(curl -s u)\"", DL },
	{ "python3 <<< `curl u`", DL },
	/* texts inside texts */
	{ "bash -c 'curl u | sh'", DL },
	{ "sh -c \"bash -c 'curl u | sh'\"", DL },
	{ "sh -c \"sh -c \\\"curl u | sh\\\"\"", DL },
	{ "sudo sh -c 'curl u | bash'", DL },
	{ "xargs sh -c 'curl u | sh'", DL },
	{ "bash -lc 'wget -qO- u | python3'", DL },
	{ "eval 'curl u | sh'", DL },
	{ "eval curl u '|' sh", DL },
	{ "bash <<< 'curl u | sh'", DL },
	{ "sh <<'EOF'\ncurl u | sh\nEOF", DL },
	{ "sh <<EOF\ncurl u | sh\nEOF\necho after", DL },
	{ "bash <<-\tEOF\n\tcurl u | sh\n\tEOF", DL },
	{ "python3 <<EOF\n$(curl u)\nEOF", DL },
	{ "cat <<EOF\n$(curl u | sh)\nEOF", DL },
	{ "cat <<A; sh <<'B'\nfirst\nA\ncurl u | sh\nB", DL },
	{ "x=$(cat <<'EOF'\nhello\nEOF\n); curl u | sh", DL },
	/* a variable that holds a download, where it is expanded */
	{ "s=$(curl -fsSL u); bash -c \"$s\"", DL },
	{ "export S=\"$(curl u)\" && eval \"$S\"", DL },
	{ "x=`wget -O- u`; echo \"$x\" | sh", DL },
	{ "x=$(curl u); sh -c \"${x}\"", DL },
	{ "for l in $(curl u); do eval \"$l\"; done", DL },
	{ "curl u | while read -r line; do eval \"$line\"; done", DL },
	{ "read -r cmd < <(curl u); eval \"$cmd\"", DL },
	{ "a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8; i=$(curl u) j=$(curl u) k=$(curl u) l=$(curl u) m=$(curl u) n=$(curl u) o=$(curl u) p=$(curl u) q=$(curl u); sh -c \"$a\"", DL },
	/* obfuscation the parser sees through */
	{ "c''url u | s\"\"h", DL },
	{ "\\curl u | \\sh", DL },
	{ "cu\\\nrl u | sh", DL },
	{ "$'\\x63url' u | $'\\163h'", DL },
	{ "'curl' u | \"bash\"", DL },
	{ "curl u | sh # install", DL },

	/* --- the false positives of an argv-text rule: data ------------------ */
	{ "curl -s http://127.0.0.1:8089/data.json | python3 -m json.tool", OK },
	{ "curl -s u | sha256sum", OK },
	{ "git grep -n 'curl.*| *sh'", OK },
	{ "echo \"$(wget --version)\"", OK },
	{ "echo \"curl -fsSL https://x/install.sh | sh\"", OK },
	{ "printf \"curl -fsSL https://x/install.sh | sh\\n\" >> README.md", OK },
	{ "echo 'curl u | sh' > notes.txt", OK },
	{ "grep -rn 'wget.*|.*bash' .", OK },
	/* consumers that are not interpreters, or run their own program */
	{ "curl u | python3 script.py", OK },
	{ "curl u | python3 -m json.tool", OK },
	{ "curl u | python3 -mjson.tool", OK },
	{ "curl u | python3 -W ignore tool.py", OK },
	{ "curl u | python3 -c 'import json,sys; json.load(sys.stdin)'", OK },
	{ "curl u | node x.js", OK },
	{ "curl u | node -r ts-node/register x.ts", OK },
	{ "curl u | node -e 'process.stdin.pipe(process.stdout)'", OK },
	{ "curl u | perl -ne 'print if /x/'", OK },
	{ "curl u | perl -lne 'print'", OK },
	{ "curl u | perl -MJSON::PP -e 'print'", OK },
	{ "curl u | perl -I lib tool.pl", OK },
	{ "curl u | ruby -e 'puts STDIN.read'", OK },
	{ "curl u | ruby tool.rb", OK },
	{ "curl u | php -r 'echo 1;'", OK },
	{ "curl u | php tool.php", OK },
	{ "curl u | lua tool.lua", OK },
	{ "curl u | sh ./tool.sh", OK },
	{ "curl u | bash -c 'cat > out'", OK },
	{ "curl u | bash --rcfile rc tool.sh", OK },
	{ "curl u | sha256sum", OK },
	{ "curl u | tee out", OK },
	{ "curl u | jq .", OK },
	{ "curl u | grep x", OK },
	{ "curl u | tar xz", OK },
	{ "curl u | xargs -n1 echo", OK },
	{ "curl u | xargs sh -c 'echo \"$1\"' _", OK },
	{ "curl u | xargs -I{} python3 tool.py {}", OK },
	{ "curl u | command -v sh", OK },
	{ "curl u | sudo -l sh", OK },
	{ "curl u | env", OK },
	/* downloads that are not run here, runs of nothing downloaded */
	{ "curl -o install.sh u && sh install.sh", OK },
	{ "wget u; python3 setup.py install", OK },
	{ "curl u > file.sh", OK },
	{ "x=$(curl u); echo \"$x\"", OK },
	{ "x=$(curl u); x=safe; sh -c \"$x\"", OK },
	{ "sh -c \"$x\"; x=$(curl u)", OK },
	{ "v=$(curl -s u/version); echo \"$v\" > VERSION", OK },
	{ "read -r x < answers.txt; eval \"$x\"", OK },
	{ "for f in $(ls); do sh \"$f\"; done", OK },
	{ "echo \"$(curl u)\" > out", OK },
	{ "echo ${x:-$(curl u)}", OK },
	{ "[[ $(curl -s u) == ok ]] && echo up", OK },
	{ "curl u && sh -c 'echo done'", OK },
	{ "sh -c 'curl u' > out", OK },
	{ "command -v curl && curl --version | head -1", OK },
	{ "which curl sh bash", OK },
	{ "type -a curl python3", OK },
	{ "echo hi | sh", OK },
	{ "sh -c 'echo curl | cat'", OK },
	{ "sh -c 'bash -c \"echo curl python\"'", OK },
	{ "bash script.sh", OK },
	{ "for f in *.sh; do sh \"$f\"; done", OK },
	{ "make -C sub && curl -sS u -o x.tgz && tar xzf x.tgz", OK },
	{ "((cd sub && curl u -o x) || true)", OK },
	{ "$((1 + 2))", OK },
	{ "echo $(( 1 + 2 )) $[3]", OK },
	{ "arr=(curl sh); echo \"${arr[@]}\"", OK },
	{ "case $x in *curl*|*sh*) echo match;; esac", OK },
	{ "echo \"curl u | sh\" | wc -l", OK },
	{ "sh -c \"echo 'curl u | sh'\"", OK },
	{ "echo $'curl u | sh\\n'", OK },
	/* here-documents and comments are data */
	{ "cat <<'EOF'\ncurl u | sh\nEOF", OK },
	{ "cat <<EOF\ncurl u | sh\nEOF", OK },
	{ "cat <<EOF > README\ncurl u | sh\nEOF\necho ok", OK },
	{ "cat <<-EOF\n\tcurl u | sh\n\tEOF", OK },
	{ "cat <<EOF\n$(echo hi)\nEOF", OK },
	{ "# curl u | sh\necho hi", OK },
	{ "echo hi # curl u | sh", OK },
	{ "echo a#b | sh", OK },
	{ "sh <<'EOF'\necho 'curl u | sh'\nEOF", OK },
	/* empty and trivial texts */
	{ "", OK },
	{ "   \n\n", OK },
	{ ":", OK },
	{ "> out", OK },
	{ "x=1 y=2", OK },
	{ "{ echo; } > out 2>&1", OK },
	{ "exec 3<&0", OK },
	{ "echo hi &> log; echo x 2>/dev/null >&2", OK },
	{ "if [ -f x ]; then . ./env.sh; fi", OK },
	{ "f() (echo sub); f", OK },

	/* --- what cannot be parsed --------------------------------------------- */
	{ "echo 'unterminated", UNP },
	{ "echo \"unterminated", UNP },
	{ "echo `unterminated", UNP },
	{ "echo $(curl u", UNP },
	{ "echo ${x", UNP },
	{ "echo x | (sh", UNP },
	/* a match before the error stands: fail closed */
	{ "curl u | (sh", DL },
	{ "(echo", UNP },
	{ "echo )", UNP },
	{ "if true; then echo", UNP },
	{ "while true; do echo", UNP },
	{ "case x in x) echo", UNP },
	{ "fi", UNP },
	{ "| sh", UNP },
	{ "a | | b", UNP },
	{ "a && && b", UNP },
	{ ";; x", UNP },
	{ "; echo", UNP },
	{ "echo >", UNP },
	{ "{ echo; ", UNP },
	{ "echo (x)", UNP },
	{ "echo $'x", UNP },
	/* a nested text that cannot be parsed is judged by its words */
	{ "sh -c \"bash -c 'curl u | sh\"", DL },
	{ "sh -c \"echo 'unterminated\"", OK },
};

START_TEST(test_text)
{
	const struct text_case *c = &text_cases[_i];
	char arena[SHELL_ARENA_SIZE];
	struct shell_report rep;
	enum shell_result r = shell_download_and_run(c->text, strlen(c->text), arena, sizeof(arena),
						     &rep);

	ck_assert_msg(r == c->expect, "\"%s\": got %d, want %d (%s at %zu)", c->text, r, c->expect,
		      rep.why ? rep.why : "-", rep.at);
	ck_assert_int_eq(rep.result, r);
	ck_assert(r == SHELL_UNPARSED ? rep.why != NULL : rep.why == NULL);
}
END_TEST

/* ---- the command string of a shell's argv ---- */

struct argv_case {
	const char *argv[8];
	bool applet;
	const char *expect; /* NULL: no -c */
};

static const struct argv_case argv_cases[] = {
	{ { "sh", "-c", "X" }, false, "X" },
	{ { "bash", "-ec", "X" }, false, "X" },
	{ { "bash", "-lc", "X" }, false, "X" },
	{ { "bash", "-xec", "X", "name", "arg" }, false, "X" },
	{ { "bash", "-e", "-c", "X" }, false, "X" },
	{ { "bash", "-c", "-e", "X" }, false, "X" },
	{ { "bash", "+e", "-c", "X" }, false, "X" },
	{ { "bash", "-o", "pipefail", "-c", "X" }, false, "X" },
	{ { "bash", "-euo", "pipefail", "-c", "X" }, false, "X" },
	{ { "bash", "-O", "extglob", "-c", "X" }, false, "X" },
	{ { "bash", "--norc", "--noprofile", "-c", "X" }, false, "X" },
	{ { "bash", "--rcfile", "-c", "-c", "X" }, false, "X" },
	{ { "bash", "-c", "--", "X" }, false, "X" },
	{ { "busybox", "sh", "-c", "X" }, true, "X" },
	{ { "sh", "script.sh" }, false, NULL },
	{ { "sh", "script.sh", "-c", "X" }, false, NULL },
	{ { "sh", "-s", "x" }, false, NULL },
	{ { "sh", "-c" }, false, NULL },
	{ { "sh" }, false, NULL },
	{ { "bash", "-o", "-c" }, false, NULL },
	{ { "bash", "--", "-c", "X" }, false, NULL },
};

START_TEST(test_argv)
{
	const struct argv_case *c = &argv_cases[_i];
	size_t argc = 0;
	const char *got;

	while (c->argv[argc])
		argc++;
	got = shell_argv_command_string(c->argv, argc, c->applet);
	if (!c->expect)
		ck_assert_msg(got == NULL, "case %d: got \"%s\"", _i, got);
	else
		ck_assert_msg(got && !strcmp(got, c->expect), "case %d: got %s", _i,
			      got ? got : "NULL");
}
END_TEST

/* ---- bounds ---- */

START_TEST(test_too_long)
{
	static char text[SHELL_TEXT_MAX + 2];
	char arena[SHELL_ARENA_SIZE];
	struct shell_report rep;

	memset(text, ' ', sizeof(text) - 1);
	memcpy(text, "echo hi", 7);
	ck_assert_int_eq(shell_download_and_run(text, SHELL_TEXT_MAX, arena, sizeof(arena), &rep),
			 SHELL_CLEAN);
	ck_assert_int_eq(shell_download_and_run(text, SHELL_TEXT_MAX + 1, arena, sizeof(arena),
						&rep), SHELL_UNPARSED);
	ck_assert_ptr_nonnull(rep.why);
	ck_assert_int_eq(shell_download_and_run(text, 4, arena, 255, &rep), SHELL_UNPARSED);
	ck_assert_int_eq(shell_download_and_run(NULL, 0, arena, sizeof(arena), &rep), SHELL_UNPARSED);
}
END_TEST

/* Nesting past SHELL_MAX_DEPTH is not parsed, whatever the shape. */
START_TEST(test_too_deep)
{
	char text[1024], arena[SHELL_ARENA_SIZE];
	size_t n = 0;
	struct shell_report rep;

	for (int k = 0; k < 40; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "$(");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "echo");
	for (int k = 0; k < 40; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, ")");
	ck_assert_int_eq(shell_download_and_run(text, n, arena, sizeof(arena), &rep), SHELL_UNPARSED);
	ck_assert_str_eq(rep.why, "nested too deep");

	/* "((((...": arithmetic to bash, subshells to dash; too deep to
	 * read as commands, so judged by its words */
	n = 0;
	for (int k = 0; k < 40; k++)
		text[n++] = '(';
	memcpy(text + n, "curl u | sh", 11);
	n += 11;
	for (int k = 0; k < 40; k++)
		text[n++] = ')';
	ck_assert_int_eq(shell_download_and_run(text, n, arena, sizeof(arena), &rep),
			 SHELL_DOWNLOAD_AND_RUN);
	memcpy(text + 40, "echo  hi   ", 11);
	ck_assert_int_eq(shell_download_and_run(text, n, arena, sizeof(arena), &rep), SHELL_CLEAN);
	n = 0;
	for (int k = 0; k < 40; k++)
		text[n++] = '{', text[n++] = ' ';
	memcpy(text + n, "echo hi;", 8);
	n += 8;
	for (int k = 0; k < 40; k++)
		text[n++] = ' ', text[n++] = '}', text[n++] = ';';
	ck_assert_int_eq(shell_download_and_run(text, n, arena, sizeof(arena), &rep), SHELL_UNPARSED);

	/* a few levels are fine */
	ck_assert_int_eq(shell_download_and_run("$($($(echo)))", 13, arena, sizeof(arena), &rep),
			 SHELL_CLEAN);
}
END_TEST

/* "eval 'eval ...'" K times around INNER, each level quoted for the
 * next as a shell would ('\'' for a quote). */
static void nest_evals(char *out, size_t size, const char *inner, int k)
{
	char tmp[4096];

	snprintf(out, size, "%s", inner);
	for (int level = 0; level < k; level++) {
		size_t n = 0;

		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "eval '");
		for (const char *q = out; *q && n + 8 < sizeof(tmp); q++) {
			if (*q == '\'') {
				memcpy(tmp + n, "'\\''", 4);
				n += 4;
			} else {
				tmp[n++] = *q;
			}
		}
		tmp[n++] = '\'';
		tmp[n] = '\0';
		snprintf(out, size, "%s", tmp);
	}
}

/* Texts in texts past SHELL_MAX_TEXTS are judged by their words. */
START_TEST(test_texts_bound)
{
	char text[4096], arena[SHELL_ARENA_SIZE];

	nest_evals(text, sizeof(text), "echo curl sh", SHELL_MAX_TEXTS);
	ck_assert_int_eq(shell_download_and_run(text, strlen(text), arena, sizeof(arena), NULL),
			 SHELL_CLEAN);
	nest_evals(text, sizeof(text), "curl u | sh", SHELL_MAX_TEXTS);
	ck_assert_int_eq(shell_download_and_run(text, strlen(text), arena, sizeof(arena), NULL),
			 SHELL_DOWNLOAD_AND_RUN);
	nest_evals(text, sizeof(text), "echo curl sh", SHELL_MAX_TEXTS + 1);
	ck_assert_int_eq(shell_download_and_run(text, strlen(text), arena, sizeof(arena), NULL),
			 SHELL_DOWNLOAD_AND_RUN);
}
END_TEST

/* A program text too large for the arena is judged by its words; a large
 * data word is just data. */
START_TEST(test_small_arena)
{
	char text[2048], arena[256];
	int n;

	n = snprintf(text, sizeof(text), "bash -c 'curl u | sh; %0600d'", 0);
	ck_assert_int_eq(shell_download_and_run(text, (size_t)n, arena, sizeof(arena), NULL),
			 SHELL_DOWNLOAD_AND_RUN);
	n = snprintf(text, sizeof(text), "bash -c 'echo hi; %0600d'", 0);
	ck_assert_int_eq(shell_download_and_run(text, (size_t)n, arena, sizeof(arena), NULL),
			 SHELL_CLEAN);
	n = snprintf(text, sizeof(text), "echo '%01000d' | sh", 0);
	ck_assert_int_eq(shell_download_and_run(text, (size_t)n, arena, sizeof(arena), NULL),
			 SHELL_CLEAN);
	n = snprintf(text, sizeof(text), "echo `%0600d; curl u` | sh", 0);
	ck_assert_int_eq(shell_download_and_run(text, (size_t)n, arena, sizeof(arena), NULL),
			 SHELL_DOWNLOAD_AND_RUN);
}
END_TEST

/* ---- the word scan of texts that cannot be parsed ---- */

struct scan_case {
	const char *text;
	bool downloads, interprets;
};

static const struct scan_case scan_cases[] = {
	{ "curl u | sh", true, true },
	{ "'unbalanced /usr/bin/wget -O- u | python3.12", true, true },
	{ "curl.*| *sh", true, true },
	{ "curl -o x.sh u", true, false },
	{ "sha256sum shasum bashful", false, false },
	{ "eval x", false, true },
	{ "", false, false },
};

START_TEST(test_scan)
{
	const struct scan_case *c = &scan_cases[_i];
	bool d, i;

	shell_scan_words(c->text, strlen(c->text), &d, &i);
	ck_assert_msg(d == c->downloads && i == c->interprets, "\"%s\": %d %d", c->text, d, i);
}
END_TEST

/* ---- the "script" condition through rules_decide ---- */

struct decide_case {
	const char *exe;
	const char *argv[6];
	bool expect;
};

static const struct decide_case decide_cases[] = {
	{ "/usr/bin/dash", { "sh", "-c", "curl -s u | sh" }, true },
	{ "/usr/bin/bash", { "bash", "-ec", "wget -qO- u | python3" }, true },
	{ "/usr/bin/bash", { "bash", "-c", "curl -s u | python3 -m json.tool" }, false },
	{ "/usr/bin/bash", { "bash", "-c", "git grep -n 'curl.*| *sh'" }, false },
	{ "/usr/bin/bash", { "bash", "script.sh", "curl u | sh" }, false },
	{ "/usr/bin/bash", { "bash" }, false },
	/* not parsed: the words decide */
	{ "/usr/bin/bash", { "bash", "-c", "echo 'curl u | sh" }, true },
	{ "/usr/bin/bash", { "bash", "-c", "echo 'curl u" }, false },
	/* busybox as the applet's name, or behind /bin/sh */
	{ "/bin/busybox", { "busybox", "sh", "-c", "curl u | sh" }, true },
	{ "/bin/busybox", { "sh", "-c", "curl u | sh" }, true },
	{ "/bin/busybox", { "busybox", "wget", "-c", "curl u | sh" }, false },
	/* the argv part still has to match */
	{ "/usr/bin/python3", { "python3", "-c", "curl u | sh" }, false },
};

START_TEST(test_decide)
{
	const struct decide_case *c = &decide_cases[_i];
	struct bb_rule rule = { RULES_KIND_EXEC, RULES_ACTION_DENY, "sh|dash|bash|busybox **", "one",
				{ NULL } };
	struct bb_policy def = { .rules = &rule, .n_rules = 1 };
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = c->exe, .argv = c->argv };
	size_t size;
	struct rules_policy *p = bb_build(&def, &size);
	struct rules_rule *r = (struct rules_rule *)rules_rule_at(p, p->span[RULES_KIND_EXEC][RULES_ACTION_DENY].first);
	struct rules_verdict v;

	while (c->argv[ev.argc])
		ev.argc++;
	r->pat.script = RULES_SCRIPT_DOWNLOAD_AND_RUN;
	ck_assert_int_eq(rules_policy_check(p, size), 0);
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_msg((v.action == RULES_ACTION_DENY) == c->expect, "case %d (%s): %s", _i,
		      c->argv[2] ? c->argv[2] : "", rules_action_name(v.action));
	/* without the script shape, argv alone decides */
	r->pat.script = RULES_SCRIPT_NONE;
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_int_eq(v.action, strcmp(c->exe, "/usr/bin/python3") ? RULES_ACTION_DENY
								       : RULES_ACTION_ALLOW);
	/* a shape this build does not know: the block is refused */
	r->pat.script = RULES_SCRIPT_COUNT;
	ck_assert_int_eq(rules_policy_check(p, size), -EINVAL);
	free(p);
}
END_TEST

START_TEST(test_script_name)
{
	ck_assert_str_eq(rules_script_name(RULES_SCRIPT_DOWNLOAD_AND_RUN), "download-and-run");
	ck_assert_ptr_null(rules_script_name(RULES_SCRIPT_NONE));
}
END_TEST

static Suite *shell_suite(void)
{
	Suite *s = suite_create("shell");
	TCase *tc;

	tc = tcase_create("texts");
	tcase_add_loop_test(tc, test_text, 0, (int)N(text_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("argv");
	tcase_add_loop_test(tc, test_argv, 0, (int)N(argv_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("bounds");
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_too_deep);
	tcase_add_test(tc, test_texts_bound);
	tcase_add_test(tc, test_small_arena);
	tcase_add_loop_test(tc, test_scan, 0, (int)N(scan_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("decide");
	tcase_add_loop_test(tc, test_decide, 0, (int)N(decide_cases));
	tcase_add_test(tc, test_script_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shell_suite());
	int failed;

	if (!getenv("CK_FORK"))
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
