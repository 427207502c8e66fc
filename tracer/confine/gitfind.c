/* Where git finds a repository, judged when the session ends (gitfind.h).
 *
 * git's discovery (setup.c in git's sources), from a working directory
 * up: DIR/.git, a directory that is a git directory or a file
 * "gitdir: PATH"; else DIR itself when it is a git directory (a bare
 * repository).  A git directory G is one with a valid HEAD, objects and
 * refs, the latter two in the directory G/commondir names when there is
 * one.  git then reads COMMON/config, G/config.worktree and runs
 * COMMON/hooks.  Here "HEAD exists" is enough to be looked at: judging
 * one that git would not take costs nothing but the look. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "rules/gitconfig.h"
#include "rules/rules.h"
#include "tracer/confine/gitfind.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/record/record.h"
#include "tracer/session.h"

/* Names whose writing can make a directory a git directory, or change
 * the one it is. */
static const char *const gitfind_names[] = {
	".git", "HEAD", "commondir", "config", "config.worktree", "objects", "refs",
};

/* What a noted directory is looked at for. */
enum {
	GITFIND_NAMED = 1, /* a name above was written in it: itself and its .git */
	GITFIND_MOVED = 2, /* something was renamed, linked or symlinked into it */
	GITFIND_INDEX = 4, /* a .git whose index was written: its gitlinks */
};

/* The suffix of a name renamed out of git's way: a link so named is not
 * looked at again (the user keeps it, or renames it back). */
#define GITFIND_REFUSED ".agenttrace-refused"

static bool gitfind_was_refused(const char *name)
{
	return strstr(name, GITFIND_REFUSED) != NULL;
}

/* Bounds of the look at the end: entries read, and depth. */
#define GITFIND_WALK_ENTRIES 1000000
#define GITFIND_WALK_DEPTH 64
/* Git directories judged in one session's end, told apart. */
#define GITFIND_JUDGED 4096

void gitfind_start(struct gitfind *g, const char *root)
{
	size_t n;

	memset(g, 0, sizeof(*g));
	if (!root || root[0] != '/')
		return;
	n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	g->root = xstrndup(root, n);
	g->root_len = n == 1 ? 0 : n;
}

static bool gitfind_named(const char *base)
{
	for (size_t i = 0; i < sizeof(gitfind_names) / sizeof(gitfind_names[0]); i++)
		if (!strcmp(base, gitfind_names[i]))
			return true;
	return false;
}

/* Whether the LEN bytes at PATH hold the component NAME. */
static bool gitfind_has_component(const char *path, size_t len, const char *name)
{
	size_t k = strlen(name);

	for (const char *p = path; (p = memmem(p, len - (size_t)(p - path), name, k)); p++)
		if (p > path && p[-1] == '/' && (p + k == path + len || p[k] == '/'))
			return true;
	return false;
}

/* Adds DIR (LEN bytes) with FLAGS; false when the set is full. */
static bool gitfind_add(struct gitfind *g, const char *dir, size_t len, unsigned flags,
			const struct tracee *t)
{
	uint64_t h = hash_fnv1a(dir, len) ^ flags;
	size_t i;

	if (g->n * 2 >= g->set_cap) {
		size_t cap = g->set_cap ? g->set_cap * 2 : 256;
		size_t *set = xcalloc(cap, sizeof(*set));

		for (size_t k = 0; k < g->n; k++) {
			for (i = g->v[k].hash & (cap - 1); set[i]; i = (i + 1) & (cap - 1))
				;
			set[i] = k + 1;
		}
		free(g->set);
		g->set = set;
		g->set_cap = cap;
		g->v = xrealloc(g->v, cap / 2 * sizeof(*g->v));
	}
	for (i = h & (g->set_cap - 1); g->set[i]; i = (i + 1) & (g->set_cap - 1)) {
		const struct gitfind_dir *d = &g->v[g->set[i] - 1];

		if (d->hash == h && d->flags == flags && !strncmp(d->path, dir, len) && !d->path[len])
			return true;
	}
	if (g->n == GITFIND_DIRS)
		return false;
	g->set[i] = g->n + 1;
	g->v[g->n] = (struct gitfind_dir){
		.path = xstrndup(dir, len),
		.hash = h,
		.flags = flags,
		.pid = t ? t->tgid : 0,
		.info = t && t->info ? tracee_info_ref(t->info) : NULL,
	};
	g->n++;
	return true;
}

