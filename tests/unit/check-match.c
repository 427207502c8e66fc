/* Unit tests of the matchers (rules/match-*.c), table-driven.
 * Path patterns are run twice: through match_path() and through
 * rules_decide() on a one-rule block, so that the literal-prefix reject
 * in front of the glob is held to the same answers. */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "rules/match-internal.h"
#include "rules/rules.h"
#include "tests/unit/blockbuild.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define CALL_MAX_ARGV_TEST 256 /* tracer/syscall/call.h keeps this many argv elements */

/* True when the single rule of a bb_one() block decides the event. */
static bool one_rule_hits(const struct rules_policy *p, const struct rules_event *ev)
{
	struct rules_verdict v;

	ck_assert_int_eq(rules_decide(p, ev, &v), 0);
	ck_assert_ptr_nonnull(v.rule);
	return strcmp(rules_string(p, v.rule->id), "one") == 0;
}

/* ---- paths ---- */

struct path_case {
	const char *glob;
	const char *path;
	bool expect;
};

static const struct path_case path_cases[] = {
	{ "/a/b", "/a/b", true },
	{ "/a/b", "/a/bc", false },
	{ "/a/b", "/a", false },
	/* trailing slashes, "//", ".", "..": normalized lexically first */
	{ "/a/b", "/a/b/", true },
	{ "/a/b", "/a/b//", true },
	{ "/a/b/", "/a/b", true },
	{ "/a/b", "/a//b", true },
	{ "/a/b", "//a/b", true },
	{ "/a//b", "/a/b", true },
	{ "//.ssh/id_*", "/.ssh/id_rsa", true }, /* ${HOME}/.ssh/id_* with HOME=/ */
	{ "/a/b", "/a/./b", true },
	{ "/a/b", "/a/b/.", true },
	{ "/a/*", "/a/./b", true },
	{ "/a/*", "/a/.", false },
	{ "/etc/shadow", "/home/u/../../etc/shadow", true },
	{ "/home/u/**", "/home/u/../../etc/passwd", false },
	{ "/home/u/**", "/home/u/proj/../x", true },
	{ "/home/u/**", "/home/u/..", false },
	{ "/", "/..", true },
	{ "/", "/../..", true },
	{ "/etc/passwd", "/../etc/passwd", true },
	{ "/", "/", true },
	{ "/", "//", true },
	{ "/a/./b", "/a/b", false }, /* "." in a pattern is a plain name */
	/* absolute and relative never meet */
	{ "a/b", "/a/b", false },
	{ "/a/b", "a/b", false },
	{ "a/*", "a/b", true },
	/* "*" stays in one component, "**" crosses */
	{ "/a/*", "/a/b", true },
	{ "/a/*", "/a/b/c", false },
	{ "/a/*", "/a", false },
	{ "/a/*", "/a/", false },
	{ "/a/*", "/a/.hidden", true },
	{ "/a/*/c", "/a/b/c", true },
	{ "/a/*/c", "/a/c", false },
	{ "/a/b*c", "/a/bxc", true },
	{ "/a/b**c", "/a/bxc", true },   /* not a whole component: a plain star */
	{ "/a/b**c", "/a/bx/c", false },
	{ "/a/***", "/a/b", true },
	{ "/a/***", "/a/b/c", false },
	/* trailing "**" also matches the directory itself */
	{ "/a/**", "/a", true },
	{ "/a/**", "/a/", true },
	{ "/a/**", "/a/b", true },
	{ "/a/**", "/a/b/c", true },
	{ "/a/**", "/ab", false },
	{ "/a/**", "/", false },
	{ "/**", "/", true },
	{ "/**", "/x/y/z", true },
	{ "/x/**/y", "/x/y", true },
	{ "/x/**/y", "/x/a/b/y", true },
	{ "/x/**/y", "/x/a/b/y/z", false },
	{ "/x/**/y", "/x/yy", false },
	{ "/x/**/y", "/x", false },
	{ "/a/**/b/**/c", "/a/b/c", true },
	{ "/a/**/b/**/c", "/a/x/b/y/z/c", true },
	{ "/a/**/b/**/c", "/a/c/b", false },
	{ "/a/**/**/b", "/a/b", true },
	{ "/**/.git/hooks/**", "/p/.git/hooks/pre-commit", true },
	{ "/**/.git/hooks/**", "/p/sub/mod/.git/hooks", true },
	{ "/**/.git/hooks/**", "/p/.git/hooksx", false },
	{ "/r/**/.git/config", "/r/.git/config", true },
	{ "/r/**/.git/config", "/r/vendor/x/.git/config", true },
	{ "/r/**/.git/config", "/r/.git/config.lock", false },
	{ "/home/u/.ssh/id_*", "/home/u/.ssh/id_ed25519", true },
	{ "/home/u/.ssh/id_*", "/home/u/.ssh/known_hosts", false },
	{ "/proc/[0-9]*/environ", "/proc/1234/environ", true },
	{ "/proc/[0-9]*/environ", "/proc/self/environ", false },
	/* "?" and classes */
	{ "/a?c", "/abc", true },
	{ "/a?c", "/a/c", false },
	{ "/a?c", "/ac", false },
	{ "/f[abc]", "/fa", true },
	{ "/f[abc]", "/fd", false },
	{ "/f[a-c]x", "/fbx", true },
	{ "/f[a-c]x", "/fdx", false },
	{ "/f[!a-c]", "/fd", true },
	{ "/f[!a-c]", "/fa", false },
	{ "/f[^a]", "/fb", true },
	{ "/f[^a]", "/fa", false },
	{ "/f[]]", "/f]", true },
	{ "/f[!]]", "/fa", true },
	{ "/f[!]]", "/f]", false },
	{ "/f[a-]", "/f-", true },
	{ "/f[\\]]", "/f]", true },
	{ "/f[", "/f[", true },          /* unterminated: a literal '[' */
	{ "/f[ab", "/fa", false },
	{ "/shadow*", "/shadow-", true },
	/* escapes */
	{ "/a\\*b", "/a*b", true },
	{ "/a\\*b", "/axb", false },
	{ "/a\\?", "/a?", true },
	{ "/a\\?", "/ab", false },
	{ "/a\\[x]", "/a[x]", true },
	{ "/a\\[x]", "/ax", false },
	{ "/a\\\\b", "/a\\b", true },
	{ "/a\\*\\*/b", "/a**/b", true },  /* an escaped "**" is no wildcard */
	{ "/a\\*\\*/b", "/a/x/b", false },
	/* bytes that are not UTF-8 are just bytes */
	{ "/data/\xff\xfe*", "/data/\xff\xfe\x80", true },
	{ "/data/\xff\xfe*", "/data/\xff\xfd", false },
	{ "/d/?", "/d/\xc3", true },
	{ "/d/?", "/d/\xc3\xa9", false },   /* '?' is one byte, not one character */
	{ "/d/[\x80-\xff]", "/d/\xe9", true },
	{ "/d/[\x80-\xff]", "/d/a", false },
	{ "/d/\xc3\xa9t\xc3\xa9", "/d/\xc3\xa9t\xc3\xa9", true },
};

