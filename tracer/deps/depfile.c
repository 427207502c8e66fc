/* Parsers of the dependency files (tracer/deps/depfile.h): JSON with
 * jansson, the rest line by line or with the small TOML reader of
 * depfile-toml.c.  Each keeps to what names a package and its version and
 * skips the rest. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tracer/deps/depfile.h"
#include "tracer/deps/depfile-toml.h"

static const struct {
	const char *pattern;
	enum depfile_format f;
	const char *name;
} depfile_names[] = {
	{ "package.json", DEPFILE_PACKAGE_JSON, "package.json" },
	{ "package-lock.json", DEPFILE_PACKAGE_LOCK, "package-lock.json" },
	{ "npm-shrinkwrap.json", DEPFILE_PACKAGE_LOCK, "package-lock.json" },
	{ "yarn.lock", DEPFILE_YARN_LOCK, "yarn.lock" },
	{ "pnpm-lock.yaml", DEPFILE_PNPM_LOCK, "pnpm-lock.yaml" },
	{ "requirements*.txt", DEPFILE_REQUIREMENTS, "requirements.txt" },
	{ "pyproject.toml", DEPFILE_PYPROJECT, "pyproject.toml" },
	{ "poetry.lock", DEPFILE_POETRY_LOCK, "poetry.lock" },
	{ "uv.lock", DEPFILE_UV_LOCK, "uv.lock" },
	{ "Cargo.toml", DEPFILE_CARGO_TOML, "Cargo.toml" },
	{ "Cargo.lock", DEPFILE_CARGO_LOCK, "Cargo.lock" },
	{ "go.mod", DEPFILE_GO_MOD, "go.mod" },
	{ "go.sum", DEPFILE_GO_SUM, "go.sum" },
	{ "Gemfile.lock", DEPFILE_GEMFILE_LOCK, "Gemfile.lock" },
};

enum depfile_format depfile_format_of(const char *name)
{
	for (size_t i = 0; i < sizeof(depfile_names) / sizeof(depfile_names[0]); i++)
		if (fnmatch(depfile_names[i].pattern, name, FNM_PERIOD) == 0)
			return depfile_names[i].f;
	return DEPFILE_NONE;
}

const char *depfile_format_name(enum depfile_format f)
{
	if (f == DEPFILE_NPM_HIDDEN)
		return "node_modules/.package-lock.json";
	for (size_t i = 0; i < sizeof(depfile_names) / sizeof(depfile_names[0]); i++)
		if (depfile_names[i].f == f)
			return depfile_names[i].name;
	return "?";
}

/* ---- the list ---- */

/* NAME and VERSION of LEN bytes each (cut at DEP_TEXT_MAX). */
static void dep_addn(struct deplist *l, const char *name, size_t nlen, const char *version,
		     size_t vlen)
{
	if (!nlen)
		return;
	if (l->n == DEPLIST_MAX) {
		l->truncated = true;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].name = xstrndup(name, nlen < DEP_TEXT_MAX ? nlen : DEP_TEXT_MAX);
	l->v[l->n].version = xstrndup(version ? version : "", vlen < DEP_TEXT_MAX ? vlen :
				      DEP_TEXT_MAX);
	l->v[l->n].source = NULL;
	l->n++;
}

/* The source of the entry just added (nothing when none was). */
static void dep_last_source(struct deplist *l, size_t added_before, const char *s, size_t len)
{
	if (l->n == added_before || !len)
		return;
	free(l->v[l->n - 1].source);
	l->v[l->n - 1].source = xstrndup(s, len < DEP_TEXT_MAX ? len : DEP_TEXT_MAX);
}

void deplist_add(struct deplist *l, const char *name, const char *version)
{
	dep_addn(l, name, strlen(name), version, version ? strlen(version) : 0);
}

static int dep_cmp(const void *a, const void *b)
{
	const struct dep *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->version, y->version);
}

void deplist_sort(struct deplist *l)
{
	size_t w = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), dep_cmp);
	for (size_t i = 1; i < l->n; i++) {
		if (dep_cmp(&l->v[w], &l->v[i]) == 0) {
			free(l->v[i].name);
			free(l->v[i].version);
			free(l->v[i].source);
		} else {
			l->v[++w] = l->v[i];
		}
	}
	l->n = w + 1;
}

