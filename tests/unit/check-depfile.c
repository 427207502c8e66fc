/* Unit tests of tracer/deps/depfile.c: each format's parser on what the
 * tools write and on malformed, hostile text, and the diff. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracer/deps/depfile.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The list as "name=version;..." ("name=version<source>;" where the
 * lockfile names a source). */
static char *joined(const struct deplist *l)
{
	static char buf[8192];
	size_t w = 0;

	buf[0] = 0;
	for (size_t i = 0; i < l->n && w < sizeof(buf); i++)
		w += (size_t)snprintf(buf + w, sizeof(buf) - w, "%s=%s%s%s%s;", l->v[i].name,
				      l->v[i].version, l->v[i].source ? "<" : "",
				      l->v[i].source ? l->v[i].source : "",
				      l->v[i].source ? ">" : "");
	return buf;
}

struct parse_case {
	const char *file;
	const char *text;
	int rc;
	const char *want;
};

static const struct parse_case parse_cases[] = {
	{ "package.json",
	  "{\"name\":\"x\",\"dependencies\":{\"left-pad\":\"^1.3.0\",\"b\":\"file:../b\"},"
	  "\"devDependencies\":{\"jest\":\"29\"},\"scripts\":{\"test\":\"x\"}}",
	  0, "b=file:../b;jest=29;left-pad=^1.3.0;" },
	{ "package.json", "{\"dependencies\":[1,2]}", 0, "" },
	{ "package.json", "{\"dependencies\":{\"a\":1}", -EINVAL, "" },
	{ "package.json", "[]", -EINVAL, "" },
	{ "package.json", "{\"dependencies\":{\"a\":\"1\",\"a\":\"2\"}}", -EINVAL, "" },
	{ "package-lock.json",
	  "{\"lockfileVersion\":3,\"packages\":{\"\":{\"name\":\"x\"},"
	  "\"node_modules/a\":{\"version\":\"1.0.0\"},"
	  "\"node_modules/a/node_modules/@s/b\":{\"version\":\"2.0.0\"},"
	  "\"node_modules/@s/b\":{\"version\":\"3.0.0\"},"
	  "\"node_modules/l\":{\"link\":true,\"resolved\":\"../l\"},"
	  "\"packages/w\":{\"version\":\"0.1.0\"}}}",
	  0, "@s/b=2.0.0;@s/b=3.0.0;a=1.0.0;l=link:../l;" },
	{ "npm-shrinkwrap.json",
	  "{\"lockfileVersion\":1,\"dependencies\":{\"a\":{\"version\":\"1.0.0\","
	  "\"dependencies\":{\"b\":{\"version\":\"2.0.0\"}}}}}",
	  0, "a=1.0.0;b=2.0.0;" },
	{ "package-lock.json", "{\"packages\":{\"node_modules/a\":{\"version\":", -EINVAL, "" },
	{ "yarn.lock",
	  "# yarn lockfile v1\n\n\"@s/a@^1.0.0\", \"@s/a@^1.1.0\":\n  version \"1.2.0\"\n"
	  "  resolved \"https://r/a.tgz\"\n  dependencies:\n    b \"^2\"\n\n"
	  "b@^2:\n  version \"2.0.1\"\n",
	  0, "@s/a=1.2.0<https://r/a.tgz>;b=2.0.1;" },
	{ "yarn.lock",
	  "# yarn lockfile v1\n\n\"d@file:../src/d\":\n  version \"2.0.0\"\n\n"
	  "\"g@git+ssh://git@h.example/g.git\":\n  version \"3.1.4\"\n"
	  "  resolved \"git+ssh://git@h.example/g.git#2200a7f\"\n",
	  0, "d=2.0.0<file:../src/d>;g=3.1.4<git+ssh://git@h.example/g.git#2200a7f>;" },
	{ "yarn.lock",
	  "__metadata:\n  version: 6\n\n\"a@npm:^1.0.0\":\n  version: 1.0.3\n  resolution: \"a@npm:1.0.3\"\n",
	  0, "a=1.0.3;" },
	{ "yarn.lock", "garbage\n  version\n:\n\"\n", 0, "" },
	{ "pnpm-lock.yaml",
	  "lockfileVersion: '9.0'\n\nimporters:\n  .:\n    dependencies:\n      a:\n"
	  "packages:\n\n  a@1.0.0:\n    resolution: {integrity: x}\n"
	  "  '@s/b@2.0.0':\n    resolution: {}\n\nsnapshots:\n\n  c@3.0.0:\n    x: 1\n",
	  0, "@s/b=2.0.0;a=1.0.0;" },
	{ "pnpm-lock.yaml",
	  "lockfileVersion: '9.0'\n\npackages:\n\n"
	  "  b@file:../b-0.1.0.tgz:\n    resolution: {integrity: x, tarball: file:../b-0.1.0.tgz}\n"
	  "    version: 0.1.0\n\n"
	  "  d@file:../src/d:\n    resolution: {directory: ../src/d, type: directory}\n\n"
	  "  g@git+ssh://git@h.example/g.git#2200a7f:\n    resolution: {commit: 2200a7f}\n"
	  "    version: 3.1.4\n",
	  0, "b=0.1.0<file:../b-0.1.0.tgz>;d=file:../src/d<file:../src/d>;"
	  "g=3.1.4<git+ssh://git@h.example/g.git#2200a7f>;" },
	{ "pnpm-lock.yaml",
	  "lockfileVersion: '6.0'\npackages:\n  /a@1.0.0(react@18.0.0):\n    r: 1\n",
	  0, "a=1.0.0;" },
	{ "pnpm-lock.yaml",
	  "lockfileVersion: 5.4\npackages:\n  /a/1.0.0_react@17.0.0:\n  /@s/b/2.0.0:\n",
	  0, "@s/b=2.0.0;a=1.0.0;" },
	{ "requirements-dev.txt",
	  "# pinned\nrequests==2.31.0  # http\nFlask_Cors[x] >=4,<5 ; python_version>'3'\n"
	  "-r other.txt\n--index-url https://x\nnumpy \\\n    --hash=sha256:ab\n"
	  "pkg @ https://example.org/pkg.whl\n-e git+https://g/x#egg=x\n",
	  0, "flask-cors=>=4,<5;numpy=*;pkg=@ https://example.org/pkg.whl;requests===2.31.0;" },
	{ "requirements.txt", "\x01\x02\n==\n[x]\n", 0, "" },
	{ "pyproject.toml",
	  "[project]\nname = \"x\"\ndependencies = [\n  \"requests>=2\", # c\n  'attrs',\n]\n"
	  "[project.optional-dependencies]\ntest = [\"pytest==8.0\"]\n"
	  "[tool.poetry.dependencies]\npython = \"^3.10\"\nDjango = \"^5\"\n"
	  "mylib = { git = \"https://g/mylib.git\", rev = \"x\" }\n"
	  "[tool.poetry.group.dev.dependencies]\nruff = {version = \"0.4\"}\n",
	  0, "attrs=*;django=^5;mylib=git:https://g/mylib.git;pytest===8.0;requests=>=2;ruff=0.4;" },
	{ "pyproject.toml", "[project]\ndependencies = [\"a\"\n", -EINVAL, "" },
	{ "pyproject.toml", "[project\n", -EINVAL, "" },
	{ "pyproject.toml", "just words\n", -EINVAL, "" },
	{ "poetry.lock",
	  "[[package]]\nname = \"a\"\nversion = \"1.0\"\ndescription = \"\"\"multi\n[[package]]\n"
	  "\"\"\"\n\n[package.dependencies]\nb = \">=1\"\n\n[[package]]\nname = \"b\"\nversion = \"2.0\"\n"
	  "\n[metadata]\nlock-version = \"2.0\"\n",
	  0, "a=1.0;b=2.0;" },
	{ "uv.lock",
	  "version = 1\n[[package]]\nname = \"c\"\nversion = \"3.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
	  0, "c=3.1;" },
	{ "Cargo.toml",
	  "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1\"\n"
	  "tokio = { version = \"1.3\", features = [\"full\"] }\nloc = { path = \"../loc\" }\n"
	  "rand.version = \"0.8\"\n[dev-dependencies.proptest]\nversion = \"1.4\"\n"
	  "[target.'cfg(unix)'.dependencies]\nlibc = '0.2'\n",
	  0, "libc=0.2;loc=path:../loc;proptest=1.4;rand=0.8;serde=1;tokio=1.3;" },
	{ "Cargo.lock",
	  "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.200\"\n"
	  "dependencies = [\n \"serde_derive\",\n]\n\n[[package]]\nname = \"serde_derive\"\nversion = \"1.0.200\"\n",
	  0, "serde=1.0.200;serde_derive=1.0.200;" },
	{ "Cargo.lock", "[[package]\nname = \"a\"\n", -EINVAL, "" },
	{ "Cargo.lock", "[[package]]\nname = \"a\nversion = \"1\"\n", -EINVAL, "" },
	{ "go.mod",
	  "module example.com/x\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n"
	  "require (\n\tgithub.com/a/b v1.2.3 // indirect\n\tgithub.com/c/d v0.0.0-2024\n)\n"
	  "replace github.com/a/b => ../b\n",
	  0, "github.com/a/b=v1.2.3;github.com/c/d=v0.0.0-2024;golang.org/x/text=v0.14.0;" },
	{ "go.sum",
	  "github.com/a/b v1.2.3 h1:abc=\ngithub.com/a/b v1.2.3/go.mod h1:def=\nbad\n",
	  0, "github.com/a/b=v1.2.3;" },
	{ "Gemfile.lock",
	  "GIT\n  remote: https://g/x.git\n  specs:\n    x (0.1.0)\n\nGEM\n  remote: https://rubygems.org/\n"
	  "  specs:\n    rack (3.0.8)\n    rails (7.1.0)\n      rack (>= 2)\n    nokogiri (1.16.0-x86_64-linux)\n\n"
	  "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  rails\n",
	  0, "nokogiri=1.16.0-x86_64-linux;rack=3.0.8;rails=7.1.0;x=0.1.0;" },
	{ "Gemfile.lock", "GEM\n  specs:\n    broken (\n    (x)\n", 0, "" },
};