START_TEST(test_path)
{
	const struct path_case *c = &path_cases[_i];
	struct rules_policy *p = bb_one(RULES_KIND_WRITE, c->glob);
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = c->path };

	ck_assert_msg(match_path(c->glob, c->path) == c->expect, "match_path(\"%s\", \"%s\") != %d",
		      c->glob, c->path, c->expect);
	ck_assert_msg(one_rule_hits(p, &ev) == c->expect, "decide: \"%s\" vs \"%s\" != %d",
		      c->glob, c->path, c->expect);
	ev.kind = RULES_KIND_READ;
	free(p);
	p = bb_one(RULES_KIND_READ, c->glob);
	ck_assert(one_rule_hits(p, &ev) == c->expect);
	free(p);
}
END_TEST

/* The one-pass scan of rules_decide() against the two it stands for. */
START_TEST(test_path_scan)
{
	static const char *const extra[] = {
		"", "/", "//", "/.", "/..", ".", "..", "a", "a/", "/a/", "/a//b", "//a", "/a/./b",
		"/a/../b", "/a/.b", "/a/..b/c", "/a/b.", "/a/...", "a/b/..", "/a/b/.", "/x/y/z",
	};
	size_t n_cases = sizeof(path_cases) / sizeof(path_cases[0]);

	for (size_t i = 0; i < n_cases + sizeof(extra) / sizeof(extra[0]); i++) {
		const char *path = i < n_cases ? path_cases[i].path : extra[i - n_cases];
		size_t len = strlen(path);
		bool needs = !match_path_needs_normalize(path, len);
		uint64_t comps = match_path_scan(path, len, &needs);

		ck_assert_msg(needs == match_path_needs_normalize(path, len), "\"%s\": needs %d",
			      path, needs);
		ck_assert_msg(comps == match_path_comps(path, len), "\"%s\": comps", path);
	}
}
END_TEST

/* A pattern's literal components are a path's whenever it matches (the
 * reject of rules_pattern need is sound), and a path without one of them
 * is rejected by the bits alone. */
START_TEST(test_path_need)
{
	char norm[MATCH_PATH_MAX];

	for (size_t i = 0; i < sizeof(path_cases) / sizeof(path_cases[0]); i++) {
		const struct path_case *c = &path_cases[i];
		size_t n = match_path_normalize(c->path, strlen(c->path), norm, sizeof(norm));

		if (c->expect)
			ck_assert_msg(!(match_path_need(c->glob) & ~match_path_comps(norm, n)),
				      "\"%s\" matches \"%s\" without its components", c->glob, c->path);
	}
	ck_assert(match_path_need("/**/*.py") == 0);
	ck_assert(match_path_need("/a\\*b/c") == match_path_need("/c"));
	ck_assert(match_path_need("/home/u/.ssh/id_*") & ~match_path_comps("/dev/null", 9));
	ck_assert(!(match_path_need("/home/u/.ssh/id_*") &
		    ~match_path_comps("/home/u/.ssh/id_rsa", 19)));
}
END_TEST

/* Random globs and paths over a small alphabet (components that repeat,
 * dots, doubled and trailing separators, every glob and escape byte):
 * a rule decides as the plain matcher does, whose walk has neither the
 * prefix nor the components' reject. */
