/* What the session installed (tracer/deps/installed.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "tracer/deps/installed.h"

#define INSTALLS_META_MAX (1u << 20)

static bool remembered(const struct installs *in, const char *dir, size_t len)
{
	/* From the last: a package's files are written one after another. */
	for (size_t i = in->n_dirs; i-- > 0;)
		if (strncmp(in->dirs[i], dir, len) == 0 && in->dirs[i][len] == 0)
			return true;
	return false;
}

static void cargo_read(const char *dir, struct deplist *out);
static void yarn_read(const char *dir, struct deplist *out);
static void pnpm_read(const char *dir, struct deplist *out);

static void remember(struct installs *in, const char *dir, size_t len, enum install_dir kind)
{
	if (remembered(in, dir, len))
		return;
	if (in->n_dirs == INSTALLS_DIRS) {
		in->truncated = true;
		return;
	}
	if (!in->dirs) {
		in->dirs = xcalloc(INSTALLS_DIRS, sizeof(*in->dirs));
		in->kind = xcalloc(INSTALLS_DIRS, sizeof(*in->kind));
		in->before = xcalloc(INSTALLS_DIRS, sizeof(*in->before));
		in->had_state = xcalloc(INSTALLS_DIRS, sizeof(*in->had_state));
	}
	in->dirs[in->n_dirs] = xstrndup(dir, len);
	in->kind[in->n_dirs] = kind;
	if (kind == INSTALL_DIR_BERRY) {
		char *state = xasprintf("%s/.yarn/install-state.gz", in->dirs[in->n_dirs]);
		struct stat st;

		in->had_state[in->n_dirs] = lstat(state, &st) == 0;
		free(state);
	}
	/* The write is stopped, not yet made: what the root lists now is
	 * what it listed before the session's install. */
	if (kind == INSTALL_DIR_CARGO || kind == INSTALL_DIR_YARN || kind == INSTALL_DIR_PNPM) {
		in->before[in->n_dirs] = xcalloc(1, sizeof(struct deplist));
		if (kind == INSTALL_DIR_CARGO)
			cargo_read(in->dirs[in->n_dirs], in->before[in->n_dirs]);
		else if (kind == INSTALL_DIR_YARN)
			yarn_read(in->dirs[in->n_dirs], in->before[in->n_dirs]);
		else
			pnpm_read(in->dirs[in->n_dirs], in->before[in->n_dirs]);
	}
	in->n_dirs++;
}

void installs_note_write(struct installs *in, const char *path)
{
	const char *p, *hidden;

	if (!in || !path)
		return;
	/* ".../name-1.0.dist-info" or a file in it. */
	for (p = strstr(path, ".dist-info"); p; p = strstr(p + 1, ".dist-info")) {
		const char *end = p + strlen(".dist-info");

		if (*end == '/' || *end == 0) {
			remember(in, path, (size_t)(end - path), INSTALL_DIR_PYTHON);
			break;
		}
	}
	hidden = strstr(path, "/node_modules/.package-lock.json");
	if (hidden && hidden[strlen("/node_modules/.package-lock.json")] == 0)
		remember(in, path, (size_t)(hidden - path) + strlen("/node_modules"), INSTALL_DIR_NPM);
	/* yarn 1's record of what node_modules holds (unlinked, then
	 * written again, at every install that changes it). */
	hidden = strstr(path, "/node_modules/.yarn-integrity");
	if (hidden && hidden[strlen("/node_modules/.yarn-integrity")] == 0)
		remember(in, path, (size_t)(hidden - path) + strlen("/node_modules"), INSTALL_DIR_YARN);
	/* yarn 2 and later (Berry) write their install state after the
	 * lockfile, at every install. */
	hidden = strstr(path, "/.yarn/install-state.gz");
	if (hidden && hidden[strlen("/.yarn/install-state.gz")] == 0 && hidden > path)
		remember(in, path, (size_t)(hidden - path), INSTALL_DIR_BERRY);
	/* pnpm's copy of its lockfile for what it linked: renamed into
	 * node_modules/.pnpm, or a global dir's .pnpm. */
	for (hidden = strstr(path, "/.pnpm/lock.yaml"); hidden;
	     hidden = strstr(hidden + 1, "/.pnpm/lock.yaml"))
		if (hidden[strlen("/.pnpm/lock.yaml")] == 0 && hidden > path)
			remember(in, path, (size_t)(hidden - path), INSTALL_DIR_PNPM);
	p = strrchr(path, '/');
	if (p && p > path && strcmp(p, "/.crates2.json") == 0)
		remember(in, path, (size_t)(p - path), INSTALL_DIR_CARGO);
	if (p && p - path > 15 && strncmp(p - 15, "/specifications", 15) == 0 &&
	    strlen(p) > strlen("/.gemspec") && strcmp(p + strlen(p) - 8, ".gemspec") == 0)
		remember(in, path, strlen(path), INSTALL_DIR_GEM);
	/* GOMODCACHE/cache/download/MODULE/@v/VERSION.ziphash: written once
	 * a module's zip is in the cache (a go.mod alone gets no hash). */
	if (p && strstr(path, "/cache/download/") && p - path > 3 && strncmp(p - 3, "/@v", 3) == 0 &&
	    strlen(p) > strlen("/.ziphash") && strcmp(p + strlen(p) - 8, ".ziphash") == 0)
		remember(in, path, strlen(path), INSTALL_DIR_GO);
}