void deplist_free(struct deplist *l)
{
	for (size_t i = 0; l && i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].version);
		free(l->v[i].source);
	}
	if (l)
		free(l->v);
	if (l)
		memset(l, 0, sizeof(*l));
}

/* ---- lines ---- */

/* The next line of [*p, end) (without its newline) in [*b, *e); false at the end. */
static bool next_line(const char **p, const char *end, const char **b, const char **e)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*b = *p;
	*e = nl ? nl : end;
	if (*e > *b && (*e)[-1] == '\r')
		(*e)--;
	*p = nl ? nl + 1 : end;
	return true;
}

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *trim_end(const char *b, const char *e)
{
	while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return e;
}

static size_t indent_of(const char *b, const char *e)
{
	return (size_t)(skip_ws(b, e) - b);
}

/* ---- Python: PEP 508 requirements ---- */

/* NAME normalised as PEP 503 says: lower case, runs of -_. one '-'. */
static size_t py_normalise(const char *name, size_t len, char *out, size_t size)
{
	size_t w = 0;

	for (size_t i = 0; i < len && w + 1 < size; i++) {
		char c = name[i];

		if (c == '-' || c == '_' || c == '.') {
			if (w && out[w - 1] == '-')
				continue;
			c = '-';
		}
		out[w++] = (char)tolower((unsigned char)c);
	}
	out[w] = 0;
	return w;
}

/* One requirement "name[extra] >=1.0 ; marker" (a requirements line, a
 * pyproject dependency); anything else is skipped. */
static void py_requirement(struct deplist *l, const char *b, const char *e)
{
	const char *n = b, *v;
	char name[DEP_TEXT_MAX + 1];
	size_t nlen;

	b = skip_ws(b, e);
	n = b;
	if (b == e || !isalnum((unsigned char)*b))
		return;
	while (b < e && (isalnum((unsigned char)*b) || *b == '.' || *b == '_' || *b == '-'))
		b++;
	nlen = py_normalise(n, (size_t)(b - n), name, sizeof(name));
	b = skip_ws(b, e);
	if (b < e && *b == '[') {
		const char *c = memchr(b, ']', (size_t)(e - b));

		if (!c)
			return;
		b = skip_ws(c + 1, e);
	}
	v = b;
	/* The version ends at the markers and at a requirements line's options. */
	while (b < e && *b != ';' && !(*b == ' ' && b + 2 < e && b[1] == '-' && b[2] == '-'))
		b++;
	e = trim_end(v, b);
	if (v == e)
		dep_addn(l, name, nlen, "*", 1);
	else
		dep_addn(l, name, nlen, v, (size_t)(e - v));
}

static int parse_requirements(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e;

	while (next_line(&p, end, &b, &e)) {
		const char *h;

		b = skip_ws(b, e);
		/* A comment: '#' at the start or after white space. */
		for (h = b; h < e; h++)
			if (*h == '#' && (h == b || h[-1] == ' ' || h[-1] == '\t'))
				break;
		e = trim_end(b, h);
		if (e > b && e[-1] == '\\')
			e = trim_end(b, e - 1);
		/* Options (-r, -e, --index-url, a continued line's --hash) name no
		 * package of their own. */
		if (b == e || *b == '-')
			continue;
		py_requirement(l, b, e);
	}
	return 0;
}

/* ---- JSON: package.json, package-lock.json ---- */

static json_t *json_parse(const char *text, size_t len)
{
	json_error_t err;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);

	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static int parse_package_json(const char *text, size_t len, struct deplist *l)
{
	static const char *const sections[] = { "dependencies", "devDependencies",
						"optionalDependencies", "peerDependencies" };
	json_t *j = json_parse(text, len);

	if (!j)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		json_t *o = json_object_get(j, sections[i]), *v;
		const char *k;

		if (!json_is_object(o))
			continue;
		json_object_foreach(o, k, v)
			if (json_is_string(v))
				deplist_add(l, k, json_string_value(v));
	}
	json_decref(j);
	return 0;
}

/* What stands for a lockfile entry's version: "version", else where a
 * link points ("link:../x"). */
static void lock_entry(struct deplist *l, const char *name, json_t *entry)
{
	json_t *v = json_object_get(entry, "version");

	if (json_is_string(v)) {
		deplist_add(l, name, json_string_value(v));
	} else if (json_is_true(json_object_get(entry, "link"))) {
		json_t *r = json_object_get(entry, "resolved");
		char buf[DEP_TEXT_MAX + 8];

		snprintf(buf, sizeof(buf), "link:%s", json_is_string(r) ? json_string_value(r) : "");
		deplist_add(l, name, buf);
	}
}