START_TEST(test_path_rejects_differential)
{
	static const char glob_bytes[] = "ab/./*?[]!\\-";
	static const char path_bytes[] = "ab/.ab/-*";
	uint64_t x = 0x9e3779b97f4a7c15u;
	char glob[12], path[12];

	for (int round = 0; round < 20000; round++) {
		size_t gn, pn;
		struct rules_policy *p;
		struct rules_event ev = { .kind = RULES_KIND_READ, .path = path };

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		gn = 1 + x % (sizeof(glob) - 1);
		pn = 1 + (x >> 8) % (sizeof(path) - 1);
		for (size_t i = 0; i < sizeof(glob) - 1; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			glob[i] = glob_bytes[x % (sizeof(glob_bytes) - 1)];
			path[i] = path_bytes[(x >> 16) % (sizeof(path_bytes) - 1)];
		}
		glob[0] = path[0] = '/';
		glob[gn] = path[pn] = '\0';
		p = bb_one(RULES_KIND_READ, glob);
		ck_assert_msg(one_rule_hits(p, &ev) == match_path(glob, path),
			      "decide and match_path differ: \"%s\" vs \"%s\"", glob, path);
		free(p);
	}
}
END_TEST

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* 4095 bytes: "/a/a/.../a" + tail.  Several "**" must stay linear-ish. */
START_TEST(test_path_long)
{
	char path[4096], comp1[4096];
	struct timespec t0;
	size_t n = 0;

	while (n + 2 < 4095 - 2) {
		path[n++] = '/';
		path[n++] = 'a';
	}
	path[n++] = '/';
	path[n++] = 'b';
	path[n] = '\0';
	ck_assert_uint_eq(strlen(path), 4094);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert(match_path("/**/b", path));
	ck_assert(match_path("/a/**/a/b", path));
	ck_assert(match_path("/**/a/**/a/**/a/**/b", path));
	ck_assert(!match_path("/**/a/**/a/**/a/**/c", path));
	ck_assert(!match_path("/**/a/**/b/**/a/**/a", path));
	ck_assert(!match_path("/**/*a*a*a*a*c/**", path));
	ck_assert(!match_path("/a/*", path));
	{
		struct rules_policy *p = bb_one(RULES_KIND_WRITE, "/**/a/**/a/**/a/**/c");
		struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
		ck_assert(!one_rule_hits(p, &ev));
		free(p);
	}
	/* One component of 4094 bytes against a star-heavy glob. */
	comp1[0] = '/';
	memset(comp1 + 1, 'a', 4093);
	comp1[4094] = '\0';
	ck_assert(!match_path("/*a*a*a*a*a*a*a*b", comp1));
	ck_assert(match_path("/*a*a*a*a*a*a*a*", comp1));
	ck_assert(!match_glob("*a*a*a*a*a*a*a*b", comp1));
	/* A path that needs normalizing and fits, one that does not fit. */
	path[1] = '/';
	ck_assert(match_path("/**/b", path));
	{
		static char big[8200];
		memset(big, 'x', sizeof(big) - 1);
		big[0] = '/';
		ck_assert(match_path("/*", big));     /* no normalizing needed */
		big[1] = '/';
		ck_assert(!match_path("/**", big));   /* needs it, too long: no match */
	}
	ck_assert_msg(elapsed_ms(&t0) < 500.0, "long paths took %.1f ms", elapsed_ms(&t0));
}
END_TEST

/* ---- plain globs and alternatives ---- */

struct glob_case {
	const char *glob;
	const char *s;
	bool expect;
};

static const struct glob_case glob_cases[] = {
	{ "a*b", "a/x/b", true },   /* '*' crosses '/' here */
	{ "a*b", "ab", true },
	{ "a*b", "abc", false },
	{ "", "", true },
	{ "", "a", false },
	{ "*", "", true },
	{ "?", "", false },
	{ "**", "x/y", true },
	{ "*_TOKEN", "GITHUB_TOKEN", true },
	{ "*_TOKEN", "TOKEN", false },
	{ "*_SECRET*", "MY_SECRET_KEY", true },
	{ "a\\", "a\\", true },     /* a lone trailing backslash is itself */
	{ "\\a", "a", true },
	{ "[*]", "*", true },
	{ "[*]", "a", false },
	{ "*.py", "x.py", true },
	{ "*.py", "x.pyc", false },
	{ "x[0-9][0-9]", "x42", true },
	{ "x[0-9][0-9]", "x4a", false },
};

START_TEST(test_glob)
{
	const struct glob_case *c = &glob_cases[_i];

	ck_assert_msg(match_glob(c->glob, c->s) == c->expect, "match_glob(\"%s\", \"%s\") != %d",
		      c->glob, c->s, c->expect);
}
END_TEST

static const struct glob_case alt_cases[] = {
	{ "python|python3*", "python", true },
	{ "python|python3*", "python3.11", true },
	{ "python|python3*", "python2", false },
	{ "-e|-c", "-c", true },
	{ "-e|-c", "-x", false },
	{ "a\\|b", "a|b", true },
	{ "a\\|b", "a", false },
	{ "a\\|b", "b", false },
	{ "a||b", "", true },       /* an empty alternative matches "" */
	{ "a|b", "", false },
	{ "|", "", true },
	{ "\\\\|x", "\\", true },   /* "\\" then '|': the bar splits */
	{ "*|x", "anything", true },
};

START_TEST(test_alternatives)
{
	const struct glob_case *c = &alt_cases[_i];

	ck_assert_msg(match_alternatives(c->glob, c->s) == c->expect,
		      "match_alternatives(\"%s\", \"%s\") != %d", c->glob, c->s, c->expect);
}
END_TEST

START_TEST(test_null_args)
{
	ck_assert(!match_path(NULL, "/a"));
	ck_assert(!match_path("/a", NULL));
	ck_assert(!match_glob(NULL, "a"));
	ck_assert(!match_glob("a", NULL));
	ck_assert(!match_alternatives(NULL, "a"));
	ck_assert(!match_alternatives("a", NULL));
}
END_TEST

