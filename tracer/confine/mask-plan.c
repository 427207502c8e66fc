/* What the command's masks cover (mask.h, mask_plan): the existing
 * objects that the policy's read and write deny rules name, found by
 * walking each rule's pattern over the file system, and kept only where
 * the compiled policy (its exceptions, --allow-read, --allow-write and
 * the layers' "overrides" included) denies them as a whole.
 *
 * The walk follows a pattern's components: a literal one is looked up, a
 * glob one lists its directory, a trailing "**" names the directory
 * itself as a tree.  A "**" before more components is taken as zero
 * levels, and, right below ${ROOT}, as each nested project too: the
 * directories down to MASK_NESTED_DEPTH levels that hold a .git
 * (write.git-hooks finds ${ROOT}/.git/hooks and ${ROOT}/vendor/lib/.git/hooks).
 * That look is bounded and skips what holds no projects of the user's
 * (node_modules, virtual environments, build output): a walk of the whole
 * project at every start would cost more than the supervisor's whole
 * start.  /proc, /sys and /dev are never
 * masked (their entries are per process or devices), and no symlink is
 * followed: the supervisor judges a symlink's target, which its own
 * rules name where they deny it. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "tracer/confine/linked.h"
#include "tracer/confine/mask.h"

/* Bounds: the masks are mounts made at every start. */
#define MASK_MAX 256         /* entries */
#define MASK_MAX_LISTED 4096 /* directory entries looked at, all rules together */
#define MASK_MAX_DEPTH 8     /* levels below a credential directory looked into */

/* The nested projects: how deep, how many directory entries, how many. */
#define MASK_NESTED_DEPTH 4
#define MASK_NESTED_LISTED 4096
#define MASK_NESTED_MAX 32
#define MASK_HEADS_MAX 64

/* A name no rule is expected to name: a write or read of it inside a
 * directory tells what the policy says of a new name there. */
#define MASK_PROBE_NAME ".agenttrace-mask-probe"

struct plan {
	struct mask *m;
	struct linked *linked;
	const struct rules_policy *p;
	const char *root;
	size_t root_len;
	unsigned listed;
	char *nested[MASK_NESTED_MAX]; /* below root, each holding a .git or a head */
	size_t n_nested;
	bool nested_found;
	/* The literal first components after the project's "**" of the write deny
	 * rules that go on below them (".github" of .github/workflows, ".husky"):
	 * a directory that holds one is looked into as a nested project is,
	 * so that a monorepo package's .github/workflows is masked too. */
	char *heads[MASK_HEADS_MAX];
	size_t n_heads;
};

/* Denied by a deny rule (not by the section's fallback: outside the
 * write roots everything is, which is Landlock's to enforce). */
static const char *plan_denied(const struct plan *pl, enum rules_kind kind, const char *path)
{
	struct rules_event ev = { .kind = kind, .path = path };
	struct rules_verdict v;

	if (rules_decide(pl->p, &ev, &v) < 0 || v.action != RULES_ACTION_DENY ||
	    v.rule == rules_rule_at(pl->p, pl->p->fallback[kind]))
		return NULL;
	return rules_string(pl->p, v.rule->id);
}

static bool plan_pseudo(const char *path)
{
	static const char *const pseudo[] = { "/proc", "/sys", "/dev" };

	/* /dev/shm holds files (secrets tools keep theirs there). */
	if (strncmp(path, "/dev/shm", 8) == 0 && (path[8] == '/' || path[8] == '\0'))
		return false;
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		size_t n = strlen(pseudo[i]);

		if (strncmp(path, pseudo[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
			return true;
	}
	return false;
}

static bool plan_beneath(const char *path, const char *dir, size_t n)
{
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static void plan_add(struct plan *pl, enum mask_kind kind, const char *path, const char *rule)
{
	struct mask *m = pl->m;

	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].path, path) == 0) {
			/* The stronger mask wins: empty over read-only over pin. */
			if (kind > m->v[i].kind) {
				m->v[i].kind = kind;
				m->v[i].rule = rule;
			}
			return;
		}
	if (m->n >= MASK_MAX) {
		m->truncated = true;
		return;
	}
	m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n++] = (struct mask_entry){ kind, xstrdup(path), rule };
}