void gitfind_note(struct gitfind *g, const char *syscall, const char *path,
		  const struct tracee *t)
{
	const char *slash;
	size_t dir_len;
	bool in_git, moves;
	unsigned flags = 0;

	if (!g->root || g->overflow || strncmp(path, g->root, g->root_len) != 0 ||
	    path[g->root_len] != '/')
		return;
	slash = strrchr(path, '/');
	dir_len = slash == path ? 1 : (size_t)(slash - path);
	if (gitfind_named(slash + 1))
		flags |= GITFIND_NAMED;
	/* git status goes into every gitlink of the index that has a .git */
	if (!strcmp(slash + 1, "index") && dir_len >= 5 && !memcmp(slash - 5, "/.git", 5))
		flags |= GITFIND_INDEX;
	moves = !strncmp(syscall, "rename", 6) || !strncmp(syscall, "link", 4) ||
		!strncmp(syscall, "symlink", 7);
	in_git = gitfind_has_component(path, dir_len, ".git");
	if (moves) {
		/* git's own renames in its directory (objects, refs, the
		 * index) reach no configuration; a directory moved to a
		 * repository's git directory's place does, and a link
		 * anywhere leads git where it leads. */
		size_t k = dir_len;

		while (k > 0 && path[k - 1] != '/')
			k--;
		if (!in_git || !strncmp(syscall, "symlink", 7) ||
		    (dir_len - k == 7 && !memcmp(path + k, "modules", 7)) ||
		    (dir_len - k == 9 && !memcmp(path + k, "worktrees", 9)))
			flags |= GITFIND_MOVED;
	}
	/* A package tree is not walked for what was moved into it (npm
	 * moves every package), but what is named there is looked at. */
	if ((flags & GITFIND_MOVED) && gitfind_has_component(path, dir_len, "node_modules"))
		flags &= ~(unsigned)GITFIND_MOVED;
	if (!flags)
		return;
	if (!gitfind_add(g, path, dir_len, flags, t))
		g->overflow = true;
}

/* ---- the look at the end ---- */

struct gitfind_look {
	struct session *s;
	const struct rules_policy *p;
	const char *rule;          /* the rule judging ${ROOT}/.git/config, named in records */
	bool audit;
	bool since;                /* the walk of ${ROOT}: only what changed in the session */
	struct timespec start;
	size_t entries;
	bool cut;                  /* a bound was reached */
	uint64_t judged[GITFIND_JUDGED];
	size_t n_judged;
	/* Who is named in the records: the process that wrote the noted
	 * directory (PID 0: the command; record_end_write()). */
	pid_t pid;
	const struct tracee_info *info;
};

/* DIR "/" NAME in OUT (PATH_MAX): false when it does not fit. */
static bool gitfind_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	return n > 0 && n < PATH_MAX;
}

static bool gitfind_changed(const struct gitfind_look *l, const struct stat *st)
{
	return st->st_ctim.tv_sec > l->start.tv_sec ||
	       (st->st_ctim.tv_sec == l->start.tv_sec && st->st_ctim.tv_nsec >= l->start.tv_nsec);
}

static bool gitfind_changed_at(const struct gitfind_look *l, const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && gitfind_changed(l, &st);
}

static bool gitfind_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Whether a write deny rule names DIR/NAME (CONTENT: by its content). */
static bool gitfind_ruled(const struct rules_policy *p, const char *dir, const char *name,
			  bool content)
{
	char path[PATH_MAX];

	return gitfind_join(path, dir, name) && rules_deny_names(p, path, content);
}

/* Whether the policy refuses every write of DIR/NAME: no session
 * could have put it there (a sibling project of the user's). */
static bool gitfind_unwritable(const struct rules_policy *p, const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct rules_verdict v;

	return gitfind_join(path, dir, name) && rules_decide(p, &ev, &v) == 0 &&
	       v.action == RULES_ACTION_DENY;
}