/* ---- net ---- */

struct net_case {
	const char *pattern;
	int family;          /* AF_INET, AF_INET6, AF_UNIX or 0 */
	const char *addr;    /* inet_pton text; unix: the socket path */
	uint16_t port;
	const char *host;
	bool expect;
};

static const struct net_case net_cases[] = {
	/* ANY */
	{ "*", AF_INET, "1.2.3.4", 80, NULL, true },
	{ "*", AF_INET6, "2001:db8::1", 80, NULL, true },
	{ "*", AF_UNIX, "/run/x.sock", 0, NULL, true },
	{ "*", AF_UNIX, NULL, 0, NULL, true },
	{ "*", 0, NULL, 443, "a.com", true },
	{ "*:443", AF_INET, "1.2.3.4", 443, NULL, true },
	{ "*:443", AF_INET, "1.2.3.4", 444, NULL, false },
	{ "*:443", AF_UNIX, "/run/x.sock", 443, NULL, false }, /* no port on a unix socket */
	{ "*:443", 0, NULL, 443, "a.com", true },
	{ "*:0-65535", AF_UNIX, "@abs", 0, NULL, true },
	/* ports and ranges */
	{ "1.2.3.4:0", AF_INET, "1.2.3.4", 0, NULL, true },
	{ "1.2.3.4:0", AF_INET, "1.2.3.4", 1, NULL, false },
	{ "*:65535", AF_INET, "1.2.3.4", 65535, NULL, true },
	{ "*:65535", AF_INET, "1.2.3.4", 65534, NULL, false },
	{ "*:1000-2000", AF_INET, "1.2.3.4", 999, NULL, false },
	{ "*:1000-2000", AF_INET, "1.2.3.4", 1000, NULL, true },
	{ "*:1000-2000", AF_INET, "1.2.3.4", 2000, NULL, true },
	{ "*:1000-2000", AF_INET, "1.2.3.4", 2001, NULL, false },
	{ "*:0-65535", AF_INET, "1.2.3.4", 65535, NULL, true },
	{ "10.0.0.1", AF_INET, "10.0.0.1", 0, NULL, true },
	{ "10.0.0.1", AF_INET, "10.0.0.1", 65535, NULL, true },
	/* IPv4 CIDR */
	{ "0.0.0.0/0", AF_INET, "255.255.255.255", 1, NULL, true },
	{ "0.0.0.0/0", AF_INET6, "::1", 1, NULL, false },
	{ "0.0.0.0/0", AF_INET6, "::ffff:8.8.8.8", 1, NULL, true },
	{ "0.0.0.0/0", 0, NULL, 1, "a.com", false },
	{ "10.1.2.3/32", AF_INET, "10.1.2.3", 1, NULL, true },
	{ "10.1.2.3/32", AF_INET, "10.1.2.4", 1, NULL, false },
	{ "10.0.0.0/8", AF_INET, "10.255.255.255", 1, NULL, true },
	{ "10.0.0.0/8", AF_INET, "11.0.0.0", 1, NULL, false },
	{ "10.0.0.0/8", AF_INET, "9.255.255.255", 1, NULL, false },
	{ "10.1.2.128/25", AF_INET, "10.1.2.200", 1, NULL, true },
	{ "10.1.2.128/25", AF_INET, "10.1.2.127", 1, NULL, false },
	{ "127.0.0.0/8", AF_INET6, "::ffff:127.0.0.1", 1, NULL, true },
	{ "127.0.0.0/8", AF_INET6, "::ffff:128.0.0.1", 1, NULL, false },
	{ "127.0.0.0/8", AF_INET6, "::1", 1, NULL, false },
	{ "127.0.0.0/8", AF_INET6, "::127.0.0.1", 1, NULL, false },  /* compat, not mapped */
	{ "127.0.0.0/8", AF_UNIX, "/x", 0, NULL, false },
	{ "169.254.169.254", AF_INET, "169.254.169.254", 80, NULL, true },
	{ "169.254.169.254", AF_INET6, "::ffff:169.254.169.254", 80, NULL, true },
	/* IPv6 */
	{ "::/0", AF_INET6, "2001:db8::1", 1, NULL, true },
	{ "::/0", AF_INET, "1.2.3.4", 1, NULL, false },
	{ "::1", AF_INET6, "::1", 1, NULL, true },
	{ "::1", AF_INET6, "::2", 1, NULL, false },
	{ "::1", AF_INET, "127.0.0.1", 1, NULL, false },
	{ "[2001:db8:1:2::]/64", AF_INET6, "2001:db8:1:2:ffff::1", 1, NULL, true },
	{ "[2001:db8:1:2::]/64", AF_INET6, "2001:db8:1:3::1", 1, NULL, false },
	{ "[2001:db8::]/33", AF_INET6, "2001:db8:7fff::1", 1, NULL, true },
	{ "[2001:db8::]/33", AF_INET6, "2001:db8:8000::1", 1, NULL, false },
	{ "fd00:ec2::254", AF_INET6, "fd00:ec2::254", 80, NULL, true },
	{ "[::1]:8080", AF_INET6, "::1", 8080, NULL, true },
	{ "[::1]:8080", AF_INET6, "::1", 8081, NULL, false },
	/* host names */
	{ "pypi.org:443", AF_INET, "151.101.0.223", 443, "pypi.org", true },
	{ "pypi.org:443", AF_INET, "151.101.0.223", 80, "pypi.org", false },
	{ "pypi.org:443", AF_INET, "151.101.0.223", 443, NULL, false },
	{ "pypi.org:443", 0, NULL, 443, "pypi.org", true },
	{ "pypi.org", AF_INET6, "2a04:4e42::223", 443, "PyPI.ORG", true },
	{ "PyPI.org", AF_INET, "1.1.1.1", 443, "pypi.org", true },
	{ "pypi.org", AF_INET, "1.1.1.1", 443, "pypi.org.", true },
	{ "pypi.org.", AF_INET, "1.1.1.1", 443, "pypi.org", true },
	{ "pypi.org", AF_INET, "1.1.1.1", 443, "pypi.org..", false },
	{ "pypi.org", AF_INET, "1.1.1.1", 443, "xpypi.org", false },
	{ "*.example.com", AF_INET, "1.1.1.1", 443, "a.example.com", true },
	{ "*.example.com", AF_INET, "1.1.1.1", 443, "a.b.example.com", true },
	{ "*.example.com", AF_INET, "1.1.1.1", 443, "A.Example.COM.", true },
	{ "*.example.com", AF_INET, "1.1.1.1", 443, "example.com", false },
	{ "*.example.com", AF_INET, "1.1.1.1", 443, "aexample.com", false },
	{ "*.a.com", 0, NULL, 443, "a.com", false },
	{ "*.a.com", 0, NULL, 443, "x.a.com", true },
	{ "*.a.com", AF_UNIX, "/x", 0, "x.a.com", false },
	{ "api.[a-c]x.com", 0, NULL, 1, "api.BX.com", true },
	/* unix sockets */
	{ "unix:/run/docker.sock", AF_UNIX, "/run/docker.sock", 0, NULL, true },
	{ "unix:/run/docker.sock", AF_UNIX, "/run//docker.sock", 0, NULL, true },
	{ "unix:/run/docker.sock", AF_UNIX, "/run/docker.sock", 443, NULL, true },
	{ "unix:/run/docker.sock", AF_UNIX, "@/run/docker.sock", 0, NULL, false },
	{ "unix:/run/docker.sock", AF_UNIX, NULL, 0, NULL, false },
	{ "unix:/run/docker.sock", AF_INET, "1.2.3.4", 0, NULL, false },
	{ "unix:/run/*.sock", AF_UNIX, "/run/x.sock", 0, NULL, true },
	{ "unix:/run/*.sock", AF_UNIX, "/run/a/x.sock", 0, NULL, false },
	{ "unix:/run/**", AF_UNIX, "/run/a/x.sock", 0, NULL, true },
	{ "unix:*", AF_UNIX, "/any/path/s", 0, NULL, true },
	{ "unix:*", AF_UNIX, "rel/s", 0, NULL, true },
	{ "unix:*", AF_UNIX, "@abs", 0, NULL, false },
	{ "unix:@abs*", AF_UNIX, "@abstract", 0, NULL, true },
	{ "unix:@abs*", AF_UNIX, "@xabs", 0, NULL, false },
	{ "unix:@abs*", AF_UNIX, "/abstract", 0, NULL, false },
	{ "unix:@abs*", AF_UNIX, "abstract", 0, NULL, false },
	{ "unix:@*", AF_UNIX, "@", 0, NULL, true },
	{ "unix:@/tmp/.X11-unix/X*", AF_UNIX, "@/tmp/.X11-unix/X0", 0, NULL, true },
	{ "unix:@*", AF_INET, "1.2.3.4", 0, NULL, false },
};