/* Whether N bytes of a pattern hold a glob or an escape character. */
static bool plan_magic(const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
			return true;
	return false;
}

/* PATH + "/" + NAME into OUT; false when it does not fit. */
static bool plan_join(char *out, const char *path, const char *name)
{
	return (size_t)snprintf(out, PATH_MAX, "%s/%s", strcmp(path, "/") == 0 ? "" : path, name) <
	       PATH_MAX;
}

/* The last K components of GLOB (K >= 1), unescaped, into OUT, when none
 * of them is a glob and the component before them is literal too; the
 * glob before them into PREFIX.  False otherwise.  An exception that
 * names a file this way beneath a directory matching PREFIX
 * (`${ROOT}/.git/hooks/pre-commit`) names one of that directory; one
 * whose tail comes after a "**" (the unless `.git/hooks` of write.git-hooks, the directory
 * itself) would name a deeper copy of it, no file of this one. */
static bool plan_literal_tail(const char *glob, unsigned k, char *out, char *prefix)
{
	const char *start = glob + strlen(glob);
	size_t o = 0;

	for (unsigned i = 0; i < k; i++) {
		if (start == glob)
			return false;
		do
			start--;
		while (start > glob && *start != '/');
		if (*start != '/')
			return false;
	}
	{
		const char *before = start;
		size_t pl = (size_t)(start - glob);

		while (before > glob && before[-1] != '/')
			before--;
		if (pl == 0 || pl >= PATH_MAX || plan_magic(before, (size_t)(start - before)))
			return false;
		memcpy(prefix, glob, pl);
		prefix[pl] = '\0';
	}
	for (const char *c = start + 1; *c; c++) {
		if (*c == '*' || *c == '?' || *c == '[')
			return false;
		if (*c == '\\' && c[1])
			c++;
		if (o + 1 >= PATH_MAX)
			return false;
		out[o++] = *c;
	}
	out[o] = '\0';
	return o > 0;
}

static bool plan_wholly_entries(struct plan *pl, enum rules_kind kind, const char *dir,
				int depth, unsigned *seen, bool excepted);

/* Whether exception pattern TEXT could match a name at or below DIR:
 * its literal directories and DIR lie on one path. */
static bool plan_exception_near(const char *text, const char *dir)
{
	size_t lit = strcspn(text, "*?[\\"), n = strlen(dir);

	while (lit > 0 && text[lit] != '/' && text[lit] != '\0')
		lit--;
	return strncmp(text, dir, lit < n ? lit : n) == 0;
}

/* Whether the policy denies everything of directory DIR (KIND rules):
 * a new name in it, and the names its deny rules' exceptions spell out
 * (`--allow-read '${HOME}/.aws/config'` keeps ~/.aws unmasked).  For
 * reads also every entry that exists beneath it: an exception by a glob
 * (unless "*.pub") may admit one.  Writes do not look at the entries: a
 * protected tree's own exceptions by glob (the *.sample files of .git/hooks) admit
 * files that git writes only into a new repository, and binding the tree
 * read-only is what keeps a hook from being planted in an existing one. */