/* lockfileVersion 1: "dependencies", nested. */
static void lock_v1(struct deplist *l, json_t *deps, unsigned depth)
{
	const char *k;
	json_t *v;

	if (!json_is_object(deps) || depth > 64)
		return;
	json_object_foreach(deps, k, v) {
		if (!json_is_object(v))
			continue;
		lock_entry(l, k, v);
		lock_v1(l, json_object_get(v, "dependencies"), depth + 1);
	}
}

static int parse_package_lock(const char *text, size_t len, struct deplist *l)
{
	json_t *j = json_parse(text, len), *pk, *v;
	const char *k;

	if (!j)
		return -EINVAL;
	pk = json_object_get(j, "packages");
	if (json_is_object(pk)) {
		/* lockfileVersion 2 and 3: "node_modules/a/node_modules/b". */
		json_object_foreach(pk, k, v) {
			const char *name = k, *nm;

			if (!*k || !json_is_object(v))
				continue; /* "": the project itself */
			while ((nm = strstr(name, "node_modules/")))
				name = nm + strlen("node_modules/");
			if (name == k)
				continue; /* a workspace's own directory */
			lock_entry(l, name, v);
		}
	} else {
		lock_v1(l, json_object_get(j, "dependencies"), 0);
	}
	json_decref(j);
	return 0;
}

/* ---- yarn.lock (v1, and Berry's YAML) ---- */

/* The package name of a yarn/pnpm spec "name@range", "@scope/name@range":
 * up to the first '@' that does not begin it (names have no other; a
 * range may: git+ssh://git@host/...). */
static size_t spec_name(const char *b, const char *e)
{
	for (const char *p = b + 1; p < e; p++)
		if (*p == '@')
			return (size_t)(p - b);
	return (size_t)(e - b);
}

bool depfile_range_is_source(const char *b, const char *e)
{
	static const char *const protocols[] = { "file:", "link:", "git", "http:", "https:",
						 "github:", "portal:", "workspace:", NULL };

	for (size_t i = 0; protocols[i]; i++)
		if ((size_t)(e - b) > strlen(protocols[i]) &&
		    strncmp(b, protocols[i], strlen(protocols[i])) == 0)
			return true;
	return false;
}

/* A quoted or bare value [b, e), unquoted. */
static void unquote(const char **b, const char **e)
{
	*b = skip_ws(*b, *e);
	*e = trim_end(*b, *e);
	if (*e - *b >= 2 && **b == '"' && (*e)[-1] == '"') {
		(*b)++;
		(*e)--;
	}
}

static int parse_yarn_lock(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e, *name = NULL, *range = NULL, *range_end = NULL;
	size_t nlen = 0, entry = SIZE_MAX;

	while (next_line(&p, end, &b, &e)) {
		const char *q;

		if (b == e || *b == '#')
			continue;
		if (*b != ' ') {
			/* An entry: "a@^1", a@^2: (the first spec names it). */
			name = NULL;
			entry = SIZE_MAX;
			e = trim_end(b, e);
			if (e == b || e[-1] != ':')
				continue;
			q = b;
			if (*q == '"')
				q++;
			b = q;
			while (q < e && *q != ',' && *q != '"' && *q != ':')
				q++;
			/* Berry: "a@npm:^1.0.0": the protocol is not the name's. */
			if (q < e && *q == ':' && q + 1 < e - 1) {
				while (q < e && *q != ',' && *q != '"')
					q++;
			}
			nlen = spec_name(b, q);
			range = b + nlen + 1 <= q ? b + nlen + 1 : q;
			range_end = q;
			if (nlen && strncmp(b, "__metadata", nlen) != 0)
				name = b;
			continue;
		}
		if (indent_of(b, e) != 2)
			continue;
		b = skip_ws(b, e);
		if (name && (size_t)(e - b) > 8 && strncmp(b, "version", 7) == 0 &&
		    (b[7] == ' ' || b[7] == ':')) {
			size_t before = l->n;

			b += 8;
			unquote(&b, &e);
			dep_addn(l, name, nlen, b, (size_t)(e - b));
			if (depfile_range_is_source(range, range_end))
				dep_last_source(l, before, range, (size_t)(range_end - range));
			entry = l->n > before ? l->n - 1 : SIZE_MAX;
			name = NULL;
		} else if (entry != SIZE_MAX && entry == l->n - 1 && (size_t)(e - b) > 9 &&
			   strncmp(b, "resolved ", 9) == 0) {
			b += 9;
			unquote(&b, &e);
			dep_last_source(l, entry, b, (size_t)(e - b));
		} else if (entry != SIZE_MAX && entry == l->n - 1 && (size_t)(e - b) > 12 &&
			   strncmp(b, "resolution: ", 12) == 0) {
			/* Berry: "name@npm:1.0.3", "name@file:../x.tgz#...". */
			b += 12;
			unquote(&b, &e);
			b += spec_name(b, e);
			if (b < e && *b == '@' && depfile_range_is_source(b + 1, e))
				dep_last_source(l, entry, b + 1, (size_t)(e - b - 1));
		}
	}
	return 0;
}