START_TEST(test_parse)
{
	const struct parse_case *c = &parse_cases[_i];
	enum depfile_format f = depfile_format_of(c->file);
	struct deplist l = { 0 };
	int rc;

	ck_assert_int_ne(f, DEPFILE_NONE);
	rc = depfile_parse(f, c->text, strlen(c->text), &l);
	ck_assert_msg(rc == c->rc, "%s case %d: rc %d, want %d", c->file, _i, rc, c->rc);
	ck_assert_msg(strcmp(joined(&l), c->want) == 0, "%s case %d: got '%s', want '%s'", c->file,
		      _i, joined(&l), c->want);
	deplist_free(&l);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_int_eq(depfile_format_of("requirements.txt"), DEPFILE_REQUIREMENTS);
	ck_assert_int_eq(depfile_format_of("requirements-dev.txt"), DEPFILE_REQUIREMENTS);
	ck_assert_int_eq(depfile_format_of("requirements.in"), DEPFILE_NONE);
	ck_assert_int_eq(depfile_format_of("package.json.bak"), DEPFILE_NONE);
	ck_assert_int_eq(depfile_format_of("Cargo.lock"), DEPFILE_CARGO_LOCK);
	ck_assert_str_eq(depfile_format_name(DEPFILE_REQUIREMENTS), "requirements.txt");
}
END_TEST