static bool plan_wholly(struct plan *pl, enum rules_kind kind, const char *dir)
{
	const struct rules_span *sp = &pl->p->span[kind][RULES_ACTION_DENY];
	const struct rules_pattern *pats =
		(const struct rules_pattern *)((const char *)pl->p + pl->p->patterns_off);
	char path[PATH_MAX], tail[PATH_MAX], prefix[PATH_MAX];
	unsigned seen = 0;
	bool excepted = false;

	if (!plan_join(path, dir, MASK_PROBE_NAME) || !plan_denied(pl, kind, path))
		return false;
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(pl->p, sp->first + i);

		for (uint32_t u = 0; u < r->unless_count; u++) {
			const char *text = rules_string(pl->p, pats[r->unless_first + u].text);

			excepted = excepted || plan_exception_near(text, dir);

			for (unsigned k = 1; k <= 4; k++)
				if (plan_literal_tail(text, k, tail, prefix) && match_path(prefix, dir) &&
				    plan_join(path, dir, tail) && !plan_denied(pl, kind, path))
					return false;
			/* A literal exception beneath DIR, whatever its depth. */
			if (!plan_magic(text, strlen(text)) && plan_beneath(text, dir, strlen(dir)) &&
			    !plan_denied(pl, kind, text))
				return false;
		}
	}
	return kind == RULES_KIND_WRITE || plan_wholly_entries(pl, kind, dir, 0, &seen, excepted);
}

/* Whether every entry below DIR is denied too.  Past the bounds, what
 * was not looked at is taken as denied when no exception of the rules
 * could admit a name there (EXCEPTED false): kubectl's cache in ~/.kube
 * then leaves it masked whole, rather than a tree of per-file masks cut
 * short; a link in it to an admitted file reads as missing. */
static bool plan_wholly_entries(struct plan *pl, enum rules_kind kind, const char *dir,
				int depth, unsigned *seen, bool excepted)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool all = true;
	DIR *d;

	if (depth > MASK_MAX_DEPTH)
		return !excepted;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	while (all && (de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++*seen > MASK_MAX_LISTED / 16) {
			all = !excepted;
			break;
		}
		if (!plan_join(path, dir, de->d_name) || lstat(path, &st) < 0) {
			all = false;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			/* The supervisor judges what it names: an allowed target
			 * would be a read the mask turned into ENOENT. */
			char *real = realpath(path, NULL);

			all = !real || plan_denied(pl, kind, real);
			free(real);
		} else {
			all = plan_denied(pl, kind, path) &&
			      (!S_ISDIR(st.st_mode) ||
			       plan_wholly_entries(pl, kind, path, depth + 1, seen, excepted));
		}
	}
	closedir(d);
	return all;
}

/* The directories between ROOT, or the nested project PATH is in, and
 * PATH, each bound onto itself.  A nested project's own directory and
 * those above it stay plain directories: a mount there would make a
 * rename into the project from elsewhere fail (EXDEV) and the project
 * immovable (EBUSY). */