/* ---- pnpm-lock.yaml ---- */

static int parse_pnpm_lock(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e;
	bool in_packages = false, slash_versions = false;
	size_t entry = SIZE_MAX;

	while (next_line(&p, end, &b, &e)) {
		const char *k, *ke;

		if (b == e || *b == '#')
			continue;
		if (*b != ' ') {
			/* lockfileVersion 5 keys are "/name/1.0.0"; 6 and later "/name@1.0.0". */
			if (e - b > 16 && strncmp(b, "lockfileVersion:", 16) == 0) {
				k = skip_ws(b + 16, e);
				if (k < e && (*k == '\'' || *k == '"'))
					k++;
				slash_versions = k < e && *k >= '0' && *k <= '5';
			}
			in_packages = (size_t)(e - b) >= 9 && strncmp(b, "packages:", 9) == 0;
			continue;
		}
		if (in_packages && entry != SIZE_MAX && entry == l->n - 1 && indent_of(b, e) == 4) {
			/* A tarball, directory or repository's key holds its
			 * source; its version is a field (none for a directory). */
			k = skip_ws(b, e);
			if ((size_t)(e - k) > 9 && strncmp(k, "version: ", 9) == 0) {
				k += 9;
				ke = e;
				unquote(&k, &ke);
				if (ke > k) {
					free(l->v[entry].version);
					l->v[entry].version = xstrndup(k, (size_t)(ke - k) < DEP_TEXT_MAX ?
								       (size_t)(ke - k) : DEP_TEXT_MAX);
				}
			}
			continue;
		}
		if (!in_packages || indent_of(b, e) != 2)
			continue;
		entry = SIZE_MAX;
		k = skip_ws(b, e);
		ke = trim_end(k, e);
		if (ke == k || ke[-1] != ':')
			continue;
		ke--;
		if (ke > k && (*k == '\'' || *k == '"') && (ke[-1] == *k)) {
			k++;
			ke--;
		}
		if (k < ke && *k == '/')
			k++;
		/* Peer suffixes: "(react@18.0.0)" since 6, "_react@17" in 5. */
		for (const char *q = k; q < ke; q++)
			if (*q == '(' || (slash_versions && *q == '_')) {
				ke = q;
				break;
			}
		if (slash_versions) {
			const char *s = NULL;

			for (const char *q = k + 1; q < ke; q++)
				if (*q == '/')
					s = q;
			if (s)
				dep_addn(l, k, (size_t)(s - k), s + 1, (size_t)(ke - s - 1));
		} else {
			size_t n = spec_name(k, ke);

			if (n < (size_t)(ke - k)) {
				size_t before = l->n;

				dep_addn(l, k, n, k + n + 1, (size_t)(ke - k - n - 1));
				if (depfile_range_is_source(k + n + 1, ke)) {
					dep_last_source(l, before, k + n + 1, (size_t)(ke - k - n - 1));
					entry = l->n > before ? l->n - 1 : SIZE_MAX;
				}
			}
		}
	}
	return 0;
}

/* ---- go.mod, go.sum ---- */