/* Every prefix of every case, and each with its bytes flipped: no crash,
 * no read past the text (run under the sanitizers in CI). */
START_TEST(test_hostile)
{
	const struct parse_case *c = &parse_cases[_i];
	enum depfile_format f = depfile_format_of(c->file);
	size_t len = strlen(c->text);

	for (size_t cut = 0; cut <= len; cut++) {
		char *t = malloc(cut ? cut : 1);
		struct deplist l = { 0 };

		memcpy(t, c->text, cut);
		depfile_parse(f, t, cut, &l);
		deplist_free(&l);
		if (cut) {
			t[cut - 1] ^= 0x5a;
			depfile_parse(f, t, cut, &l);
			deplist_free(&l);
		}
		free(t);
	}
}
END_TEST

START_TEST(test_bounds)
{
	struct deplist l = { 0 };
	size_t n = DEPLIST_MAX + 10, len = n * 8;
	char *t = malloc(len + 1), *w = t;
	char longname[DEP_TEXT_MAX * 3];

	/* More packages than the bound: kept up to it, said so. */
	for (size_t i = 0; i < n; i++)
		w += sprintf(w, "p%06zu\n", i);
	ck_assert_int_eq(depfile_parse(DEPFILE_REQUIREMENTS, t, (size_t)(w - t), &l), 0);
	ck_assert_uint_eq(l.n, DEPLIST_MAX);
	ck_assert(l.truncated);
	deplist_free(&l);
	free(t);
	/* A NUL byte: not a text file. */
	ck_assert_int_eq(depfile_parse(DEPFILE_GO_SUM, "a v1 h\0x", 8, &l), -EINVAL);
	/* Past the byte bound: not read. */
	ck_assert_int_eq(depfile_parse(DEPFILE_GO_SUM, "", DEPFILE_MAX_BYTES + 1, &l), -EFBIG);
	/* A name longer than the bound is cut to it. */
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	ck_assert_int_eq(depfile_parse(DEPFILE_REQUIREMENTS, longname, strlen(longname), &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(strlen(l.v[0].name), DEP_TEXT_MAX);
	deplist_free(&l);
	/* Nesting deeper than the JSON reader goes: refused, no crash. */
	{
		size_t depth = 100000;
		char *deep = malloc(depth * 2 + 1);

		memset(deep, '[', depth);
		memset(deep + depth, ']', depth);
		ck_assert_int_eq(depfile_parse(DEPFILE_PACKAGE_LOCK, deep, depth * 2, &l), -EINVAL);
		memset(deep, '{', depth);
		ck_assert_int_eq(depfile_parse(DEPFILE_CARGO_TOML, deep, depth, &l), -EINVAL);
		free(deep);
	}
}
END_TEST

START_TEST(test_diff)
{
	const char *a = "{\"packages\":{\"node_modules/a\":{\"version\":\"1.0.0\"},"
			"\"node_modules/b\":{\"version\":\"1.0.0\"},"
			"\"node_modules/c\":{\"version\":\"1.0.0\"},"
			"\"node_modules/x/node_modules/c\":{\"version\":\"0.9.0\"}}}";
	const char *b = "{\"packages\":{\"node_modules/a\":{\"version\":\"1.0.0\"},"
			"\"node_modules/c\":{\"version\":\"1.0.0\"},"
			"\"node_modules/d\":{\"version\":\"4.0.0\"},"
			"\"node_modules/x/node_modules/c\":{\"version\":\"0.9.1\"}}}";
	struct deplist la = { 0 }, lb = { 0 };
	struct depdiff d;

	ck_assert_int_eq(depfile_parse(DEPFILE_PACKAGE_LOCK, a, strlen(a), &la), 0);
	ck_assert_int_eq(depfile_parse(DEPFILE_PACKAGE_LOCK, b, strlen(b), &lb), 0);
	depdiff_make(&la, &lb, &d);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_uint_eq(d.added, 1);
	ck_assert_uint_eq(d.removed, 1);
	ck_assert_uint_eq(d.changed, 1);
	ck_assert_str_eq(d.v[0].name, "b");
	ck_assert_str_eq(d.v[0].from, "1.0.0");
	ck_assert_ptr_null(d.v[0].to);
	ck_assert_str_eq(d.v[1].name, "c");
	ck_assert_str_eq(d.v[1].from, "0.9.0, 1.0.0");
	ck_assert_str_eq(d.v[1].to, "0.9.1, 1.0.0");
	ck_assert_str_eq(d.v[2].name, "d");
	ck_assert_ptr_null(d.v[2].from);
	ck_assert_str_eq(d.v[2].to, "4.0.0");
	depdiff_free(&d);
	/* Against nothing: all added. */
	depdiff_make(NULL, &lb, &d);
	ck_assert_uint_eq(d.added, 3);
	ck_assert_uint_eq(d.n, 3);
	depdiff_free(&d);
	depdiff_make(&la, &la, &d);
	ck_assert_uint_eq(d.n, 0);
	depdiff_free(&d);
	deplist_free(&la);
	deplist_free(&lb);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("depfile");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_parse, 0, (int)N(parse_cases));
	tcase_add_test(tc, test_names);
	tcase_add_loop_test(tc, test_hostile, 0, (int)N(parse_cases));
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_diff);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