static void plan_pins(struct plan *pl, const char *path)
{
	size_t top = pl->root_len;
	char dir[PATH_MAX];
	char *slash;

	for (size_t i = 0; i < pl->n_nested; i++) {
		size_t n = strlen(pl->nested[i]);

		if (n > top && strncmp(path, pl->nested[i], n) == 0 && path[n] == '/')
			top = n;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	while ((slash = strrchr(dir, '/')) && (size_t)(slash - dir) > top) {
		*slash = '\0';
		plan_add(pl, MASK_PIN, dir, "");
	}
}

static void plan_read_entries(struct plan *pl, const char *dir, int depth);

/* Whether the kernel already refuses ACCESS (R_OK, W_OK) of PATH to a
 * command that runs as agenttrace's own user, not root: then a mask adds
 * nothing (that command has no capability to pass it), and a session in
 * a user namespace is made only for what it guards (/etc/shadow is no
 * unprivileged user's to read anyway).  A root agenttrace plans for any
 * --user. */
static bool plan_refused_anyway(const char *path, int access)
{
	return geteuid() != 0 && faccessat(AT_FDCWD, path, access, AT_EACCESS) < 0 &&
	       errno == EACCES;
}

/* Whether PATH exists and is no symlink.  A mount is made on the object
 * the path names, and the child looks it up refusing symlinks: the walk
 * never descends through one (each directory it enters was lstat()ed,
 * its start was looked up refusing them), so none is on the way. */
static bool plan_exists(const char *path, struct stat *st)
{
	return !plan_pseudo(path) && lstat(path, st) == 0 && !S_ISLNK(st->st_mode);
}

/* DIR, which a KIND deny rule names as a tree (a trailing "**"): what
 * decides is what the policy says of the names in it, not of the
 * directory itself, which an exception may admit (a mkdir of .git/hooks). */
static void plan_tree(struct plan *pl, enum rules_kind kind, const char *dir)
{
	char probe[PATH_MAX];
	const char *rule;
	struct stat st;

	if (!plan_exists(dir, &st) || !S_ISDIR(st.st_mode) || !plan_join(probe, dir, MASK_PROBE_NAME))
		return;
	rule = plan_denied(pl, kind, probe);
	if (!rule || plan_refused_anyway(dir, kind == RULES_KIND_READ ? R_OK | X_OK : W_OK | X_OK))
		return;
	if (kind == RULES_KIND_READ) {
		if (plan_wholly(pl, kind, dir)) {
			plan_add(pl, MASK_EMPTY_DIR, dir, rule);
			linked_want_tree(pl->linked, dir);
		} else {
			plan_read_entries(pl, dir, 0);
		}
		return;
	}
	if (!plan_wholly(pl, kind, dir))
		return;
	/* Its files are denied by their names here: other names of them,
	 * anywhere, are not, nor is a mask of the tree theirs. */
	linked_want_tree(pl->linked, dir);
	if (plan_beneath(dir, pl->root, pl->root_len)) {
		plan_add(pl, MASK_READONLY, dir, rule);
		plan_pins(pl, dir);
	}
}

/* PATH, an existing object that a KIND deny rule's pattern reaches. */
static void plan_candidate(struct plan *pl, enum rules_kind kind, const char *path)
{
	const char *rule;
	struct stat st;

	if (!plan_exists(path, &st))
		return;
	rule = plan_denied(pl, kind, path);
	if (!rule || plan_refused_anyway(path, kind == RULES_KIND_READ ? R_OK : W_OK))
		return;
	linked_note(pl->linked, path, &st);
	if (kind == RULES_KIND_READ) {
		/* A FIFO a process outside the session feeds is read as a
		 * file is: an empty one over it. */
		if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) {
			plan_add(pl, MASK_EMPTY_FILE, path, rule);
		} else if (S_ISDIR(st.st_mode)) {
			if (plan_wholly(pl, kind, path)) {
				plan_add(pl, MASK_EMPTY_DIR, path, rule);
				linked_want_tree(pl->linked, path);
			} else {
				plan_read_entries(pl, path, 0);
			}
		}
		return;
	}
	if (S_ISDIR(st.st_mode) && plan_wholly(pl, kind, path))
		linked_want_tree(pl->linked, path);
	/* Writes: inside the project only (Landlock keeps the rest out of
	 * the write roots), files and whole trees. */
	if (!plan_beneath(path, pl->root, pl->root_len) ||
	    !(S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && plan_wholly(pl, kind, path))))
		return;
	plan_add(pl, MASK_READONLY, path, rule);
	plan_pins(pl, path);
}

/* A credential directory that is not denied as a whole: its denied
 * entries one by one. */
static void plan_read_entries(struct plan *pl, const char *dir, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (depth >= MASK_MAX_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++pl->listed > MASK_MAX_LISTED) {
			pl->m->truncated = true;
			break;
		}
		if (plan_join(path, dir, de->d_name))
			plan_candidate(pl, RULES_KIND_READ, path);
	}
	closedir(d);
}

/* Directories no project of the user's is in. */
static bool plan_no_projects(const char *name)
{
	static const char *const skip[] = { "node_modules", ".git", ".venv", "venv", "__pycache__",
					    "site-packages", "target", "dist", "build", ".tox",
					    ".cache", ".mypy_cache", ".pytest_cache" };

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(name, skip[i]) == 0)
			return true;
	return false;
}