/* The first two words of [b, e) (a "//" comment ends it). */
static bool two_words(const char *b, const char *e, const char **w1, size_t *n1,
		      const char **w2, size_t *n2)
{
	const char *c;

	for (c = b; c + 1 < e; c++)
		if (c[0] == '/' && c[1] == '/')
			break;
	if (c + 1 < e)
		e = c;
	b = skip_ws(b, e);
	*w1 = b;
	while (b < e && *b != ' ' && *b != '\t')
		b++;
	*n1 = (size_t)(b - *w1);
	b = skip_ws(b, e);
	*w2 = b;
	while (b < e && *b != ' ' && *b != '\t')
		b++;
	*n2 = (size_t)(b - *w2);
	return *n1 && *n2;
}

static int parse_go_mod(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e, *w1, *w2;
	size_t n1, n2;
	bool block = false;

	while (next_line(&p, end, &b, &e)) {
		b = skip_ws(b, e);
		e = trim_end(b, e);
		if (block) {
			if (b < e && *b == ')')
				block = false;
			else if (two_words(b, e, &w1, &n1, &w2, &n2))
				dep_addn(l, w1, n1, w2, n2);
			continue;
		}
		if ((size_t)(e - b) < 8 || strncmp(b, "require", 7) != 0 ||
		    (b[7] != ' ' && b[7] != '\t' && b[7] != '('))
			continue;
		b = skip_ws(b + 7, e);
		if (b < e && *b == '(')
			block = true;
		else if (two_words(b, e, &w1, &n1, &w2, &n2))
			dep_addn(l, w1, n1, w2, n2);
	}
	return 0;
}

static int parse_go_sum(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e, *w1, *w2;
	size_t n1, n2;

	while (next_line(&p, end, &b, &e)) {
		if (!two_words(b, e, &w1, &n1, &w2, &n2))
			continue;
		/* "v1.2.3/go.mod": the module's go.mod alone, the same version. */
		if (n2 > 7 && memcmp(w2 + n2 - 7, "/go.mod", 7) == 0)
			n2 -= 7;
		dep_addn(l, w1, n1, w2, n2);
	}
	return 0;
}

/* ---- Gemfile.lock ---- */

static int parse_gemfile_lock(const char *p, const char *end, struct deplist *l)
{
	const char *b, *e;
	bool gems = false, specs = false;

	while (next_line(&p, end, &b, &e)) {
		size_t in = indent_of(b, e);
		const char *n, *v, *ve;

		e = trim_end(b, e);
		if (b == e)
			continue;
		if (in == 0) {
			/* The sections that list gems: GEM, GIT, PATH (and PLUGIN SOURCE). */
			gems = (e - b == 3 && memcmp(b, "GEM", 3) == 0) ||
			       (e - b == 3 && memcmp(b, "GIT", 3) == 0) ||
			       (e - b == 4 && memcmp(b, "PATH", 4) == 0) ||
			       (e - b == 13 && memcmp(b, "PLUGIN SOURCE", 13) == 0);
			specs = false;
			continue;
		}
		if (in == 2) {
			specs = gems && e - b == 8 && memcmp(b + 2, "specs:", 6) == 0;
			continue;
		}
		/* "    name (1.2.3)"; six spaces: what the gem depends on. */
		if (!specs || in != 4)
			continue;
		n = b + 4;
		v = memchr(n, ' ', (size_t)(e - n));
		if (!v || v + 2 >= e || v[1] != '(' || e[-1] != ')')
			continue;
		ve = e - 1;
		dep_addn(l, n, (size_t)(v - n), v + 2, (size_t)(ve - v - 2));
	}
	return 0;
}

/* ---- TOML: pyproject.toml, Cargo.toml, the [[package]] lockfiles ---- */

struct toml_deps {
	enum depfile_format f;
	struct deplist *l;
	/* A [[package]] being read: its name and version so far. */
	char name[DEP_TEXT_MAX + 1];
	char version[DEP_TEXT_MAX + 1];
	bool in_package;
};