static void net_event(const struct net_case *c, struct rules_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = RULES_KIND_NET;
	ev->family = c->family;
	ev->port = c->port;
	ev->host = c->host;
	if (c->family == AF_UNIX)
		ev->unix_path = c->addr;
	else if (c->family)
		ck_assert_int_eq(inet_pton(c->family, c->addr, ev->addr), 1);
}

START_TEST(test_net)
{
	const struct net_case *c = &net_cases[_i];
	struct rules_policy *p = bb_one(RULES_KIND_NET, c->pattern);
	struct rules_event ev;

	net_event(c, &ev);
	ck_assert_int_eq(rules_policy_check(p, p->size), 0);
	ck_assert_msg(one_rule_hits(p, &ev) == c->expect, "net \"%s\" vs %s/%s:%u != %d",
		      c->pattern, c->addr ? c->addr : "-", c->host ? c->host : "-",
		      (unsigned)c->port, c->expect);
	free(p);
}
END_TEST

/* Local destinations and binds: the pattern, the event, whether the
 * rule decides it, and which fallback decides it otherwise. */
struct net_local_case {
	const char *pattern;
	int family;
	const char *addr;    /* inet_pton text; unix: the path or "@name" */
	uint16_t port;
	bool bind;
	uint8_t endpoint;    /* enum rules_endpoint */
	bool expect;
	const char *fallback;
};