/* PL's heads, from the write deny rules of its policy. */
static void plan_heads(struct plan *pl)
{
	const struct rules_span *sp = &pl->p->span[RULES_KIND_WRITE][RULES_ACTION_DENY];

	for (uint32_t i = 0; i < sp->count && pl->n_heads < MASK_HEADS_MAX; i++) {
		const char *t = rules_string(pl->p, rules_rule_at(pl->p, sp->first + i)->pat.text);
		const char *head, *end;
		bool known = false;

		if (strncmp(t, pl->root, pl->root_len) != 0 || strncmp(t + pl->root_len, "/**/", 4) != 0)
			continue;
		head = t + pl->root_len + 4;
		end = strchr(head, '/');
		if (!end || end == head || strcspn(head, "*?[\\") < (size_t)(end - head) ||
		    (end - head == 4 && strncmp(head, ".git", 4) == 0))
			continue;
		for (size_t k = 0; k < pl->n_heads && !known; k++)
			known = strlen(pl->heads[k]) == (size_t)(end - head) &&
				strncmp(pl->heads[k], head, (size_t)(end - head)) == 0;
		if (!known)
			pl->heads[pl->n_heads++] = xstrndup(head, (size_t)(end - head));
	}
}

static bool plan_is_head(const struct plan *pl, const char *name)
{
	for (size_t i = 0; i < pl->n_heads; i++)
		if (strcmp(pl->heads[i], name) == 0)
			return true;
	return false;
}

/* DIR's subdirectories, recursively: those that hold a .git or a head
 * are nested projects.  The entry types readdir() gives spare an lstat()
 * per entry. */
static void plan_find_nested(struct plan *pl, const char *dir, int depth, unsigned *budget)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];
	struct stat st;

	if (!d)
		return;
	while (*budget && (de = readdir(d))) {
		bool is_dir = de->d_type == DT_DIR;

		(*budget)--;
		if (strcmp(de->d_name, ".git") == 0 || plan_is_head(pl, de->d_name)) {
			bool known = false;

			for (size_t i = 0; i < pl->n_nested && !known; i++)
				known = strcmp(pl->nested[i], dir) == 0;
			if (depth > 0 && !known && pl->n_nested < MASK_NESTED_MAX)
				pl->nested[pl->n_nested++] = xstrdup(dir);
			if (strcmp(de->d_name, ".git") == 0)
				continue;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    plan_no_projects(de->d_name) || depth + 1 >= MASK_NESTED_DEPTH + 1 ||
		    !plan_join(path, dir, de->d_name))
			continue;
		if (de->d_type == DT_UNKNOWN)
			is_dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if (is_dir)
			plan_find_nested(pl, path, depth + 1, budget);
	}
	if (!*budget || pl->n_nested == MASK_NESTED_MAX)
		pl->m->truncated = true;
	closedir(d);
}

static void plan_walk(struct plan *pl, enum rules_kind kind, const char *dir, const char *rest);

/* REST (after a "**" right below ROOT) in each nested project. */
static void plan_walk_nested(struct plan *pl, enum rules_kind kind, const char *rest)
{
	if (!pl->nested_found) {
		unsigned budget = MASK_NESTED_LISTED;

		pl->nested_found = true;
		plan_heads(pl);
		plan_find_nested(pl, pl->root, 0, &budget);
	}
	for (size_t i = 0; i < pl->n_nested; i++)
		plan_walk(pl, kind, pl->nested[i], rest);
}

/* The rest of pattern REST (after a '/') below the existing directory
 * DIR. */