static const char *base_of(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static char *joined(const char *const *argv, size_t argc)
{
	size_t cap = 1, w = 0;
	char *s;

	for (size_t i = 0; i < argc && argv[i]; i++)
		cap += strlen(argv[i]) + 1;
	cap = cap > 4096 ? 4096 : cap;
	s = xmalloc(cap);
	for (size_t i = 0; i < argc && argv[i] && w + 1 < cap; i++) {
		size_t n = strlen(argv[i]);

		if (i)
			s[w++] = ' ';
		n = n < cap - 1 - w ? n : cap - 1 - w;
		memcpy(s + w, argv[i], n);
		w += n;
	}
	s[w] = 0;
	return s;
}

static void script_add(struct installs *in, const char *ecosystem, const char *package,
		       size_t package_len, char *command, const char *cwd)
{
	struct install_script *x;

	/* A call handled twice (the notify engine's withdrawn and repeated
	 * notification) is one script run. */
	for (size_t i = 0; i < in->n_scripts; i++)
		if (strcmp(in->scripts[i].command, command) == 0 && strcmp(in->scripts[i].cwd, cwd) == 0 &&
		    strcmp(in->scripts[i].ecosystem, ecosystem) == 0) {
			free(command);
			return;
		}
	if (in->n_scripts == INSTALLS_SCRIPTS) {
		in->truncated = true;
		free(command);
		return;
	}
	x = &in->scripts[in->n_scripts++];
	x->ecosystem = xstrdup(ecosystem);
	x->package = package ? xstrndup(package, package_len) : NULL;
	x->command = command;
	x->cwd = xstrdup(cwd);
}

void installs_note_exec(struct installs *in, pid_t pid, const char *const *caller_argv,
			size_t caller_argc, const char *const *argv, size_t argc)
{
	char link[64], cwd[PATH_MAX];
	bool by_npm = false, by_pip = false;
	ssize_t n;

	if (!in || !argv || !argc || !argv[0])
		return;
	for (size_t i = 0; caller_argv && i < caller_argc && i < 4 && caller_argv[i]; i++) {
		const char *b = base_of(caller_argv[i]);

		by_npm |= strcmp(b, "npm-cli.js") == 0 || strcmp(b, "npm") == 0 ||
			  strcmp(b, "yarn.js") == 0 || strcmp(b, "yarn") == 0 ||
			  strcmp(b, "pnpm.cjs") == 0 || strcmp(b, "pnpm") == 0;
		by_pip |= strcmp(b, "pip") == 0 || strncmp(b, "pip3", 4) == 0 ||
			  (i > 0 && strcmp(caller_argv[i - 1], "-m") == 0 && strcmp(b, "pip") == 0);
	}
	if (!by_npm && !by_pip)
		return;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return;
	cwd[n] = 0;
	if (by_npm && argc >= 3 && strcmp(argv[1], "-c") == 0) {
		/* A lifecycle script runs in its package's dir: the name is
		 * what follows the last node_modules/ ("@scope/name"). */
		const char *nm = NULL, *q;

		for (q = strstr(cwd, "/node_modules/"); q; q = strstr(q + 1, "/node_modules/"))
			nm = q + strlen("/node_modules/");
		if (nm && *nm)
			script_add(in, "npm", nm, strlen(nm), xstrdup(argv[2]), cwd);
		return;
	}
	/* pip's build of a source distribution: the PEP 517 hooks run in
	 * a fresh interpreter (_in_process.py), or setup.py. */
	if (by_pip) {
		for (size_t i = 1; i < argc && i < 4 && argv[i]; i++) {
			const char *b = base_of(argv[i]);

			if (strcmp(b, "_in_process.py") == 0 || strstr(argv[i], "setup.py")) {
				script_add(in, "pypi", NULL, 0, joined(argv, argc), cwd);
				return;
			}
		}
	}
}

/* ---- collecting ---- */

/* NAME in DIR, whole, or NULL (absent, no regular file, over MAX). */
static char *read_small(int dir, const char *name, size_t max, size_t *len)
{
	char *buf;

	return readfile_at(dir, name, max, &buf, len, NULL) == 0 ? buf : NULL;
}

/* A header of METADATA (RFC 822 style, up to the first blank line). */
static char *meta_field(const char *text, const char *key)
{
	size_t k = strlen(key);

	for (const char *p = text; *p && *p != '\n';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > k + 1 && strncmp(p, key, k) == 0 && p[k] == ':') {
			const char *v = p + k + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			len -= (size_t)(v - p);
			while (len && (v[len - 1] == '\r' || v[len - 1] == ' '))
				len--;
			return xstrndup(v, len < 200 ? len : 200);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

/* Whether PATH (absolute) is ROOT or beneath it. */
static bool inside(const char *root, const char *path)
{
	size_t n = root ? strlen(root) : 0;

	while (n > 1 && root[n - 1] == '/')
		n--;
	return n && strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* A local path's place: resolved (the target itself may be gone). */
static bool local_outside(const char *root, const char *path)
{
	char *real = realpath(path, NULL);
	bool out;

	if (!real) {
		/* Resolve its directory instead. */
		char *dir = xstrdup(path), *slash = strrchr(dir, '/');

		if (slash && slash != dir)
			*slash = 0;
		real = realpath(dir, NULL);
		free(dir);
	}
	out = !real || !inside(root, real);
	free(real);
	return out;
}

/* "file:///a%20b" -> "/a b". */
static char *file_url_path(const char *url)
{
	const char *p = url + strlen("file://");
	char *out = xmalloc(strlen(p) + 1), *w = out;

	while (*p) {
		unsigned hi, lo;

		if (*p == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
			*w++ = (char)(hi * 16 + lo);
			p += 3;
		} else {
			*w++ = *p++;
		}
	}
	*w = 0;
	return out;
}

static struct install *list_add(struct install_list *l)
{
	struct install *x;

	if (l->n == INSTALLS_LISTED) {
		l->truncated = true;
		return NULL;
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	x = &l->v[l->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

static void collect_python(const char *dir, const char *root, struct install_list *l)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *meta, *du, *installer;
	size_t len;
	struct install *x;

	if (fd < 0)
		return;
	/* Only what an installer put in place (a build dir has dist-info too). */
	installer = read_small(fd, "INSTALLER", 4096, &len);
	meta = installer ? read_small(fd, "METADATA", INSTALLS_META_MAX, &len) : NULL;
	if (!meta || !(x = list_add(l))) {
		free(installer);
		free(meta);
		close(fd);
		return;
	}
	x->ecosystem = "pypi";
	x->name = meta_field(meta, "Name");
	x->version = meta_field(meta, "Version");
	x->location = xstrdup(dir);
	x->source = "registry";
	if (!x->name)
		x->name = xstrdup(base_of(dir));
	du = read_small(fd, "direct_url.json", 65536, &len);
	if (du) {
		json_error_t err;
		json_t *j = json_loadb(du, len, 0, &err);
		const char *url = json_string_value(json_object_get(j, "url"));

		if (url) {
			x->url = xstrndup(url, 1024);
			if (json_is_object(json_object_get(j, "vcs_info"))) {
				x->source = "git";
			} else if (strncmp(url, "file://", 7) == 0) {
				char *p = file_url_path(url);

				x->source = "path";
				x->flagged = local_outside(root, p);
				free(p);
			} else {
				x->source = "url";
			}
			if (strcmp(x->source, "path") != 0)
				x->flagged = true;
		}
		json_decref(j);
		free(du);
	}
	free(installer);
	free(meta);
	close(fd);
}

/* Whether LIST (sorted by name, then version) has NAME at VERSION. */
static bool listed(const struct deplist *list, const char *name, const char *version)
{
	size_t lo = 0, hi = list ? list->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(list->v[mid].name, name);

		if (!c)
			c = strcmp(list->v[mid].version, version);
		if (!c)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* npm's "resolved": the registry's tarball (".../name/-/name-1.0.0.tgz"),
 * a git repository, a local path (relative to the project's dir) or a URL. */
static void npm_source(struct install *x, const char *resolved, bool link, const char *project,
		       const char *root)
{
	x->source = "registry";
	if (!resolved)
		return;
	x->url = xstrndup(resolved, 1024);
	if (link || strncmp(resolved, "file:", 5) == 0 || resolved[0] == '.' || resolved[0] == '/') {
		const char *p = strncmp(resolved, "file:", 5) == 0 ? resolved + 5 : resolved;
		char *abs = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", project, p);

		x->source = "path";
		x->flagged = local_outside(root, abs);
		free(abs);
	} else if (strncmp(resolved, "git", 3) == 0 || strstr(resolved, "github:") == resolved ||
		   strstr(resolved, ".git#")) {
		x->source = "git";
		x->flagged = true;
	} else if (!strstr(resolved, "/-/")) {
		x->source = "url";
		x->flagged = true;
	}
}

/* What DIR/NAME listed at the start, as the project's snapshot read it
 * (NULL: no such file, or not read); *SAME when the end's look found it
 * unchanged. */
static const struct deplist *snapshot_before(const struct depsnap *before, const char *dir,
					     const char *name, bool *same)
{
	const char *root = before ? before->root : NULL;
	size_t n = root ? strlen(root) : 0;
	char rel[4096];

	if (!n || strncmp(dir, root, n) != 0 || (dir[n] != '/' && dir[n] != 0))
		return NULL;
	snprintf(rel, sizeof(rel), "%s%s%s", dir[n] ? dir + n + 1 : "", dir[n] ? "/" : "", name);
	for (size_t i = 0; i < before->n; i++) {
		if (strcmp(before->v[i].rel, rel) != 0)
			continue;
		*same = before->v[i].same_at_end;
		return before->v[i].parse_rc == 0 ? &before->v[i].deps : NULL;
	}
	return NULL;
}

static void collect_npm(const char *dir, const char *root, const struct depsnap *before,
			struct install_list *l)
{
	bool same = false;
	const struct deplist *was = snapshot_before(before, dir, ".package-lock.json", &same);
	int fd;
	char *text, *project;
	json_t *j, *pk, *v;
	const char *k;
	size_t len;

	/* npm rewrites the file at every install: unchanged, nothing came. */
	if (same)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	text = read_small(fd, ".package-lock.json", DEPFILE_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	pk = json_object_get(j, "packages");
	project = xstrndup(dir, strlen(dir) - strlen("/node_modules"));
	json_object_foreach(pk, k, v) {
		const char *name = k, *nm, *version = json_string_value(json_object_get(v, "version"));
		struct install *x;

		while ((nm = strstr(name, "node_modules/")))
			name = nm + strlen("node_modules/");
		if (name == k || !json_is_object(v))
			continue;
		if (!version)
			version = "";
		if (listed(was, name, version))
			continue;
		if (!(x = list_add(l)))
			break;
		x->ecosystem = "npm";
		x->name = xstrndup(name, 200);
		x->version = xstrndup(version, 200);
		x->location = xasprintf("%s/%s", project, k);
		x->install_script = json_is_true(json_object_get(v, "hasInstallScript"));
		npm_source(x, json_string_value(json_object_get(v, "resolved")),
			   json_is_true(json_object_get(v, "link")), project, root);
	}
	free(project);
	json_decref(j);
}

/* The keys of DIR/.crates2.json's "installs" ("name 1.0.0 (source)"),
 * as names of OUT, sorted. */
static void cargo_read(const char *dir, struct deplist *out)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	json_t *j, *v;
	const char *k;
	char *text;
	size_t len;

	if (fd < 0)
		return;
	text = read_small(fd, ".crates2.json", DEPFILE_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	/* Not deplist_add(): a key's source may be a long path, and
	 * DEP_TEXT_MAX would cut it. */
	json_object_foreach(json_object_get(j, "installs"), k, v) {
		if (out->n == out->cap) {
			out->cap = out->cap ? out->cap * 2 : 16;
			out->v = xrealloc(out->v, out->cap * sizeof(*out->v));
		}
		if (out->n == DEPLIST_MAX)
			break;
		out->v[out->n].name = xstrndup(k, 1024);
		out->v[out->n].source = NULL;
		out->v[out->n++].version = xstrdup("");
	}
	json_decref(j);
	deplist_sort(out);
}

/* "name 1.0.0 (registry+https://...)": a crate and where it came from. */
static void collect_cargo(const char *dir, const struct deplist *was, const char *root,
			  struct install_list *l)
{
	struct deplist now = { 0 };

	cargo_read(dir, &now);
	for (size_t i = 0; i < now.n; i++) {
		const char *key = now.v[i].name, *sp = strchr(key, ' '), *open, *src;
		struct install *x;

		if (listed(was, key, "") || !sp || !(x = list_add(l)))
			continue;
		open = strstr(sp + 1, " (");
		x->ecosystem = "crates";
		x->name = xstrndup(key, (size_t)(sp - key));
		x->version = open ? xstrndup(sp + 1, (size_t)(open - sp - 1)) : xstrdup(sp + 1);
		x->location = xstrdup(dir);
		x->source = "registry";
		src = open ? open + 2 : "";
		if (strncmp(src, "registry+", 9) == 0 || strncmp(src, "sparse+", 7) == 0) {
			x->url = xstrndup(strchr(src, '+') + 1, strcspn(strchr(src, '+') + 1, ")"));
		} else if (strncmp(src, "git+", 4) == 0) {
			x->source = "git";
			x->url = xstrndup(src + 4, strcspn(src + 4, ")"));
			x->flagged = true;
		} else if (strncmp(src, "path+file://", 12) == 0) {
			char *p;

			x->source = "path";
			x->url = xstrndup(src + 5, strcspn(src + 5, ")"));
			p = file_url_path(x->url);
			x->flagged = local_outside(root, p);
			free(p);
		}
	}
	deplist_free(&now);
}

/* GEM_HOME/specifications/NAME-VERSION.gemspec, there at the end: the
 * version starts at the first "-" before a digit (names have dashes:
 * rspec-core-3.12.0; platforms follow the version: x-1.2-x86_64-linux). */
static void collect_gem(const char *spec, struct install_list *l)
{
	const char *base = strrchr(spec, '/') + 1, *v = NULL;
	size_t n = strlen(base) - strlen(".gemspec");
	struct install *x;
	struct stat st;
	char *home;

	if (lstat(spec, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 1; i + 1 < n && !v; i++)
		if (base[i] == '-' && base[i + 1] >= '0' && base[i + 1] <= '9')
			v = base + i;
	if (!v || !(x = list_add(l)))
		return;
	home = xstrndup(spec, (size_t)(base - spec) - strlen("specifications/"));
	x->ecosystem = "rubygems";
	x->name = xstrndup(base, (size_t)(v - base));
	x->version = xstrndup(v + 1, n - (size_t)(v + 1 - base));
	x->location = xasprintf("%sgems/%.*s", home, (int)n, base);
	x->source = "registry";
	free(home);
}

static json_t *yarn_integrity(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *text;
	size_t len;
	json_t *j;

	if (fd < 0)
		return NULL;
	text = read_small(fd, ".yarn-integrity", DEPFILE_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return NULL;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	return j;
}

/* The length of the name in a yarn pattern "name@range" ("@scope/name@..."),
 * 0 when it has no range. */
static size_t yarn_name_len(const char *pattern)
{
	const char *at = pattern[0] ? strchr(pattern + 1, '@') : NULL;

	return at ? (size_t)(at - pattern) : 0;
}

/* What tells one installed copy from another in a lockfileEntries value:
 * its "#" fragment (a tarball's SHA-1, a repository's commit), else the
 * whole value. */
static const char *yarn_identity(const char *resolved)
{
	const char *hash = strrchr(resolved, '#');

	return hash ? hash + 1 : resolved;
}

/* DIR/.yarn-integrity's "lockfileEntries" (what node_modules was
 * installed from) as name -> yarn_identity() pairs in OUT's names and
 * versions, sorted.  Neither the pattern nor a path is kept: yarn writes
 * a path as given at an add and relative to the project once it rereads
 * it. */
static void yarn_read(const char *dir, struct deplist *out)
{
	json_t *j = yarn_integrity(dir), *v;
	const char *k;

	json_object_foreach(json_object_get(j, "lockfileEntries"), k, v) {
		size_t nlen = yarn_name_len(k);
		char *name;

		if (!nlen)
			continue;
		name = xstrndup(k, nlen);
		deplist_add(out, name, yarn_identity(json_is_string(v) ? json_string_value(v) : ""));
		free(name);
	}
	json_decref(j);
	deplist_sort(out);
}

/* DIR/NAME parsed as F into OUT (left empty when it cannot be read). */
static void depfile_read(const char *dir, const char *name, enum depfile_format f,
			 struct deplist *out)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *text;
	size_t len;

	if (fd < 0)
		return;
	text = read_small(fd, name, DEPFILE_MAX_BYTES, &len);
	close(fd);
	if (text && depfile_parse(f, text, len, out) < 0)
		deplist_free(out);
	free(text);
}

/* The packages DIR/.pnpm/lock.yaml lists (pnpm's lockfile of what it
 * linked), sorted. */
static void pnpm_read(const char *dir, struct deplist *out)
{
	char *pnpm = xasprintf("%s/.pnpm", dir);

	depfile_read(pnpm, "lock.yaml", DEPFILE_PNPM_LOCK, out);
	free(pnpm);
}

/* A yarn or pnpm source: npm_source() on it, without a tarball's hash
 * fragment (a git source keeps its commit), "link:" as npm's link. */
static void node_source(struct install *x, const char *src, const char *project, const char *root)
{
	bool link = src && strncmp(src, "link:", 5) == 0;
	char *s;

	if (!src || !*src) {
		npm_source(x, NULL, false, project, root);
		return;
	}
	s = xstrdup(link ? src + 5 : src);
	/* Berry's "::locator=..." and "#...::hash=..." say which project
	 * asked; a tarball's "#sha1" is no place either. */
	if (strstr(s, "::"))
		*strstr(s, "::") = 0;
	if (strncmp(s, "git", 3) != 0 && !strstr(s, ".git#") && !strstr(s, "#commit=") &&
	    strchr(s, '#'))
		*strchr(s, '#') = 0;
	npm_source(x, s, link, project, root);
	free(s);
}

static const char *base_dir_end(const char *dir, const char *suffix)
{
	size_t n = strlen(dir), k = strlen(suffix);

	return n > k && strcmp(dir + n - k, suffix) == 0 ? dir + n - k : dir + n;
}

/* yarn 1: the lockfileEntries of DIR/.yarn-integrity (DIR a node_modules)
 * that were not there when the session first wrote it, with versions and
 * sources from the project's yarn.lock; "artifacts" names the packages
 * whose install scripts ran. */
static void collect_yarn(const char *dir, const struct deplist *was, const char *root,
			 struct install_list *l)
{
	json_t *j = yarn_integrity(dir), *v, *artifacts;
	char *project = xstrndup(dir, (size_t)(base_dir_end(dir, "/node_modules") - dir));
	struct deplist lock = { 0 };
	const char *k;

	depfile_read(project, "yarn.lock", DEPFILE_YARN_LOCK, &lock);
	artifacts = json_object_get(j, "artifacts");
	json_object_foreach(json_object_get(j, "lockfileEntries"), k, v) {
		const char *resolved = json_is_string(v) ? json_string_value(v) : "";
		size_t nlen = yarn_name_len(k);
		const char *range, *version = "";
		struct install *x;
		char *key, *name;

		if (!nlen)
			continue;
		name = xstrndup(k, nlen);
		if (listed(was, name, yarn_identity(resolved)) || !(x = list_add(l))) {
			free(name);
			continue;
		}
		range = k + nlen + 1;
		/* The lock's entry of the same name and source: its version. */
		for (size_t i = 0; i < lock.n; i++)
			if (strlen(lock.v[i].name) == nlen && strncmp(lock.v[i].name, k, nlen) == 0 &&
			    (*resolved ? lock.v[i].source && strcmp(lock.v[i].source, resolved) == 0
				       : !lock.v[i].source || strcmp(lock.v[i].source, range) == 0)) {
				version = lock.v[i].version;
				break;
			}
		x->ecosystem = "npm";
		x->name = name;
		x->version = xstrdup(version);
		x->location = xasprintf("%s/%s", dir, x->name);
		node_source(x, *resolved ? resolved : depfile_range_is_source(range, range + strlen(range)) ? range : NULL,
			    project, root);
		key = xasprintf("%s@%s", x->name, version);
		x->install_script = json_object_get(artifacts, key) != NULL;
		free(key);
	}
	deplist_free(&lock);
	free(project);
	json_decref(j);
}

/* The "version" of DIR/package.json ("" when none can be read); DIR may
 * be pnpm's link to the package. */
static char *package_version(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t len = 0;
	char *text = fd >= 0 ? read_small(fd, "package.json", INSTALLS_META_MAX, &len) : NULL;
	json_t *j = text ? json_loadb(text, len, 0, NULL) : NULL;
	const char *v = json_string_value(json_object_get(j, "version"));
	char *out = xstrndup(v ? v : "", 200);

	json_decref(j);
	free(text);
	if (fd >= 0)
		close(fd);
	return out;
}

/* pnpm: the packages DIR/.pnpm/lock.yaml lists (DIR a node_modules, or a
 * global dir) that it did not list when the session first wrote it. */
static void collect_pnpm(const char *dir, const struct deplist *was, const char *root,
			 struct install_list *l)
{
	const char *end = base_dir_end(dir, "/node_modules");
	char *project = xstrndup(dir, (size_t)(end - dir));
	char *nm = *end ? xstrdup(dir) : xasprintf("%s/node_modules", dir);
	struct deplist now = { 0 };

	pnpm_read(dir, &now);
	for (size_t i = 0; i < now.n; i++) {
		const struct dep *d = &now.v[i];
		struct install *x;

		if (listed(was, d->name, d->version) || !(x = list_add(l)))
			continue;
		x->ecosystem = "npm";
		x->name = xstrdup(d->name);
		x->location = xasprintf("%s/%s", nm, d->name);
		/* A directory's entry has no version (its key's spec stands
		 * in): the package's own says it. */
		if (d->source && strcmp(d->source, d->version) == 0)
			x->version = package_version(x->location);
		else
			x->version = xstrdup(d->version);
		node_source(x, d->source, project, root);
	}
	deplist_free(&now);
	free(nm);
	free(project);
}

/* yarn 2 and later: what the project's yarn.lock lists at the end that it
 * did not list at the start (the snapshot's); all of it when the install
 * state did not exist before the session wrote it (a first install from
 * a lockfile).  The project's own workspaces are not packages installed. */
static void collect_berry(const char *dir, bool had_state, const char *root,
			  const struct depsnap *before, struct install_list *l)
{
	bool same = false;
	const struct deplist *was = had_state ? snapshot_before(before, dir, "yarn.lock", &same) : NULL;
	struct deplist now = { 0 };

	if (had_state && same)
		return;
	depfile_read(dir, "yarn.lock", DEPFILE_YARN_LOCK, &now);
	for (size_t i = 0; i < now.n; i++) {
		const struct dep *d = &now.v[i];
		struct install *x;
		char *nm;
		struct stat st;

		if ((d->source && strncmp(d->source, "workspace:", 10) == 0) ||
		    listed(was, d->name, d->version) || !(x = list_add(l)))
			continue;
		x->ecosystem = "npm";
		x->name = xstrdup(d->name);
		x->version = xstrdup(d->version);
		/* node-modules linker: the package's dir; Plug'n'Play: the project. */
		nm = xasprintf("%s/node_modules/%s", dir, d->name);
		x->location = lstat(nm, &st) == 0 ? nm : (free(nm), xstrdup(dir));
		node_source(x, d->source, dir, root);
	}
	deplist_free(&now);
}

/* A module path or version as the go command escapes it in the module
 * cache: each upper-case letter as '!' and the letter in lower case. */
static char *go_unescape(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *w = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '!' && i + 1 < n && s[i + 1] >= 'a' && s[i + 1] <= 'z')
			*w++ = (char)(s[++i] - 'a' + 'A');
		else
			*w++ = s[i];
	}
	*w = 0;
	return out;
}

/* GOMODCACHE/cache/download/MODULE/@v/VERSION.ziphash, there at the end;
 * VERSION.info beside it names the repository when the go command fetched
 * the module from its version control ("Origin"), not from a proxy. */
static void collect_go(const char *hash, struct install_list *l)
{
	const char *dl = strstr(hash, "/cache/download/"), *at, *base = strrchr(hash, '/') + 1;
	size_t vlen = strlen(base) - strlen(".ziphash");
	struct install *x;
	struct stat st;
	char *info, *mod_esc, *ver_esc, *dir, *name;
	size_t len = 0;
	int fd;

	for (const char *q; (q = strstr(dl + 1, "/cache/download/")) && q < base;)
		dl = q;
	at = base - strlen("/@v/");
	if (lstat(hash, &st) < 0 || !S_ISREG(st.st_mode) || at <= dl + 16 || !vlen ||
	    !(x = list_add(l)))
		return;
	mod_esc = xstrndup(dl + 16, (size_t)(at - dl - 16));
	ver_esc = xstrndup(base, vlen);
	x->ecosystem = "go";
	x->name = go_unescape(mod_esc, strlen(mod_esc));
	x->version = go_unescape(ver_esc, vlen);
	x->location = xasprintf("%.*s/%s@%s", (int)(dl - hash), hash, mod_esc, ver_esc);
	x->source = "registry";
	dir = xstrndup(hash, (size_t)(base - 1 - hash));
	name = xasprintf("%s.info", ver_esc);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	info = fd >= 0 ? read_small(fd, name, 65536, &len) : NULL;
	if (info) {
		json_t *j = json_loadb(info, len, 0, NULL);
		json_t *origin = json_object_get(j, "Origin");
		const char *vcs = json_string_value(json_object_get(origin, "VCS"));
		const char *url = json_string_value(json_object_get(origin, "URL"));

		if (vcs && strcmp(vcs, "git") == 0) {
			x->source = "git";
			x->url = url ? xstrndup(url, 1024) : NULL;
			x->flagged = true;
		} else if (vcs) {
			/* hg, svn, bzr, fossil: a repository, not a registry. */
			x->source = "url";
			x->url = url ? xstrndup(url, 1024) : NULL;
			x->flagged = true;
		}
		json_decref(j);
		free(info);
	}
	if (fd >= 0)
		close(fd);
	free(name);
	free(dir);
	free(mod_esc);
	free(ver_esc);
}

void installs_collect(const struct installs *in, const char *root, const struct depsnap *before,
		      struct install_list *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; in && i < in->n_dirs; i++) {
		if (in->kind[i] == INSTALL_DIR_NPM)
			collect_npm(in->dirs[i], root, before, out);
		else if (in->kind[i] == INSTALL_DIR_CARGO)
			collect_cargo(in->dirs[i], in->before[i], root, out);
		else if (in->kind[i] == INSTALL_DIR_GEM)
			collect_gem(in->dirs[i], out);
		else if (in->kind[i] == INSTALL_DIR_GO)
			collect_go(in->dirs[i], out);
		else if (in->kind[i] == INSTALL_DIR_YARN)
			collect_yarn(in->dirs[i], in->before[i], root, out);
		else if (in->kind[i] == INSTALL_DIR_PNPM)
			collect_pnpm(in->dirs[i], in->before[i], root, out);
		else if (in->kind[i] == INSTALL_DIR_BERRY)
			collect_berry(in->dirs[i], in->had_state[i], root, before, out);
		else
			collect_python(in->dirs[i], root, out);
	}
	for (size_t i = 0; i < out->n; i++)
		out->flagged += out->v[i].flagged;
	out->truncated |= in && in->truncated;
}

void install_list_free(struct install_list *l)
{
	for (size_t i = 0; l && i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].version);
		free(l->v[i].url);
		free(l->v[i].location);
	}
	if (l) {
		free(l->v);
		memset(l, 0, sizeof(*l));
	}
}

void installs_free(struct installs *in)
{
	for (size_t i = 0; in && i < in->n_dirs; i++) {
		free(in->dirs[i]);
		if (in->before[i]) {
			deplist_free(in->before[i]);
			free(in->before[i]);
		}
	}
	for (size_t i = 0; in && i < in->n_scripts; i++) {
		free(in->scripts[i].ecosystem);
		free(in->scripts[i].package);
		free(in->scripts[i].command);
		free(in->scripts[i].cwd);
	}
	if (in) {
		free(in->dirs);
		free(in->kind);
		free(in->before);
		free(in->had_state);
		memset(in, 0, sizeof(*in));
	}
}