static const struct net_local_case net_local_cases[] = {
	/* "session": a local destination the backend found to be the session's */
	{ "session", AF_INET, "127.0.0.1", 8000, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_INET, "127.0.0.1", 8000, false, RULES_ENDPOINT_OUTSIDE, false,
	  "net.local-outside" },
	{ "session", AF_INET, "127.0.0.1", 8000, false, RULES_ENDPOINT_UNKNOWN, false,
	  "net.local-outside" },
	{ "session", AF_INET, "127.0.0.1", 8000, false, RULES_ENDPOINT_NONE, false,
	  "net.local-outside" },
	{ "session", AF_INET, "127.200.1.1", 80, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_INET, "0.0.0.0", 80, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_INET6, "::1", 80, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_INET6, "::", 80, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_INET6, "::ffff:127.0.0.1", 80, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_UNIX, "/r/s.sock", 0, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_UNIX, "@name", 0, false, RULES_ENDPOINT_SESSION, true, NULL },
	{ "session", AF_UNIX, "@name", 0, false, RULES_ENDPOINT_OUTSIDE, false,
	  "net.local-outside" },
	/* a remote address is never the session's, whatever a backend says */
	{ "session", AF_INET, "192.0.2.1", 80, false, RULES_ENDPOINT_SESSION, false, "net.fallback" },
	{ "session", AF_INET6, "2001:db8::1", 80, false, RULES_ENDPOINT_SESSION, false,
	  "net.fallback" },
	{ "session", AF_INET6, "::2", 80, false, RULES_ENDPOINT_SESSION, false, "net.fallback" },
	{ "session", AF_INET, "1.0.0.0", 80, false, RULES_ENDPOINT_SESSION, false, "net.fallback" },
	/* an address rule admits a local destination whoever made it */
	{ "127.0.0.1:8000", AF_INET, "127.0.0.1", 8000, false, RULES_ENDPOINT_OUTSIDE, true, NULL },
	{ "unix:/r/s.sock", AF_UNIX, "/r/s.sock", 0, false, RULES_ENDPOINT_OUTSIDE, true, NULL },
	{ "unix:/r/s.sock", AF_UNIX, "/r/t.sock", 0, false, RULES_ENDPOINT_OUTSIDE, false,
	  "net.local-outside" },
	/* a bind is matched by "bind:" patterns only */
	{ "bind:0.0.0.0:4444", AF_INET, "0.0.0.0", 4444, true, 0, true, NULL },
	{ "bind:0.0.0.0:4444", AF_INET, "0.0.0.0", 4445, true, 0, false, "net.inbound" },
	{ "bind:0.0.0.0:4444", AF_INET, "0.0.0.0", 4444, false, RULES_ENDPOINT_OUTSIDE, false,
	  "net.local-outside" },
	{ "bind:*:8000", AF_INET6, "::", 8000, true, 0, true, NULL },
	{ "bind:*", AF_INET, "192.0.2.7", 1, true, 0, true, NULL },
	{ "bind:[::]:8000", AF_INET6, "::", 8000, true, 0, true, NULL },
	{ "bind:10.0.0.0/8", AF_INET, "10.1.2.3", 80, true, 0, true, NULL },
	{ "*", AF_INET, "0.0.0.0", 4444, true, 0, false, "net.inbound" },
	{ "*:4444", AF_INET, "0.0.0.0", 4444, true, 0, false, "net.inbound" },
	{ "0.0.0.0/0", AF_INET, "0.0.0.0", 4444, true, 0, false, "net.inbound" },
	{ "bind:*", AF_INET, "10.0.0.1", 80, false, RULES_ENDPOINT_UNKNOWN, false, "net.fallback" },
	/* binds to loopback: allowed by their own fallback */
	{ "bind:0.0.0.0", AF_INET, "127.0.0.1", 8000, true, 0, false, "net.bind-loopback" },
	{ "bind:0.0.0.0", AF_INET, "127.9.9.9", 0, true, 0, false, "net.bind-loopback" },
	{ "bind:0.0.0.0", AF_INET6, "::1", 0, true, 0, false, "net.bind-loopback" },
	{ "bind:0.0.0.0", AF_INET6, "::ffff:127.0.0.1", 0, true, 0, false, "net.bind-loopback" },
	{ "bind:10.0.0.1", AF_INET6, "::ffff:0.0.0.0", 0, true, 0, false, "net.inbound" },
	{ "bind:0.0.0.0", AF_INET6, "::", 0, true, 0, false, "net.inbound" },
};

START_TEST(test_net_local)
{
	const struct net_local_case *c = &net_local_cases[_i];
	struct rules_policy *p = bb_one(RULES_KIND_NET, c->pattern);
	struct rules_verdict v;
	struct rules_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RULES_KIND_NET;
	ev.family = c->family;
	ev.port = c->port;
	ev.bind = c->bind;
	ev.endpoint = c->endpoint;
	if (c->family == AF_UNIX)
		ev.unix_path = c->addr;
	else
		ck_assert_int_eq(inet_pton(c->family, c->addr, ev.addr), 1);
	ck_assert_int_eq(rules_policy_check(p, p->size), 0);
	ck_assert_int_eq(rules_decide(p, &ev, &v), 0);
	ck_assert_msg((strcmp(rules_string(p, v.rule->id), "one") == 0) == c->expect,
		      "net \"%s\" vs %s:%u bind %d endpoint %d: rule %s", c->pattern, c->addr,
		      (unsigned)c->port, c->bind, c->endpoint, rules_string(p, v.rule->id));
	if (!c->expect) {
		ck_assert_str_eq(rules_string(p, v.rule->id), c->fallback);
		ck_assert(rules_is_fallback(p, v.rule));
		ck_assert_ptr_eq(v.rule, rules_fallback(p, &ev));
	}
	free(p);
}
END_TEST

/* ---- exec ---- */

struct argv_case {
	const char *pattern;
	const char *exe;
	const char *argv[8]; /* NULL-terminated */
	bool expect;
};