static void gitfind_record(struct gitfind_look *l, const char *path, const char *why,
			   const char *detail)
{
	record_end_write(l->s, l->pid, l->info, path, l->rule, why, detail, l->audit);
}

/* COMMON/config or G/config.worktree (at PATH) read as git reads it:
 * NULL when it runs nothing, else why (in WHY). */
static const char *gitfind_config_runs(const char *path, char *why, size_t cap)
{
	char real[PATH_MAX];
	struct gitconfig_verdict v;
	char *text;
	size_t len;
	int r;

	/* git follows a link at the name; nothing of the session runs now */
	if (!realpath(path, real))
		return errno == ENOENT ? NULL : (snprintf(why, cap, "%s cannot be read", path), why);
	r = readfile_at(AT_FDCWD, real, GITCONFIG_MAX, &text, &len, NULL);
	if (r == -ENOENT)
		return NULL;
	if (r < 0) {
		snprintf(why, cap, "%s cannot be judged (%s)", path,
			 r == -EFBIG ? "too large" : strerror(-r));
		return why;
	}
	gitconfig_judge(text, len, NULL, 0, &v);
	free(text);
	if (v.outcome == GITCONFIG_CLEAN)
		return NULL;
	if (v.outcome == GITCONFIG_RUNS)
		snprintf(why, cap, "%s sets %s (line %u): %s", path, v.name, v.line, v.what);
	else
		snprintf(why, cap, "%s is not a configuration agenttrace reads as git does (line %u: %s)",
			 path, v.line, v.what ? v.what : "unreadable");
	return why;
}

/* The first hook in HOOKS: NULL for none (a sample is none). */
static const char *gitfind_hook(const char *hooks, char *why, size_t cap)
{
	DIR *d = opendir(hooks);
	struct dirent *e;
	const char *found = NULL;

	if (!d)
		return NULL;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (n > 7 && !strcmp(e->d_name + n - 7, ".sample")))
			continue;
		if (snprintf(why, cap, "%s/%s runs at git's next commit, checkout or merge", hooks,
			     e->d_name) < 0)
			why[0] = '\0';
		found = why;
	}
	closedir(d);
	return found;
}