static void plan_walk(struct plan *pl, enum rules_kind kind, const char *dir, const char *rest)
{
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
	char comp[NAME_MAX + 1], path[PATH_MAX];
	struct stat st;

	if (n == 0 || n > NAME_MAX) {
		if (n == 0 && !slash)
			plan_candidate(pl, kind, dir); /* a trailing '/' */
		return;
	}
	if (n == 2 && rest[0] == '*' && rest[1] == '*') {
		if (!slash) {
			plan_tree(pl, kind, dir);
		} else {
			plan_walk(pl, kind, dir, slash + 1); /* zero levels (above) */
			if (pl->root_len && strcmp(dir, pl->root) == 0)
				plan_walk_nested(pl, kind, slash + 1);
		}
		return;
	}
	if (plan_magic(rest, n)) {
		struct dirent *de;
		DIR *d = opendir(dir);

		if (!d)
			return;
		memcpy(comp, rest, n);
		comp[n] = '\0';
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (++pl->listed > MASK_MAX_LISTED) {
				pl->m->truncated = true;
				break;
			}
			if (!match_glob(comp, de->d_name) ||
			    !plan_join(path, dir, de->d_name))
				continue;
			if (!slash)
				plan_candidate(pl, kind, path);
			else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
				plan_walk(pl, kind, path, slash + 1);
		}
		closedir(d);
		return;
	}
	memcpy(comp, rest, n);
	comp[n] = '\0';
	if (!plan_join(path, dir, comp))
		return;
	if (!slash)
		plan_candidate(pl, kind, path);
	else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		plan_walk(pl, kind, path, slash + 1);
}

static int plan_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mask_entry *)a)->path, ((const struct mask_entry *)b)->path);
}

/* Parents before what lies beneath them (the order the child mounts
 * in), and nothing beneath an empty mask or inside a read-only tree but
 * the empty masks (a credential inside a protected tree). */
static void plan_normalize(struct mask *m)
{
	size_t w = 0;

	if (m->n > 1) /* no masks: no array, which qsort may not be given */
		qsort(m->v, m->n, sizeof(*m->v), plan_cmp);
	for (size_t i = 0; i < m->n; i++) {
		struct mask_entry *e = &m->v[i];
		bool drop = false;

		for (size_t j = 0; j < w && !drop; j++) {
			const struct mask_entry *up = &m->v[j];

			if (!plan_beneath(e->path, up->path, strlen(up->path)))
				continue;
			drop = up->kind == MASK_EMPTY_DIR || up->kind == MASK_EMPTY_FILE ||
			       (up->kind == MASK_READONLY && e->kind <= MASK_READONLY);
		}
		if (drop) {
			free(e->path);
			continue;
		}
		m->v[w++] = *e;
	}
	m->n = w;
	m->n_read = m->n_write = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].kind == MASK_READONLY)
			m->n_write++;
		else if (m->v[i].kind != MASK_PIN)
			m->n_read++;
	}
}

/* Splits absolute pattern TEXT, of literal prefix PREFIX bytes (struct
 * rules_pattern prefix_len), into its leading literal directories, into
 * DIR, and the rest after them, into *REST; false when that is "/" (no
 * such directory, or one too long to hold). */
static bool plan_split(const char *text, size_t prefix, char *dir, const char **rest)
{
	size_t cut = prefix;

	while (cut > 0 && text[cut] != '/')
		cut--;
	if (cut == 0 || cut >= PATH_MAX) {
		strcpy(dir, "/");
		*rest = text + 1;
		return false;
	}
	memcpy(dir, text, cut);
	dir[cut] = '\0';
	*rest = text + cut + 1;
	return true;
}

/* Where the walk of pattern TEXT starts: its leading literal directories
 * (${HOME}/.ssh of ${HOME}/.ssh/id_*), into DIR, when they exist with no
 * symlink in them; the rest of the pattern from *REST.  One lookup for
 * what would be an lstat() per component, and none for a directory the
 * rule before started from too (rules come in runs: ${ROOT}/..., ${HOME}/...). */
static bool plan_start(const char *text, size_t prefix, char *dir, const char **rest,
		       char *last_ok)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	long fd;

	if (!plan_split(text, prefix, dir, rest))
		return true; /* from "/" */
	if (strcmp(dir, last_ok) == 0)
		return true;
	if (plan_pseudo(dir))
		return false;
	fd = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	if (fd < 0)
		return false;
	close((int)fd);
	strcpy(last_ok, dir);
	return true;
}