static void toml_flush(struct toml_deps *t)
{
	if (t->in_package && t->name[0])
		deplist_add(t->l, t->name, t->version);
	t->in_package = false;
	t->name[0] = t->version[0] = 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Whether TABLE lists Cargo dependencies: [dependencies],
 * [dev-dependencies], [build-dependencies], [target.X.dependencies],
 * [workspace.dependencies]. */
static bool cargo_deps_table(const char *table)
{
	return strcmp(table, "dependencies") == 0 || strcmp(table, "dev-dependencies") == 0 ||
	       strcmp(table, "build-dependencies") == 0 ||
	       strcmp(table, "workspace.dependencies") == 0 ||
	       (strncmp(table, "target.", 7) == 0 &&
		(ends_with(table, ".dependencies") || ends_with(table, ".dev-dependencies") ||
		 ends_with(table, ".build-dependencies")));
}

static bool poetry_deps_table(const char *table)
{
	return strcmp(table, "tool.poetry.dependencies") == 0 ||
	       strcmp(table, "tool.poetry.dev-dependencies") == 0 ||
	       (strncmp(table, "tool.poetry.group.", 18) == 0 &&
		ends_with(table, ".dependencies"));
}

/* A dependency written "name = <VALUE>" (Cargo, Poetry): a version
 * string, or an inline table whose version, git, path or url stands for it. */
static void toml_named_dep(struct toml_deps *t, const char *name, const struct toml_value *v)
{
	static const char *const keys[] = { "version", "git", "path", "url" };
	char buf[DEP_TEXT_MAX + 8];

	if (v->type == TOML_STRING) {
		deplist_add(t->l, name, v->text);
		return;
	}
	if (v->type != TOML_INLINE_TABLE)
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char got[DEP_TEXT_MAX + 1];

		if (!toml_inline_get(v, keys[i], got, sizeof(got)))
			continue;
		if (i == 0)
			snprintf(buf, sizeof(buf), "%s", got);
		else
			snprintf(buf, sizeof(buf), "%s:%s", keys[i], got);
		deplist_add(t->l, name, buf);
		return;
	}
	deplist_add(t->l, name, "*");
}

static void toml_requirements(struct toml_deps *t, const struct toml_value *v)
{
	char s[1024];
	size_t at = 0;

	if (v->type != TOML_ARRAY)
		return;
	while (toml_array_next_string(v, &at, s, sizeof(s)))
		py_requirement(t->l, s, s + strlen(s));
}

static void toml_key(void *arg, const char *table, bool array_table, const char *key,
		     const struct toml_value *v)
{
	struct toml_deps *t = arg;
	const char *dot;
	char name[DEP_TEXT_MAX + 1];

	if (!key) {
		/* A new table: a [[package]] ends. */
		toml_flush(t);
		t->in_package = array_table && strcmp(table, "package") == 0;
		return;
	}
	switch (t->f) {
	case DEPFILE_POETRY_LOCK:
	case DEPFILE_UV_LOCK:
	case DEPFILE_CARGO_LOCK:
		if (!t->in_package || v->type != TOML_STRING)
			return;
		if (strcmp(key, "name") == 0)
			snprintf(t->name, sizeof(t->name), "%s", v->text);
		else if (strcmp(key, "version") == 0)
			snprintf(t->version, sizeof(t->version), "%s", v->text);
		return;
	case DEPFILE_CARGO_TOML:
		if (cargo_deps_table(table)) {
			/* "serde.version = ..." is serde's version. */
			dot = strchr(key, '.');
			if (!dot) {
				toml_named_dep(t, key, v);
			} else if (strcmp(dot + 1, "version") == 0 && v->type == TOML_STRING) {
				snprintf(name, sizeof(name), "%.*s", (int)(dot - key), key);
				deplist_add(t->l, name, v->text);
			}
			return;
		}
		/* [dependencies.serde] version = "1" */
		dot = strrchr(table, '.');
		if (dot && v->type == TOML_STRING && strcmp(key, "version") == 0) {
			char parent[256];

			snprintf(parent, sizeof(parent), "%.*s", (int)(dot - table), table);
			if (cargo_deps_table(parent))
				deplist_add(t->l, dot + 1, v->text);
		}
		return;
	case DEPFILE_PYPROJECT:
		if (strcmp(table, "project") == 0 && strcmp(key, "dependencies") == 0)
			toml_requirements(t, v);
		else if (strcmp(table, "project.optional-dependencies") == 0 ||
			 strcmp(table, "dependency-groups") == 0)
			toml_requirements(t, v);
		else if (poetry_deps_table(table) && strcmp(key, "python") != 0) {
			size_t n = py_normalise(key, strlen(key), name, sizeof(name));

			if (n)
				toml_named_dep(t, name, v);
		}
		return;
	default:
		return;
	}
}