/* ENTRY renamed out of git's way; the name it got in TO. */
static bool gitfind_move_aside(const char *entry, char *to, size_t cap)
{
	for (int i = 0; i < 100; i++) {
		int n = i ? snprintf(to, cap, "%s" GITFIND_REFUSED ".%d", entry, i)
			  : snprintf(to, cap, "%s" GITFIND_REFUSED, entry);

		if (n < 0 || (size_t)n >= cap)
			return false;
		if (renameat2(AT_FDCWD, entry, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
			return true;
		if (errno != EEXIST)
			return false;
	}
	return false;
}

/* GIT, a directory git could take as a git directory, reached by the
 * name ENTRY (a .git file, a link, a commondir, or GIT/HEAD), which
 * HOW describes.  CHANGED: what the session changed, when only that is
 * judged. */
static void gitfind_judge(struct gitfind_look *l, const char *git, const char *entry,
			  const char *how, bool changed)
{
	char real[PATH_MAX], common[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	char why[PATH_MAX + 256], text[PATH_MAX * 2 + 512], to[PATH_MAX];
	const char *runs;
	char *cd = NULL;
	size_t cd_len;
	uint64_t h;
	int r;

	if (!realpath(git, real) || !gitfind_join(path, real, "HEAD") || !gitfind_exists(path))
		return;
	h = hash_text(real) ^ hash_text(entry);
	for (size_t i = 0; i < l->n_judged; i++)
		if (l->judged[i] == h)
			return;
	if (l->n_judged < GITFIND_JUDGED)
		l->judged[l->n_judged++] = h;

	/* The common directory, where the configuration and hooks are. */
	if (!gitfind_join(path, real, "commondir"))
		return;
	r = readfile_at(AT_FDCWD, path, PATH_MAX - 1, &cd, &cd_len, NULL);
	if (r == 0) {
		cd_len = strcspn(cd, "\n");
		cd[cd_len] = '\0';
		r = cd[0] == '/' ? snprintf(dir, sizeof(dir), "%s", cd) :
				   snprintf(dir, sizeof(dir), "%s/%s", real, cd);
		free(cd);
		if (r < 0 || r >= (int)sizeof(dir) || !realpath(dir, common))
			return; /* git finds no repository there */
		if (l->since)
			changed = changed || gitfind_changed_at(l, path);
	} else {
		memcpy(common, real, strlen(real) + 1);
	}
	if (!gitfind_join(path, common, "config") || !gitfind_join(to, real, "config.worktree"))
		return;
	if (l->since && !changed && !gitfind_changed_at(l, path))
		return;

	/* Where the write rules name each file, the session's writes of it
	 * were judged (or let through by the user's own exception). */
	if (gitfind_ruled(l->p, common, "config", true) &&
	    gitfind_ruled(l->p, common, "hooks/pre-commit", false) &&
	    (!strcmp(common, real) || gitfind_ruled(l->p, real, "config.worktree", true)))
		return;
	/* Where the policy lets no one write them, the session did not. */
	if (gitfind_unwritable(l->p, common, "config") &&
	    gitfind_unwritable(l->p, common, "hooks/pre-commit") &&
	    (!strcmp(common, real) || gitfind_unwritable(l->p, real, "config.worktree")))
		return;

	runs = gitfind_config_runs(path, why, sizeof(why));
	if (!runs)
		runs = gitfind_config_runs(to, why, sizeof(why));
	if (!runs && gitfind_join(dir, common, "hooks"))
		runs = gitfind_hook(dir, why, sizeof(why));
	if (!runs)
		return;
	if (l->audit) {
		snprintf(text, sizeof(text), "%s leads git to %s, where no write rule judged its "
			 "configuration and hooks: %s", how, real, runs);
		gitfind_record(l, entry, text, NULL);
		return;
	}
	if (gitfind_move_aside(entry, to, sizeof(to)))
		snprintf(text, sizeof(text), "%s leads git to %s, where no write rule judged its "
			 "configuration and hooks: %s; renamed to %s, out of git's way (rename it "
			 "back if that repository is yours)", how, real, runs, to);
	else
		snprintf(text, sizeof(text), "%s leads git to %s, where no write rule judged its "
			 "configuration and hooks: %s; it could not be renamed out of git's way (%s)",
			 how, real, runs, strerror(errno));
	gitfind_record(l, entry, text, NULL);
}

/* PATH, a ".git" file: the directory it names, reached by ENTRY (PATH,
 * or a link to its directory). */
static void gitfind_gitfile(struct gitfind_look *l, const char *path, const char *entry,
			    bool changed)
{
	char target[PATH_MAX], *text;
	const char *slash;
	size_t len;

	if (readfile_at(AT_FDCWD, path, PATH_MAX, &text, &len, NULL) < 0)
		return;
	/* git: "gitdir: " and a path, white space at its end dropped; a
	 * relative one from the file's directory */
	if (len < 8 || memcmp(text, "gitdir: ", 8) != 0) {
		free(text);
		return; /* git refuses it and goes no further */
	}
	while (len > 8 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
			   text[len - 1] == '\t'))
		len--;
	text[len] = '\0';
	slash = strrchr(path, '/');
	if (text[8] == '/')
		snprintf(target, sizeof(target), "%s", text + 8);
	else
		snprintf(target, sizeof(target), "%.*s/%s", (int)(slash - path), path, text + 8);
	free(text);
	if (l->since)
		changed = changed || gitfind_changed_at(l, path);
	gitfind_judge(l, target, entry, "a .git file", changed);
}

static void gitfind_walk(struct gitfind_look *l, char *path, size_t n, unsigned depth, bool changed);
static void gitfind_index(struct gitfind_look *l, char *path, size_t n);

/* PATH, a symbolic link: a git directory it leads to, or one the
 * directory it leads to finds by its .git.  git works in the physical
 * directory, so a `cd` through the link makes the target's .git git's
 * first look.  The link is what is renamed out of git's way. */
static void gitfind_link(struct gitfind_look *l, const char *path, bool changed)
{
	char real[PATH_MAX], git[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (l->since)
		changed = changed || gitfind_changed_at(l, path);
	gitfind_judge(l, real, path, "a symbolic link", changed);
	if (!gitfind_join(git, real, ".git") || lstat(git, &st) < 0)
		return;
	if (S_ISREG(st.st_mode))
		gitfind_gitfile(l, git, path, changed);
	else
		gitfind_judge(l, git, path, "a symbolic link", changed);
}

/* DIR (PATH, N bytes, PATH_MAX): itself and its .git. */
static void gitfind_dir(struct gitfind_look *l, char *path, size_t n, bool changed)
{
	struct stat st;

	if (n + sizeof("/HEAD") > PATH_MAX)
		return;
	memcpy(path + n, "/HEAD", sizeof("/HEAD"));
	if (lstat(path, &st) == 0) {
		char entry[PATH_MAX];

		memcpy(entry, path, n + sizeof("/HEAD"));
		path[n] = '\0';
		gitfind_judge(l, path, entry, "a directory that looks like a git directory",
			      changed || (l->since && gitfind_changed(l, &st)));
	}
	memcpy(path + n, "/.git", sizeof("/.git"));
	if (lstat(path, &st) == 0) {
		bool ch = changed || (l->since && gitfind_changed(l, &st));

		if (S_ISREG(st.st_mode)) {
			gitfind_gitfile(l, path, path, ch);
		} else if (S_ISLNK(st.st_mode)) {
			gitfind_link(l, path, ch);
		} else if (S_ISDIR(st.st_mode) && n + sizeof("/.git/HEAD") <= PATH_MAX) {
			char entry[PATH_MAX];

			memcpy(entry, path, n + sizeof("/.git"));
			memcpy(entry + n + 5, "/HEAD", sizeof("/HEAD"));
			gitfind_judge(l, path, entry, "a repository's .git", ch);
		}
	}
	path[n] = '\0';
}

/* DIR (PATH, N bytes, PATH_MAX) and everything below it; in a git
 * directory only the git directories it holds (modules, worktrees).
 * CHANGED: the session changed DIR or a directory above it. */
static void gitfind_walk(struct gitfind_look *l, char *path, size_t n, unsigned depth, bool changed)
{
	struct stat dst;
	bool is_git;
	DIR *d;
	struct dirent *e;

	if (l->cut)
		return;
	if (l->since && lstat(path, &dst) == 0 && gitfind_changed(l, &dst))
		changed = true;
	gitfind_dir(l, path, n, changed);
	if (l->since && n + sizeof("/.git/index") <= PATH_MAX) {
		/* Nothing noted: a repository whose index or configuration
		 * changed has its gitlinks looked at, wherever they lead
		 * (node_modules too). */
		memcpy(path + n, "/.git/index", sizeof("/.git/index"));
		bool index = gitfind_changed_at(l, path);

		memcpy(path + n, "/.git/config", sizeof("/.git/config"));
		if (index || gitfind_changed_at(l, path)) {
			path[n + 5] = '\0';
			gitfind_index(l, path, n + 5);
		}
	}
	memcpy(path + n, "/HEAD", sizeof("/HEAD"));
	is_git = gitfind_exists(path);
	path[n] = '\0';
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		unsigned char type = e->d_type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "node_modules"))
			continue;
		if (++l->entries > GITFIND_WALK_ENTRIES || n + 1 + len >= PATH_MAX) {
			l->cut = true;
			break;
		}
		/* In a git directory, only the git directories it holds. */
		if (is_git && strcmp(e->d_name, "modules") && strcmp(e->d_name, "worktrees"))
			continue;
		path[n] = '/';
		memcpy(path + n + 1, e->d_name, len + 1);
		if (type == DT_UNKNOWN) {
			struct stat st;

			type = lstat(path, &st) < 0 ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR :
			       S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_LNK && strcmp(e->d_name, ".git") && !gitfind_was_refused(e->d_name)) {
			gitfind_link(l, path, changed);
		} else if (type == DT_DIR) {
			if (depth + 1 >= GITFIND_WALK_DEPTH)
				l->cut = true;
			else
				gitfind_walk(l, path, n + 1 + len, depth + 1, changed);
		}
		path[n] = '\0';
	}
	closedir(d);
}