/* Whether read deny pattern TEXT names objects the walk above may miss: a
 * "**" before more components (taken as zero levels), a pattern that is
 * not absolute, or one in /proc, /sys or /dev (never masked) other than
 * the /proc files of a process that the kernel's ptrace check guards,
 * which Landlock's scope refuses for any process outside the session. */
static bool plan_read_inexact(const char *text)
{
	static const char *const scoped[] = { "environ", "mem", "auxv", "maps", "smaps", "pagemap" };
	static const char proc[] = "/proc/[0-9]*/";

	if (text[0] != '/' || strstr(text, "**/"))
		return true;
	if (!plan_pseudo(text))
		return false;
	if (strncmp(text, proc, sizeof(proc) - 1) == 0)
		for (size_t i = 0; i < sizeof(scoped) / sizeof(scoped[0]); i++)
			if (strcmp(text + sizeof(proc) - 1, scoped[i]) == 0)
				return false;
	return true;
}

void mask_plan(struct mask *m, const struct rules_policy *p, const char *root, struct linked *l)
{
	static const enum rules_kind kinds[] = { RULES_KIND_READ, RULES_KIND_WRITE };
	struct plan pl = { .m = m, .linked = l, .root = root, .root_len = strlen(root), .p = p };
	char dir[PATH_MAX], last_ok[PATH_MAX] = "";
	const char *rest;

	/* ROOT "/" would make every write rule's object "inside the project". */
	if (pl.root_len < 2 || root[0] != '/')
		pl.root_len = 0;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct rules_span *sp = &p->span[kinds[k]][RULES_ACTION_DENY];

		if (kinds[k] == RULES_KIND_WRITE && !pl.root_len)
			continue;
		for (uint32_t i = 0; i < sp->count; i++) {
			const struct rules_rule *r = rules_rule_at(p, sp->first + i);
			const char *text = rules_string(p, r->pat.text);

			/* A rule with "under" is decided here without a lineage:
			 * its objects are not masked. */
			if (kinds[k] == RULES_KIND_READ && (plan_read_inexact(text) || r->under_count))
				m->read_inexact = true;
			if (text[0] == '/' && !plan_pseudo(text) &&
			    plan_start(text, r->pat.prefix_len, dir, &rest, last_ok))
				plan_walk(&pl, kinds[k], dir, rest);
		}
	}
	plan_normalize(m);
	for (size_t i = 0; i < pl.n_nested; i++)
		free(pl.nested[i]);
	for (size_t i = 0; i < pl.n_heads; i++)
		free(pl.heads[i]);
}

/* ---- the read alert rules' objects ---- */

/* Bounds of the look: it is made once, in the supervisor's thread. */
#define ALERTS_MAX_LISTED 4096
#define ALERTS_MAX_DEPTH 32

#define ALERTS_MAX_SKIPPED 8

struct alerts_look {
	const struct rules_policy *p;
	bool any;          /* the rule has "under": any object it names counts */
	/* Directories whose names the rule's exceptions admit wholly below
	 * its start (node_modules, for the default's .env rule): nothing in
	 * them is its. */
	const char *skip[ALERTS_MAX_SKIPPED];
	size_t skip_len[ALERTS_MAX_SKIPPED];
	size_t n_skip;
	unsigned listed;
	bool found; /* one exists, or the look could not tell */
};

static void alerts_candidate(struct alerts_look *w, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_READ, .path = path };
	struct rules_verdict v;
	struct stat st;

	if (w->found || lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
		return;
	/* Decided without a lineage, a rule with "under" would not match. */
	if (w->any || rules_decide(w->p, &ev, &v) < 0 || v.action == RULES_ACTION_ALERT)
		w->found = true;
}

static bool alerts_skipped(const struct alerts_look *w, const char *name)
{
	for (size_t i = 0; i < w->n_skip; i++)
		if (strlen(name) == w->skip_len[i] && strncmp(name, w->skip[i], w->skip_len[i]) == 0)
			return true;
	return false;
}

/* W's skipped names: each exception of rule R that is START, then "**",
 * then a literal NAME, then "**" (components). */