static int parse_toml(enum depfile_format f, const char *text, size_t len, struct deplist *l)
{
	struct toml_deps t = { .f = f, .l = l };
	int rc = toml_walk(text, len, toml_key, &t);

	toml_flush(&t);
	return rc;
}

/* ---- the entry ---- */

int depfile_parse(enum depfile_format f, const char *text, size_t len, struct deplist *out)
{
	const char *end = text + len;
	int rc;

	if (len > DEPFILE_MAX_BYTES)
		return -EFBIG;
	/* Text files: a NUL byte says this one is not. */
	if (memchr(text, 0, len))
		return -EINVAL;
	switch (f) {
	case DEPFILE_PACKAGE_JSON:
		rc = parse_package_json(text, len, out);
		break;
	case DEPFILE_PACKAGE_LOCK:
	case DEPFILE_NPM_HIDDEN:
		rc = parse_package_lock(text, len, out);
		break;
	case DEPFILE_YARN_LOCK:
		rc = parse_yarn_lock(text, end, out);
		break;
	case DEPFILE_PNPM_LOCK:
		rc = parse_pnpm_lock(text, end, out);
		break;
	case DEPFILE_REQUIREMENTS:
		rc = parse_requirements(text, end, out);
		break;
	case DEPFILE_PYPROJECT:
	case DEPFILE_POETRY_LOCK:
	case DEPFILE_UV_LOCK:
	case DEPFILE_CARGO_TOML:
	case DEPFILE_CARGO_LOCK:
		rc = parse_toml(f, text, len, out);
		break;
	case DEPFILE_GO_MOD:
		rc = parse_go_mod(text, end, out);
		break;
	case DEPFILE_GO_SUM:
		rc = parse_go_sum(text, end, out);
		break;
	case DEPFILE_GEMFILE_LOCK:
		rc = parse_gemfile_lock(text, end, out);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc < 0)
		deplist_free(out);
	else
		deplist_sort(out);
	return rc;
}

/* ---- the diff ---- */

/* The versions of the name at L->v[*i] joined, *i moved past them. */
static char *versions_of(const struct deplist *l, size_t *i)
{
	const char *name = l->v[*i].name;
	size_t len = 0, j;
	char *s;

	for (j = *i; j < l->n && strcmp(l->v[j].name, name) == 0; j++)
		len += strlen(l->v[j].version) + 2;
	s = xmalloc(len + 1);
	s[0] = 0;
	len = 0;
	for (j = *i; j < l->n && strcmp(l->v[j].name, name) == 0; j++) {
		size_t n = strlen(l->v[j].version);

		if (len) {
			memcpy(s + len, ", ", 2);
			len += 2;
		}
		memcpy(s + len, l->v[j].version, n + 1);
		len += n;
	}
	*i = j;
	return s;
}

static void depdiff_push(struct depdiff *d, size_t *cap, const char *name, char *from, char *to)
{
	if (d->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		d->v = xrealloc(d->v, *cap * sizeof(*d->v));
	}
	d->v[d->n].name = xstrdup(name);
	d->v[d->n].from = from;
	d->v[d->n].to = to;
	d->n++;
	if (!from)
		d->added++;
	else if (!to)
		d->removed++;
	else
		d->changed++;
}

void depdiff_make(const struct deplist *old, const struct deplist *new, struct depdiff *d)
{
	static const struct deplist none;
	size_t i = 0, j = 0, cap = 0;

	memset(d, 0, sizeof(*d));
	old = old ? old : &none;
	new = new ? new : &none;
	while (i < old->n || j < new->n) {
		int c = i == old->n ? 1 : j == new->n ? -1 :
			strcmp(old->v[i].name, new->v[j].name);
		const char *name = c <= 0 ? old->v[i].name : new->v[j].name;
		char *from = c <= 0 ? versions_of(old, &i) : NULL;
		char *to = c >= 0 ? versions_of(new, &j) : NULL;

		if (from && to && strcmp(from, to) == 0) {
			free(from);
			free(to);
			continue;
		}
		/* name belongs to a list whose entry versions_of() moved past,
		 * but the list itself is untouched: it is still valid. */
		depdiff_push(d, &cap, name, from, to);
	}
}

void depdiff_free(struct depdiff *d)
{
	for (size_t i = 0; d && i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].from);
		free(d->v[i].to);
	}
	if (d) {
		free(d->v);
		memset(d, 0, sizeof(*d));
	}
}