/* ---- the gitlinks of an index ---- */

/* An index read, and the gitlinks looked at in it. */
#define GITFIND_INDEX_MAX (256u << 20)
#define GITFIND_GITLINKS 4096

static uint32_t gitfind_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The gitlinks (mode 160000: submodules) of the index TEXT (LEN bytes)
 * of a repository whose objects are named in HASH bytes (20: SHA-1, 32:
 * SHA-256), each passed to FN with the work tree WORK.  gitformat-index(5):
 * "DIRC", version 2, 3 or 4, the entry count, then the entries sorted by
 * path; version 4 spells each path as what it keeps of the previous one
 * and the rest.  False when TEXT is no index this reads. */
static bool gitfind_index_each(struct gitfind_look *l, const unsigned char *text, size_t len,
			       size_t hash, char *work, size_t work_n)
{
	char prev[PATH_MAX] = "";
	size_t prev_n = 0, at = 12, seen = 0;
	uint32_t version, count;

	if (len < 12 || memcmp(text, "DIRC", 4) != 0)
		return false;
	version = gitfind_be32(text + 4);
	count = gitfind_be32(text + 8);
	if (version < 2 || version > 4)
		return false;
	for (uint32_t e = 0; e < count; e++) {
		size_t fixed = 40 + hash + 2, start = at, name_n;
		const unsigned char *name;
		uint32_t mode;
		uint16_t flags;

		if (at + fixed > len)
			return false;
		mode = gitfind_be32(text + at + 24);
		flags = (uint16_t)(text[at + fixed - 2] << 8 | text[at + fixed - 1]);
		at += fixed;
		if (flags & 0x4000) { /* extended flags (version 3 and up) */
			if (version < 3 || at + 2 > len)
				return false;
			at += 2;
		}
		if (version == 4) {
			size_t drop = 0;
			unsigned char b;

			/* git's offset varint: 7 bits a byte, each continuation
			 * adding one before the shift */
			do {
				if (at >= len)
					return false;
				b = text[at++];
				drop = (drop << 7) | (b & 0x7f);
				if (b & 0x80)
					drop++;
			} while ((b & 0x80) && drop < PATH_MAX);
			if (drop > prev_n)
				return false;
			prev_n -= drop;
		} else {
			prev_n = 0;
		}
		name = text + at;
		name_n = strnlen((const char *)name, len - at);
		if (at + name_n >= len || prev_n + name_n >= sizeof(prev))
			return false;
		memcpy(prev + prev_n, name, name_n + 1);
		prev_n += name_n;
		at += name_n + 1;
		if (version != 4) /* NULs up to a multiple of 8 from the entry's start */
			at = start + ((at - start + 7) & ~(size_t)7);
		if ((mode & 0170000) != 0160000 || work_n + 1 + prev_n >= PATH_MAX)
			continue;
		if (++seen > GITFIND_GITLINKS) {
			l->cut = true;
			return true;
		}
		work[work_n] = '/';
		memcpy(work + work_n + 1, prev, prev_n + 1);
		gitfind_dir(l, work, work_n + 1 + prev_n, true);
		work[work_n] = '\0';
	}
	return true;
}

