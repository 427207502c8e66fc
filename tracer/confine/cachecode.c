/* Code put into a cache (cachecode.h).  Judged before the call runs, on
 * what is at the path then: the call may still fail, which costs a
 * needless alert, never a missed one. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/confine/cachecode.h"
#include "tracer/record/record.h"
#include "tracer/session.h"

#define CACHECODE_RULE "write.cache-code"
/* A directory renamed in: how far it is looked into. */
#define CACHECODE_SCAN_ENTRIES 4096
#define CACHECODE_SCAN_DEPTH 8

static bool cachecode_is(const char *name, const char *a, const char *b, const char *c)
{
	return strcmp(name, a) == 0 || strcmp(name, b) == 0 || (c && strcmp(name, c) == 0);
}

static bool cachecode_pth(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".pth") == 0;
}

/* Files of a git repository that are executable but never run: the
 * sample hooks git init copies ("hooks/NAME.sample": git runs no hook so
 * named) and the repository's config, which git chmods like its other
 * files.  A clone in a package manager's cache (yarn's, go's, pnpm's
 * store) has them all. */
static bool cachecode_git_inert(const char *dir, size_t dir_len, const char *name)
{
	size_t n = strlen(name);

	if (dir_len >= 5 && strncmp(dir + dir_len - 5, "hooks", 5) == 0 &&
	    (dir_len == 5 || dir[dir_len - 6] == '/'))
		return n > 7 && strcmp(name + n - 7, ".sample") == 0;
	if (dir_len >= 4 && strncmp(dir + dir_len - 4, ".git", 4) == 0 &&
	    (dir_len == 4 || dir[dir_len - 5] == '/'))
		return strcmp(name, "config") == 0;
	return false;
}

/* cachecode_git_inert() of a whole path. */
static bool cachecode_git_inert_path(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && cachecode_git_inert(path, (size_t)(slash - path), slash + 1);
}

/* Executable regular files in the tree at DIR (bounded): how many. */
static unsigned cachecode_scan(int dir, const char *name, unsigned depth, unsigned *budget)
{
	DIR *d = fdopendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d) {
		close(dir);
		return 0;
	}
	while (*budget && (e = readdir(d))) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		(*budget)--;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(st.st_mode) && ((st.st_mode & 0111) || cachecode_pth(e->d_name))) {
			n += !cachecode_git_inert(name, strlen(name), e->d_name);
		} else if (S_ISDIR(st.st_mode) && depth < CACHECODE_SCAN_DEPTH) {
			int sub = openat(dirfd(d), e->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				n += cachecode_scan(sub, e->d_name, depth + 1, budget);
		}
	}
	closedir(d);
	return n;
}

/* What event I of C makes code of, said in WHY; false: nothing. */
static bool cachecode_makes(const struct call *c, size_t i, char *why, size_t size)
{
	const char *path = c->events[i].path;
	struct stat st;
	bool exists = lstat(path, &st) == 0;

	if (cachecode_git_inert_path(path))
		return false;
	if (c->is_open && (c->flags & O_CREAT) && !exists) {
		if (c->open_mode & 0111) {
			snprintf(why, size, "created executable (mode %04o)", c->open_mode & 07777);
			return true;
		}
		if (cachecode_pth(path)) {
			snprintf(why, size, "a .pth file, which Python runs at its start");
			return true;
		}
		return false;
	}
	if (c->is_chmod) {
		if ((c->chmod_mode & 0111) && exists && S_ISREG(st.st_mode) && !(st.st_mode & 0111)) {
			snprintf(why, size, "made executable (chmod %04o)", c->chmod_mode & 07777);
			return true;
		}
		return false;
	}
	/* The new name of a rename or a link: what the old one holds. */
	if (i == 1 && c->n_events >= 2 &&
	    (cachecode_is(c->name, "rename", "renameat", "renameat2") ||
	     cachecode_is(c->name, "link", "linkat", NULL))) {
		const char *from = c->events[0].path;
		struct stat fs;

		if (lstat(from, &fs) < 0)
			return false;
		if (S_ISREG(fs.st_mode) && (fs.st_mode & 0111)) {
			snprintf(why, size, "an executable moved in (mode %04o)", fs.st_mode & 07777);
			return true;
		}
		if (S_ISREG(fs.st_mode) && cachecode_pth(path)) {
			snprintf(why, size, "a .pth file, which Python runs at its start");
			return true;
		}
		if (S_ISDIR(fs.st_mode)) {
			unsigned budget = CACHECODE_SCAN_ENTRIES;
			int d = open(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			const char *base = strrchr(from, '/');
			unsigned n = d >= 0 ? cachecode_scan(d, base ? base + 1 : from, 0, &budget) : 0;

			if (n) {
				snprintf(why, size, "a directory moved in with %u executable file%s%s", n,
					 n == 1 ? "" : "s", budget ? "" : " (or more)");
				return true;
			}
		}
	}
	return false;
}

bool cachecode_is_cache(const char *rule_id)
{
	size_t k = strlen(CACHECODE_RULE_PREFIX);

	return strncmp(rule_id, CACHECODE_RULE_PREFIX, k) == 0 && (!rule_id[k] || rule_id[k] == '.');
}

void cachecode_check(struct session *s, struct tracee *t, const struct call *c, size_t i,
		     const char *rule_id)
{
	char what[128], why[320];
	struct record r = { 0 };

	if (!cachecode_is_cache(rule_id))
		return;
	if (!cachecode_makes(c, i, what, sizeof(what)))
		return;
	if (s->cache_code++ >= CACHECODE_RECORDS) {
		/* Counted, not recorded: a browser download is hundreds. */
		session_count(s, SESSION_KIND_WRITE, RULES_ACTION_ALERT, CACHECODE_RULE);
		return;
	}
	snprintf(why, sizeof(why),
		 "code in a cache (%s): %s; later runs outside the session may execute it",
		 rule_id, what);
	record_who(&r, t);
	r.event = "alert";
	r.action = "alert";
	r.kind = SESSION_KIND_WRITE;
	r.syscall = c->name;
	r.port = -1;
	r.path = c->events[i].path;
	r.rule = CACHECODE_RULE;
	r.why = why;
	record_emit(s, &r);
}