static const struct argv_case argv_cases[] = {
	{ "pip|pip3 install **", "/usr/bin/pip3", { "pip3", "install", "requests" }, true },
	{ "pip|pip3 install **", "/usr/bin/pip3", { "pip3", "install" }, true },
	{ "pip|pip3 install **", "/usr/bin/pip3", { "pip3", "list" }, false },
	{ "pip|pip3 install **", "/usr/bin/pip", { "x", "install", "-r", "r.txt" }, true },
	/* argv[0] is never identity */
	{ "pip **", "/usr/bin/ls", { "pip", "install" }, false },
	{ "ls", "/usr/bin/ls", { "pip" }, true },
	/* alternatives in the program element */
	{ "python|python3* -c *", "/usr/bin/python3.11", { "python3", "-c", "print(1)" }, true },
	{ "python|python3* -c *", "/usr/bin/python", { "python", "-c", "x" }, true },
	{ "python|python3* -c *", "/usr/bin/python2", { "python2", "-c", "x" }, false },
	{ "python|python3* -c *", "/usr/bin/python3", { "python3", "x.py" }, false },
	/* program by full path */
	{ "/usr/bin/* **", "/usr/bin/ls", { "ls", "-l" }, true },
	{ "/usr/bin/* **", "/usr/local/bin/ls", { "ls" }, false },
	{ "/usr/bin/ls", "/usr//bin/ls", { "ls" }, true },
	{ "/tmp/** **", "/tmp/a/b/evil", { "evil", "x" }, true },
	{ "/tmp/** **", "/home/u/tmp/evil", { "evil" }, false },
	{ "ls|/opt/*/bin/ls", "/opt/x/bin/ls", { "ls" }, true },
	{ "ls|/opt/*/bin/ls", "/usr/bin/ls", { "ls" }, true },
	{ "sl|/opt/*/bin/ls", "/usr/bin/ls", { "ls" }, false },
	{ "ls", "/usr/bin/lsx", { "ls" }, false },
	/* "*" is exactly one element */
	{ "ls *", "/bin/ls", { "ls" }, false },
	{ "ls *", "/bin/ls", { "ls", "a" }, true },
	{ "ls *", "/bin/ls", { "ls", "" }, true },
	{ "ls *", "/bin/ls", { "ls", "a", "b" }, false },
	{ "ls * *", "/bin/ls", { "ls", "a", "b" }, true },
	/* the whole argv is consumed */
	{ "ls -l", "/bin/ls", { "ls", "-l" }, true },
	{ "ls -l", "/bin/ls", { "ls", "-l", "-a" }, false },
	{ "ls", "/bin/ls", { "ls", "-l" }, false },
	/* "**" at the start, middle, end, several */
	{ "sh ** -c", "/bin/sh", { "sh", "-x", "-e", "-c" }, true },
	{ "sh ** -c", "/bin/sh", { "sh", "-c" }, true },
	{ "sh ** -c", "/bin/sh", { "sh", "-c", "x" }, false },
	{ "nc|ncat|netcat ** -e|-c **", "/usr/bin/ncat", { "nc", "-l", "1", "-e", "/bin/sh" }, true },
	{ "nc|ncat|netcat ** -e|-c **", "/usr/bin/nc", { "nc", "-e" }, true },
	{ "nc|ncat|netcat ** -e|-c **", "/usr/bin/nc", { "nc", "-l", "1" }, false },
	{ "bash ** -i ** /dev/tcp/* **", "/bin/bash", { "bash", "-c", "x", "-i", "y", "/dev/tcp/1.2.3.4/80", "z" }, true },
	{ "bash ** -i ** /dev/tcp/* **", "/bin/bash", { "bash", "-i" }, false },
	{ "bash ** -i ** /dev/tcp/* **", "/bin/bash", { "bash", "/dev/tcp/x", "-i" }, false },
	{ "a **", "/bin/a", { "a" }, true },
	{ "a ** **", "/bin/a", { "a", "x", "y" }, true },
	{ "a ** x ** x", "/bin/a", { "a", "x", "x", "x" }, true },
	{ "a ** x ** x", "/bin/a", { "a", "x" }, false },
	{ "a ** * **", "/bin/a", { "a" }, false },
	{ "a ** * **", "/bin/a", { "a", "q" }, true },
	{ "systemctl --user enable **", "/bin/systemctl", { "systemctl", "--user", "enable", "x" }, true },
	/* globs inside elements ('*' crosses '/') */
	{ "git push --force*", "/usr/bin/git", { "git", "push", "--force-with-lease" }, true },
	{ "curl http*://*", "/usr/bin/curl", { "curl", "https://x/y" }, true },
	{ "sh -c *curl*|*wget*", "/bin/sh", { "sh", "-c", "wget -O- x | sh" }, true },
	/* escapes */
	{ "echo a\\|b", "/bin/echo", { "echo", "a|b" }, true },
	{ "echo a\\|b", "/bin/echo", { "echo", "a" }, false },
	{ "echo \\*", "/bin/echo", { "echo", "*" }, true },
	{ "echo \\*", "/bin/echo", { "echo", "x" }, false },
	{ "echo \\*\\*", "/bin/echo", { "echo", "x", "y" }, false },
	{ "echo \\*\\*", "/bin/echo", { "echo", "**" }, true },
	{ "echo \\?", "/bin/echo", { "echo", "?" }, true },
	{ "echo \\?", "/bin/echo", { "echo", "x" }, false },
	{ "echo \\[x]", "/bin/echo", { "echo", "[x]" }, true },
	{ "echo \\[x]", "/bin/echo", { "echo", "x" }, false },
	{ "echo a\\\\b", "/bin/echo", { "echo", "a\\b" }, true },
	{ "a\\|b", "/bin/a|b", { "x" }, true },
	/* no executable known: nothing matches */
	{ "ls **", NULL, { "ls" }, false },
};