static int gitfind_worktree_of(const struct gitconfig_entry *e, void *arg)
{
	char *out = arg;

	if (strcmp(e->name, "core.worktree") != 0 || !e->value || e->value_len >= PATH_MAX)
		return 0;
	memcpy(out, e->value, e->value_len);
	out[e->value_len] = '\0';
	return 0; /* the last one counts */
}

/* The work tree core.worktree gives the git directory GIT into WORK
 * (PATH_MAX): false when it sets none. */
static bool gitfind_worktree(const char *git, char *work)
{
	char path[PATH_MAX], value[PATH_MAX] = "", *text;
	size_t len;
	int n;

	if (!gitfind_join(path, git, "config") ||
	    readfile_at(AT_FDCWD, path, GITCONFIG_MAX, &text, &len, NULL) < 0)
		return false;
	gitconfig_each(text, len, gitfind_worktree_of, value, NULL, NULL);
	free(text);
	if (!value[0])
		return false;
	n = value[0] == '/' ? snprintf(path, sizeof(path), "%s", value)
			    : snprintf(path, sizeof(path), "%s/%s", git, value);
	return n > 0 && n < (int)sizeof(path) && realpath(path, work);
}

/* GIT (PATH, N bytes, a directory named .git) whose index or
 * configuration the session wrote: the gitlinks of its index, in its
 * work tree (its parent, or where core.worktree puts it), each of which
 * git status goes into. */
