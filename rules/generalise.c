#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/utf8.h"
#include "rules/generalise.h"

/* The length of D as an anchor: absolute, no trailing '/'; 0 for none
 * (relative, or "/" itself). */
static size_t generalise_dir_len(const char *d)
{
	size_t n;

	if (!d || d[0] != '/')
		return 0;
	n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	return n > 1 ? n : 0;
}

int rules_anchors_set(struct rules_anchors *a, const char *root, const char *tmpdir,
		      const char *home)
{
	const char *in[RULES_ANCHORS] = { root, tmpdir, home };

	for (int i = 0; i < RULES_ANCHORS; i++) {
		size_t n = generalise_dir_len(in[i]);

		a->dir[i] = n ? strndup(in[i], n) : NULL;
		if (n && !a->dir[i]) {
			rules_anchors_free(a);
			return -ENOMEM;
		}
	}
	return 0;
}

void rules_anchors_free(struct rules_anchors *a)
{
	for (int i = 0; i < RULES_ANCHORS; i++) {
		free(a->dir[i]);
		a->dir[i] = NULL;
	}
}

const char *rules_anchor_var(enum rules_anchor k)
{
	switch (k) {
	case RULES_ANCHOR_ROOT: return "${ROOT}";
	case RULES_ANCHOR_TMPDIR: return "${TMPDIR}";
	case RULES_ANCHOR_HOME: return "${HOME}";
	default: return "";
	}
}

bool rules_path_under(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	return n && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int rules_anchor_of(const struct rules_anchors *a, const char *path)
{
	int best = -1;
	size_t best_len = 0;

	for (int i = 0; i < RULES_ANCHORS; i++) {
		const char *d = a->dir[i];

		if (rules_path_under(path, d) && strlen(d) > best_len) {
			best = i;
			best_len = strlen(d);
		}
	}
	return best;
}

char *rules_literal(const char *prefix, const char *s, bool glob, bool alt)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t np = strlen(prefix);
	char *out = malloc(np + 2 * (size_t)(end - p) + 1), *w;

	if (!out)
		return NULL;
	memcpy(out, prefix, np);
	w = out + np;
	while (p < end) {
		size_t n = utf8_len(p, end);

		if (!n) {
			/* Policy text is JSON, which cannot hold this byte: a
			 * glob matches it (any one byte), a literal cannot. */
			*w++ = glob ? '?' : '_';
			p++;
			continue;
		}
		if (*p == '$')
			*w++ = '$';
		else if ((glob && strchr("\\*?[]", *p)) || (alt && *p == '|'))
			*w++ = '\\';
		memcpy(w, p, n);
		w += n;
		p += n;
	}
	*w = '\0';
	return out;
}

char *rules_path_literal(const struct rules_anchors *a, const char *path, bool glob)
{
	int k = a ? rules_anchor_of(a, path) : -1;

	if (k < 0)
		return rules_literal("", path, glob, false);
	return rules_literal(rules_anchor_var((enum rules_anchor)k), path + strlen(a->dir[k]), glob,
			     false);
}

/* Directories whose content is regenerated at will: a denied write there
 * is best admitted by the whole directory one level below the cache. */
static bool generalise_cache_component(const char *c, size_t n)
{
	static const char *const names[] = {
		".cache", "cache", "caches", ".npm", ".yarn", ".pnpm-store", ".cargo", ".rustup",
		".m2", ".gradle", ".ivy2", ".sbt", ".nuget", ".pub-cache", ".bundle", ".gem",
		"node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", ".nox",
		".venv", "venv", "virtualenvs", "site-packages", "build", "_build", "target",
		"dist", "out", ".next", ".turbo", ".ccache", "go-build", "pkg",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(names[i], c, n) == 0)
			return true;
	return false;
}

/* True when DIR holds one of A's directories (or is one): a directory
 * of the session itself, never a cache to admit whole. */
static bool generalise_holds_anchor(const struct rules_anchors *a, const char *dir)
{
	for (int k = 0; a && k < RULES_ANCHORS; k++)
		if (a->dir[k] && rules_path_under(a->dir[k], dir))
			return true;
	return false;
}

/* The pattern of a write: everything beneath <cache>/<next> for the
 * first cache-like component that has one below it (beneath <cache> for
 * a file directly in it) and holds none of the session's own directories
 * (a build dir "_build" above the project is no cache), else the path
 * itself. */
static char *generalise_write(const struct rules_anchors *a, const char *path)
{
	const char *p = path, *c;

	while (*p == '/') {
		c = p + 1;
		p = strchr(c, '/');
		if (!p)
			break;
		if (generalise_cache_component(c, (size_t)(p - c))) {
			const char *end = strchr(p + 1, '/');
			char *dir = strndup(path, (size_t)((end ? end : p) - path)), *lit, *out = NULL;

			if (!dir)
				return NULL;
			if (generalise_holds_anchor(a, dir)) {
				free(dir);
				continue;
			}
			lit = rules_path_literal(a, dir, true);
			free(dir);
			if (lit && asprintf(&out, "%s/**", lit) < 0)
				out = NULL;
			free(lit);
			return out;
		}
	}
	return rules_path_literal(a, path, true);
}

/* A destination as a net pattern: the host name and port when the event
 * carries one and BY_NAME, else the address and port; unix:PATH. */
static char *generalise_net(const struct rules_event *ev, bool by_name)
{
	char addr[INET6_ADDRSTRLEN], *out = NULL;

	if (ev->family == AF_UNIX)
		return ev->unix_path ? rules_literal("unix:", ev->unix_path, true, false) : NULL;
	if (by_name && ev->host && *ev->host) {
		if (asprintf(&out, "%s:%u", ev->host, ev->port) < 0)
			return NULL;
		return out;
	}
	if ((ev->family != AF_INET && ev->family != AF_INET6) ||
	    !inet_ntop(ev->family, ev->addr, addr, sizeof(addr)))
		return NULL;
	if (asprintf(&out, ev->family == AF_INET6 ? "[%s]:%u" : "%s:%u", addr, ev->port) < 0)
		return NULL;
	return out;
}

char *rules_exec_literal(const struct rules_anchors *a, const char *exe)
{
	int k = a ? rules_anchor_of(a, exe) : -1;

	if (k < 0)
		return rules_literal("", exe, true, true);
	return rules_literal(rules_anchor_var((enum rules_anchor)k), exe + strlen(a->dir[k]), true,
			     true);
}

char *rules_generalise(const struct rules_anchors *a, enum rules_kind kind,
		       const struct rules_event *ev)
{
	switch (kind) {
	case RULES_KIND_WRITE:
		return ev->path ? generalise_write(a, ev->path) : NULL;
	case RULES_KIND_READ:
		return ev->path ? rules_path_literal(a, ev->path, true) : NULL;
	case RULES_KIND_EXEC:
		return ev->exe ? rules_exec_literal(a, ev->exe) : NULL;
	case RULES_KIND_NET:
		return generalise_net(ev, true);
	default:
		return NULL;
	}
}

char *rules_exact(const struct rules_anchors *a, enum rules_kind kind,
		  const struct rules_event *ev)
{
	switch (kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		return ev->path ? rules_path_literal(a, ev->path, true) : NULL;
	case RULES_KIND_EXEC:
		return ev->exe ? rules_exec_literal(a, ev->exe) : NULL;
	case RULES_KIND_NET:
		return generalise_net(ev, false);
	default:
		return NULL;
	}
}