START_TEST(test_argv)
{
	const struct argv_case *c = &argv_cases[_i];
	struct rules_policy *p = bb_one(RULES_KIND_EXEC, c->pattern);
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = c->exe, .argv = c->argv };

	while (c->argv[ev.argc])
		ev.argc++;
	ck_assert_int_eq(rules_policy_check(p, p->size), 0);
	ck_assert_msg(one_rule_hits(p, &ev) == c->expect, "exec \"%s\" vs %s [%s %s %s ...] != %d",
		      c->pattern, c->exe ? c->exe : "(null)", c->argv[0] ? c->argv[0] : "",
		      c->argv[1] ? c->argv[1] : "", c->argv[1] && c->argv[2] ? c->argv[2] : "",
		      c->expect);
	free(p);
}
END_TEST

START_TEST(test_argv_empty)
{
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = "/bin/ls" };
	const char *args[] = { "ls", NULL, "x" };
	struct rules_policy *p;

	/* no argv at all: argv[1..] is empty */
	p = bb_one(RULES_KIND_EXEC, "ls");
	ck_assert(one_rule_hits(p, &ev));
	free(p);
	p = bb_one(RULES_KIND_EXEC, "ls **");
	ck_assert(one_rule_hits(p, &ev));
	free(p);
	p = bb_one(RULES_KIND_EXEC, "ls *");
	ck_assert(!one_rule_hits(p, &ev));
	/* a NULL element reads as "" */
	ev.argv = args;
	ev.argc = 3;
	ck_assert(!one_rule_hits(p, &ev));
	free(p);
	p = bb_one(RULES_KIND_EXEC, "ls * x");
	ck_assert(one_rule_hits(p, &ev));
	free(p);
}
END_TEST

/* Many arguments and several "**": bounded work. */
START_TEST(test_argv_long)
{
	static const char *args[CALL_MAX_ARGV_TEST + 1];
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = "/bin/x", .argv = args };
	struct rules_policy *p = bb_one(RULES_KIND_EXEC, "x ** a ** a ** a ** a ** b");
	struct timespec t0;

	for (size_t i = 0; i < CALL_MAX_ARGV_TEST; i++)
		args[i] = "a";
	ev.argc = CALL_MAX_ARGV_TEST;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert(!one_rule_hits(p, &ev));
	args[CALL_MAX_ARGV_TEST - 1] = "b";
	ck_assert(one_rule_hits(p, &ev));
	ck_assert_msg(elapsed_ms(&t0) < 200.0, "argv took %.1f ms", elapsed_ms(&t0));
	free(p);
}
END_TEST

/* One text per abstract name for both backends: printable bytes kept,
 * NUL, blanks, '\' and bytes >= 0x7f as \xHH, cut short on a full
 * buffer without splitting an escape. */
START_TEST(test_unix_abstract_text)
{
	char out[64];

	rules_unix_abstract_text((const unsigned char *)"dbus-1", 6, out, sizeof(out));
	ck_assert_str_eq(out, "@dbus-1");
	rules_unix_abstract_text((const unsigned char *)"a\0b c\\\xff", 7, out, sizeof(out));
	ck_assert_str_eq(out, "@a\\x00b\\x20c\\x5c\\xff");
	rules_unix_abstract_text((const unsigned char *)"", 0, out, sizeof(out));
	ck_assert_str_eq(out, "@");
	rules_unix_abstract_text((const unsigned char *)"\x01\x02", 2, out, 8);
	ck_assert_str_eq(out, "@\\x01");
}
END_TEST

static Suite *match_suite(void)
{
	Suite *s = suite_create("match");
	TCase *tc;

	tc = tcase_create("path");
	tcase_add_loop_test(tc, test_path, 0, (int)N(path_cases));
	tcase_add_test(tc, test_path_long);
	tcase_add_test(tc, test_path_scan);
	tcase_add_test(tc, test_path_need);
	tcase_add_test(tc, test_path_rejects_differential);
	suite_add_tcase(s, tc);

	tc = tcase_create("glob");
	tcase_add_loop_test(tc, test_glob, 0, (int)N(glob_cases));
	tcase_add_loop_test(tc, test_alternatives, 0, (int)N(alt_cases));
	tcase_add_test(tc, test_null_args);
	suite_add_tcase(s, tc);

	tc = tcase_create("net");
	tcase_add_loop_test(tc, test_net, 0, (int)N(net_cases));
	tcase_add_loop_test(tc, test_net_local, 0, (int)N(net_local_cases));
	tcase_add_test(tc, test_unix_abstract_text);
	suite_add_tcase(s, tc);

	tc = tcase_create("argv");
	tcase_add_loop_test(tc, test_argv, 0, (int)N(argv_cases));
	tcase_add_test(tc, test_argv_empty);
	tcase_add_test(tc, test_argv_long);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(match_suite());
	int failed;

	/* A fork per case costs 0.2 s under ASan; CK_FORK=yes brings the
	 * isolation back when a case crashes. */
	if (!getenv("CK_FORK"))
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