static void gitfind_index(struct gitfind_look *l, char *path, size_t n)
{
	char index[PATH_MAX], work[PATH_MAX];
	unsigned char *text;
	size_t len, work_n;

	if (n < 5 || !gitfind_join(index, path, "index") ||
	    readfile_at(AT_FDCWD, index, GITFIND_INDEX_MAX, (char **)&text, &len, NULL) < 0)
		return;
	if (!gitfind_worktree(path, work)) {
		memcpy(work, path, n - 5);
		work[n - 5] = '\0';
	}
	work_n = strlen(work);
	if (!gitfind_index_each(l, text, len, 20, work, work_n) &&
	    !gitfind_index_each(l, text, len, 32, work, work_n))
		l->cut = true; /* an index this cannot read: said */
	free(text);
}

/* A directory the session moved something into: the links and
 * directories in it that the session changed, and all they hold. */
static void gitfind_moved(struct gitfind_look *l, char *path, size_t n)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, "node_modules") || !strcmp(e->d_name, ".git") ||
		    (e->d_type != DT_DIR && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN))
			continue;
		if (n + 1 + len >= PATH_MAX) {
			l->cut = true;
			continue;
		}
		path[n] = '/';
		memcpy(path + n + 1, e->d_name, len + 1);
		if (lstat(path, &st) == 0 && gitfind_changed(l, &st)) {
			if (S_ISLNK(st.st_mode) && !gitfind_was_refused(e->d_name))
				gitfind_link(l, path, true);
			else if (S_ISDIR(st.st_mode))
				gitfind_walk(l, path, n + 1 + len, 1, true);
		}
		path[n] = '\0';
	}
	closedir(d);
}

void gitfind_finish(struct session *s, struct gitfind *g)
{
	static struct gitfind_look l;
	char path[PATH_MAX], work[PATH_MAX];
	const struct rules_rule *r;

	if (!g->root)
		return;
	/* The policy's own rule for a repository's configuration: without
	 * one, the user judges none. */
	if (!gitfind_join(path, g->root_len ? g->root : "", ".git/config") ||
	    !(r = rules_deny_names(s->policy, path, true)))
		return;
	memset(&l, 0, sizeof(l));
	l.s = s;
	l.p = s->policy;
	l.rule = rules_string(s->policy, r->id);
	l.audit = s->policy->mode == RULES_MODE_AUDIT;
	l.start = s->started_coarse;
	if (s->preload_only || g->overflow) {
		/* Nothing noted, or not all: what changed anywhere. */
		l.since = true;
		snprintf(path, sizeof(path), "%s", g->root_len ? g->root : "/");
		gitfind_walk(&l, path, g->root_len, 0, false);
	} else {
		for (size_t i = 0; i < g->n && !l.cut; i++) {
			size_t n = strlen(g->v[i].path);

			if (n >= sizeof(path))
				continue;
			memcpy(path, g->v[i].path, n + 1);
			l.pid = g->v[i].info ? g->v[i].pid : 0;
			l.info = g->v[i].info;
			if (g->v[i].flags & GITFIND_NAMED)
				gitfind_dir(&l, path, n, true);
			if (g->v[i].flags & GITFIND_MOVED)
				gitfind_moved(&l, path, n);
			/* a configuration written may have moved the work tree */
			if ((g->v[i].flags & GITFIND_INDEX) ||
			    ((g->v[i].flags & GITFIND_NAMED) && n >= 5 &&
			     !strcmp(path + n - 5, "/.git") && gitfind_worktree(path, work)))
				gitfind_index(&l, path, n);
		}
	}
	if (l.cut) {
		l.pid = 0;
		l.audit = true; /* nothing to rename: said, not refused */
		gitfind_record(&l, g->root, "the session changed more than agenttrace looks at when it "
			       "ends: not every place where git finds a repository in it was judged",
			       NULL);
	}
}

void gitfind_free(struct gitfind *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].path);
		tracee_info_unref(g->v[i].info);
	}
	free(g->v);
	free(g->set);
	free(g->root);
	memset(g, 0, sizeof(*g));
}