static void alerts_skips(struct alerts_look *w, const struct rules_rule *r, const char *start,
			 size_t start_len)
{
	const struct rules_pattern *pats =
		(const struct rules_pattern *)((const char *)w->p + w->p->patterns_off);

	w->n_skip = 0;
	for (uint32_t i = 0; i < r->unless_count && w->n_skip < ALERTS_MAX_SKIPPED; i++) {
		const char *u = rules_string(w->p, pats[r->unless_first + i].text), *name, *end;

		if (strncmp(u, start, start_len) != 0 || strncmp(u + start_len, "/**/", 4) != 0)
			continue;
		name = u + start_len + 4;
		end = strchr(name, '/');
		if (!end || end == name || strcmp(end, "/**") != 0 ||
		    plan_magic(name, (size_t)(end - name)))
			continue;
		w->skip[w->n_skip] = name;
		w->skip_len[w->n_skip++] = (size_t)(end - name);
	}
}

/* The rest REST (after a '/') of a pattern below directory DIR, "**" at
 * every depth. */
static void alerts_walk(struct alerts_look *w, const char *dir, const char *rest, int depth)
{
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);
	bool tree = n == 2 && rest[0] == '*' && rest[1] == '*';
	char comp[NAME_MAX + 1], path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (w->found)
		return;
	if (depth > ALERTS_MAX_DEPTH || n > NAME_MAX) {
		w->found = true;
		return;
	}
	if (n == 0) {
		if (!slash)
			alerts_candidate(w, dir);
		return;
	}
	if (tree && slash)
		alerts_walk(w, dir, slash + 1, depth); /* zero levels */
	if (!tree && !plan_magic(rest, n)) {
		memcpy(comp, rest, n);
		comp[n] = '\0';
		if (!plan_join(path, dir, comp))
			w->found = true;
		else if (!slash)
			alerts_candidate(w, path);
		else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			alerts_walk(w, path, slash + 1, depth + 1);
		return;
	}
	if (!(d = opendir(dir))) {
		if (errno != ENOENT && errno != ENOTDIR)
			w->found = true;
		return;
	}
	memcpy(comp, rest, n);
	comp[n] = '\0';
	while (!w->found && (de = readdir(d))) {
		bool is_dir;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->listed > ALERTS_MAX_LISTED || !plan_join(path, dir, de->d_name)) {
			w->found = true;
			break;
		}
		is_dir = de->d_type == DT_DIR ||
			 (de->d_type == DT_UNKNOWN && lstat(path, &st) == 0 && S_ISDIR(st.st_mode));
		if (is_dir && alerts_skipped(w, de->d_name))
			continue;
		if (tree) {
			/* One more level of "**". */
			if (!slash)
				alerts_candidate(w, path);
			if (is_dir)
				alerts_walk(w, path, rest, depth + 1);
		} else if (match_glob(comp, de->d_name)) {
			if (!slash)
				alerts_candidate(w, path);
			else if (is_dir)
				alerts_walk(w, path, slash + 1, depth + 1);
		}
	}
	closedir(d);
}

bool mask_plan_read_alerts_exist(const struct rules_policy *p)
{
	const struct rules_span *sp = &p->span[RULES_KIND_READ][RULES_ACTION_ALERT];
	struct alerts_look w = { .p = p };

	for (uint32_t i = 0; i < sp->count && !w.found; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);
		const char *text = rules_string(p, r->pat.text), *rest;
		char dir[PATH_MAX];
		int fd;

		if (text[0] != '/' || plan_pseudo(text))
			return true;
		/* Symlinks on the way are followed: the alerted objects are
		 * the reads that reach them, by any name. */
		plan_split(text, r->pat.prefix_len, dir, &rest);
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue; /* nothing of it exists */
			return true;
		}
		close(fd);
		w.any = r->under_count > 0;
		alerts_skips(&w, r, dir, strcmp(dir, "/") ? strlen(dir) : 0);
		alerts_walk(&w, dir, rest, 0);
	}
	return w.found;
}
