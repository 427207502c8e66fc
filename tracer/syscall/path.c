/* Path resolution in the tracee's view (see path.h for the contract).
 *
 * The walk keeps OUT as the resolved prefix (no trailing '/', "" for the
 * root) and REST as the text still to walk.  Each component appended to
 * OUT is lstat()ed once, only when its type matters: an intermediate
 * component, or a final one that is followed.  The kernel's own rules
 * (fs/namei.c) that matter here:
 *  - ".." of "/" is "/";
 *  - a symlink's target is walked from the link's directory, or from "/"
 *    when absolute, and at most 40 links are followed per lookup (ELOOP);
 *  - procfs "magic" links (/proc/PID/fd/N, cwd, root, exe, map_files/..)
 *    do not walk their text: they jump to the object itself.  Their
 *    readlink text is the kernel's d_path of that object, an absolute
 *    canonical path, or "pipe:[..]"-like text for objects outside the
 *    file-system tree;
 *  - a trailing '/' makes the last component a directory that is followed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/syscall/path.h"
#include "tracer/syscall/probe.h"

#define PATH_WORK (2 * PATH_MAX + 2)

/* readlink into BUF as a C string; -errno on failure. */
static int path_readlink(const char *name, char *buf, size_t size)
{
	ssize_t n = readlink(name, buf, size - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int path_fd(pid_t pid, int fd, char *out, size_t outsz)
{
	char name[64];
	int rc;

	if (fd == AT_FDCWD)
		snprintf(name, sizeof(name), "/proc/%d/cwd", (int)pid);
	else if (fd < 0)
		return -EBADF;
	else
		snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)pid, fd);
	rc = path_readlink(name, out, outsz);
	if (rc == -ENOENT) {
		/* No such fd, or no such process: tell them apart. */
		snprintf(name, sizeof(name), "/proc/%d", (int)pid);
		return access(name, F_OK) == 0 ? -EBADF : -ESRCH;
	}
	if (rc)
		return rc;
	return out[0] == '/' ? 0 : PATH_NOT_FS;
}

static bool path_is_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* True when OUT (a resolved path) names an entry below /proc/<digits>/:
 * every symlink there is a magic link. */
static bool path_in_proc_pid(const char *out)
{
	const char *p, *e;

	if (strncmp(out, "/proc/", 6) != 0)
		return false;
	p = out + 6;
	e = strchr(p, '/');
	return e && path_is_digits(p, (size_t)(e - p));
}

/* Replace /proc/self and /proc/thread-self (just appended to OUT) by the
 * tracee's own entries: the supervisor reading them would see itself. */
static int path_proc_magic_self(pid_t pid, char *out, size_t *len, size_t outsz)
{
	int n;

	if (*len == 10 && memcmp(out, "/proc/self", 10) == 0)
		n = snprintf(out, outsz, "/proc/%d", (int)pid);
	else if (*len == 17 && memcmp(out, "/proc/thread-self", 17) == 0)
		n = snprintf(out, outsz, "/proc/%d/task/%d", (int)pid, (int)pid);
	else
		return 0;
	if (n < 0 || (size_t)n >= outsz)
		return -ENAMETOOLONG;
	*len = (size_t)n;
	return 0;
}

static void path_pop(char *out, size_t *len)
{
	while (*len > 0 && out[*len - 1] != '/')
		(*len)--;
	if (*len > 0)
		(*len)--; /* the '/' itself; "" is the root */
	out[*len] = '\0';
}

/* Top-level names (the first component of an absolute name) seen to be
 * symlinks or not: merged-/usr systems make /bin, /lib, /lib64 and /sbin
 * links, and most execs and library opens go through one.  For a name
 * under a link, path_fast() asks the kernel to follow it at once (three
 * calls) instead of learning it from a refused lookup first (four) or
 * from the walk (five and more).  Only the order of the lookups depends
 * on this: each way gives the walk's answer, so a stale entry costs a
 * call, never a wrong path. */
#define PATH_TOPS 16
#define PATH_TOP_NAME 16

enum path_top { PATH_TOP_UNKNOWN, PATH_TOP_DIR, PATH_TOP_LINK };

static struct {
	char name[PATH_TOP_NAME];
	unsigned char len;
	bool link;
} path_tops[PATH_TOPS];
static size_t path_ntops;

/* Length of FULL's first component when FULL is absolute and it fits a
 * PATH_TOPS entry; 0 otherwise. */
static size_t path_top_len(const char *full)
{
	size_t n = 0;

	if (full[0] != '/')
		return 0;
	while (full[1 + n] != '\0' && full[1 + n] != '/')
		if (++n >= PATH_TOP_NAME)
			return 0;
	return n;
}

static enum path_top path_top_get(const char *full)
{
	size_t n = path_top_len(full);

	for (size_t i = 0; n > 0 && i < path_ntops; i++)
		if (path_tops[i].len == n && memcmp(path_tops[i].name, full + 1, n) == 0)
			return path_tops[i].link ? PATH_TOP_LINK : PATH_TOP_DIR;
	return PATH_TOP_UNKNOWN;
}

static void path_top_set(const char *full, bool link)
{
	size_t n = path_top_len(full), i;

	if (n == 0)
		return;
	for (i = 0; i < path_ntops; i++)
		if (path_tops[i].len == n && memcmp(path_tops[i].name, full + 1, n) == 0)
			break;
	if (i == path_ntops) {
		if (path_ntops == PATH_TOPS)
			return;
		path_ntops++;
		memcpy(path_tops[i].name, full + 1, n);
		path_tops[i].len = (unsigned char)n;
	}
	path_tops[i].link = link;
}

/* The walk.  BASE ("" or NULL for "/") is where a relative REST starts.
 * LEXICAL: fold the text only (the caller knows there is no symlink). */
static int path_walk(pid_t pid, const char *base, const char *path, int flags, char *out,
		     size_t outsz, bool lexical, pid_t *via)
{
	char bufa[PATH_WORK], bufb[PATH_WORK], link[PATH_MAX];
	char *rest = bufa, *spare = bufb;
	size_t len = 0, plen = strlen(path);
	int links = 0;
	bool missing = lexical; /* a prefix does not exist: fold the rest as text */
	const char *p;

	if (outsz < 2)
		return -ENAMETOOLONG;
	if (plen == 0)
		return -ENOENT;
	if (plen >= PATH_WORK)
		return -ENAMETOOLONG;
	/* PATH may be OUT itself: only REST is read from here on. */
	memcpy(rest, path, plen + 1);
	out[0] = '\0';
	if (rest[0] != '/' && base) {
		len = strlen(base);
		if (len >= outsz)
			return -ENAMETOOLONG;
		memcpy(out, base, len + 1);
		while (len > 0 && out[len - 1] == '/')
			out[--len] = '\0';
	}

	p = rest;
	for (;;) {
		const char *comp, *q;
		size_t clen;
		bool last, trailing = false, follow;
		struct stat st;

		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		comp = p;
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		clen = (size_t)(q - comp);
		p = q;
		while (*q == '/') {
			q++;
			trailing = true;
		}
		last = *q == '\0';
		if (!last)
			trailing = false;

		if (clen == 1 && comp[0] == '.')
			continue;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			path_pop(out, &len);
			continue;
		}
		if (len + 1 + clen >= outsz)
			return -ENAMETOOLONG;
		out[len++] = '/';
		memcpy(out + len, comp, clen);
		len += clen;
		out[len] = '\0';
		if (missing)
			continue;
		if (path_proc_magic_self(pid, out, &len, outsz) < 0)
			return -ENAMETOOLONG;

		follow = !last || trailing || !(flags & PATH_NOFOLLOW);
		if (!follow)
			continue; /* its type does not matter: no lstat */
		if (lstat(out, &st) < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				missing = true;
			/* EACCES and the like: the tracee may have the access
			 * the supervisor lacks; take the name as it stands. */
			continue;
		}
		if (memchr(out + 1, '/', len - 1) == NULL)
			path_top_set(out, S_ISLNK(st.st_mode));
		if (!S_ISLNK(st.st_mode))
			continue;

		if (++links > PATH_MAX_SYMLINKS)
			return -ELOOP;
		if (path_readlink(out, link, sizeof(link)) < 0) {
			missing = true;
			continue;
		}
		if (path_in_proc_pid(out)) {
			/* A magic link: the object itself, not its text. */
			size_t tl = strlen(link);

			if (via)
				*via = (pid_t)strtol(out + 6, NULL, 10);

			if (link[0] != '/') {
				if (tl >= outsz)
					return -ENAMETOOLONG;
				memcpy(out, link, tl + 1);
				return PATH_NOT_FS;
			}
			if (tl >= outsz)
				return -ENAMETOOLONG;
			memcpy(out, link, tl + 1);
			len = tl;
			if (len == 1)
				out[--len] = '\0'; /* "/" */
			continue;
		}
		/* An ordinary symlink: walk TARGET + "/" + what is left. */
		{
			size_t tl = strlen(link), rl = strlen(p);

			if (tl == 0) {
				missing = true; /* the kernel says ENOENT */
				continue;
			}
			if (tl + 1 + rl + 1 > PATH_WORK)
				return -ENAMETOOLONG;
			memcpy(spare, link, tl);
			spare[tl] = '/';
			memcpy(spare + tl + 1, p, rl + 1);
			{
				char *t = rest;

				rest = spare;
				spare = t;
			}
			p = rest;
			path_pop(out, &len);
			if (link[0] == '/')
				len = 0, out[0] = '\0';
		}
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

static bool path_walk_only; /* test hook: path_force_walk() */

void path_force_walk(bool on)
{
	path_walk_only = on;
}

/* openat2(DIRFD, NAME, O_PATH | EXTRA, RESOLVE): the kernel's own lookup,
 * one call for a whole name.  Returns the fd or -errno. */
static int path_open(int dirfd, const char *name, int extra, unsigned long long resolve)
{
	struct open_how how = {
		.flags = (unsigned long long)(O_PATH | O_CLOEXEC | extra),
		.resolve = resolve,
	};
	long fd;

	if (!probe_openat2())
		return -ENOSYS;
	fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	return (int)fd;
}

/* Fold FULL (known to hold no symlink) into OUT; 0, or 1 when it does not
 * fit.  OUT is written only on success: it may be the caller's input. */
static int path_fold(pid_t pid, const char *full, int flags, char *out, size_t outsz)
{
	char res[PATH_MAX];
	size_t n;

	if (path_walk(pid, NULL, full, flags, res, sizeof(res), true, NULL) < 0)
		return 1;
	n = strlen(res);
	if (n >= outsz)
		return 1;
	memcpy(out, res, n + 1);
	return 0;
}

/* Components of P the walk would lstat: all but "." and "..", and not
 * the last one when it is not followed. */
static size_t path_lstat_count(const char *p, bool follow)
{
	size_t n = 0, len;
	bool last_normal = false;

	while (*p) {
		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		last_normal = !((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'));
		n += last_normal;
		p += len;
	}
	if (!follow && last_normal && n > 0)
		n--;
	return n;
}

int path_fd_name(int fd, char *out, size_t outsz)
{
	char name[40];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	n = readlink(name, out, outsz - 1);
	if (n <= 0 || (size_t)n >= outsz - 1 || out[0] != '/')
		return 1;
	out[n] = '\0';
	/* An object unlinked meanwhile: its name carries " (deleted)". */
	if (n >= 10 && memcmp(out + n - 10, " (deleted)", 10) == 0)
		return 1;
	if (strncmp(out, "/proc", 5) == 0 && (out[5] == '/' || out[5] == '\0'))
		return 1;
	return 0;
}

/* FULL's directory (FULL[0..LAST-1], "/" when LAST is 1) exists and its
 * last component NAME (FULL + LAST) does not, or is no symlink: OUT gets
 * the directory's resolved name (symlinks followed by the kernel, magic
 * links refused, the name read back from its fd) plus NAME.  0, or 1 when
 * the walk must decide. */
static int path_by_parent(char *full, size_t last, int flags, char *out, size_t outsz)
{
	char dir[PATH_MAX];
	const char *name = full + last;
	struct stat st;
	char save = full[last];
	size_t dl, nl = strlen(name);
	int fd, rc = 1;

	full[last] = '\0';
	fd = path_open(AT_FDCWD, last == 1 ? "/" : full, O_DIRECTORY, RESOLVE_NO_MAGICLINKS);
	full[last] = save;
	if (fd < 0)
		return 1;
	/* A final name that is not followed needs no look at all. */
	if (!(flags & PATH_NOFOLLOW) &&
	    (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? errno != ENOENT : S_ISLNK(st.st_mode)))
		goto out; /* a followed final symlink, or EACCES and the like */
	if (path_fd_name(fd, dir, sizeof(dir)) != 0)
		goto out;
	dl = strlen(dir);
	if (dl == 1)
		dl = 0; /* "/" */
	if (dl + 1 + nl >= outsz)
		goto out;
	memcpy(out, dir, dl);
	out[dl] = '/';
	memcpy(out + dl + 1, name, nl + 1);
	rc = 0;
out:
	close(fd);
	return rc;
}

/* Symlinks on the way (RESOLVE_NO_SYMLINKS said ELOOP): let the kernel
 * follow them, refusing magic links (RESOLVE_NO_MAGICLINKS: the walk
 * handles /proc/PID/fd/N and friends), and read the object's canonical
 * name back: three calls instead of an lstat per component and a
 * readlink per link. */
static int path_by_kernel(char *full, size_t last, bool follow, bool name_ok, int flags,
			  char *out, size_t outsz)
{
	char res[PATH_MAX];
	int fd = path_open(AT_FDCWD, full, follow ? 0 : O_NOFOLLOW, RESOLVE_NO_MAGICLINKS);
	int rc;

	if (fd == -ENOENT && name_ok)
		return path_by_parent(full, last, flags, out, outsz);
	if (fd < 0)
		return 1;
	rc = path_fd_name(fd, res, sizeof(res));
	close(fd);
	if (rc != 0 || strlen(res) >= outsz)
		return 1;
	memcpy(out, res, strlen(res) + 1);
	return 0;
}

/* 0 when OUT holds the answer, 1 when the full walk must decide.  Used
 * only where it saves calls: three or more components to check (each
 * syscall costs microseconds in a VM; openat2 + close is two).  The walk
 * stays the reference: every case here gives what it would, or defers
 * to it.
 *
 * The first question is the kernel's own lookup of the whole name with
 * RESOLVE_NO_SYMLINKS (O_NOFOLLOW when the last name is not followed, so
 * that a final symlink is opened, not refused: openat2(2)).  Its walk goes
 * left to right and fails at the first component that stops it, so:
 *  - success: no symlink anywhere, the text folds to the answer;
 *  - ENOENT: every component before the missing one exists and is no
 *    symlink (one would have said ELOOP first), and the walk takes the
 *    missing one and all after it as text: the text folds to the answer
 *    too.  One call where an O_CREAT, mkdir or rename target used to take
 *    three (its directory opened, the name looked at, closed);
 *  - ELOOP: a symlink on the way, the kernel follows it (path_by_kernel);
 *  - anything else (ENOTDIR, EACCES, ...): the walk decides. */
static int path_fast(pid_t pid, const char *base, const char *path, int flags, char *out,
		     size_t outsz)
{
	char full[PATH_MAX];
	size_t bl = 0, pl = strlen(path), end, last;
	bool follow, name_ok;
	enum path_top top;
	int fd;

	if (path_walk_only || !probe_openat2())
		return 1;
	follow = !(flags & PATH_NOFOLLOW) || path[pl - 1] == '/';
	top = path_top_get(path[0] == '/' || !base ? path : base);
	if (top != PATH_TOP_LINK && path_lstat_count(path, follow) < 3)
		return 1;
	if (path[0] != '/' && base) {
		/* BASE is a readlink of a magic link: canonical already */
		bl = strlen(base);
		if (bl + 1 + pl >= sizeof(full))
			return 1;
		memcpy(full, base, bl);
		full[bl++] = '/';
	} else if (pl >= sizeof(full)) {
		return 1;
	}
	memcpy(full + bl, path, pl + 1);
	/* /proc/self and /proc/thread-self are the tracee's, not ours. */
	if (strncmp(full, "/proc", 5) == 0 && (full[5] == '/' || full[5] == '\0'))
		return 1;
	end = bl + pl;
	last = end;
	while (last > 0 && full[last - 1] != '/')
		last--;
	/* The last component is a plain name (not "", "." or ".."), so that
	 * its directory can stand for it. */
	name_ok = last > 0 && full[last] != '\0' &&
		  strcmp(full + last, ".") != 0 && strcmp(full + last, "..") != 0;
	if (!follow && !name_ok)
		return 1;
	if (top == PATH_TOP_LINK)
		return path_by_kernel(full, last, follow, name_ok, flags, out, outsz);
	fd = path_open(AT_FDCWD, full, follow ? 0 : O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
	if (fd >= 0) {
		close(fd);
		return path_fold(pid, full, flags, out, outsz);
	}
	if (fd == -ENOENT)
		return path_fold(pid, full, flags, out, outsz);
	if (fd != -ELOOP)
		return 1;
	if (top == PATH_TOP_UNKNOWN && path_ntops < PATH_TOPS) {
		char save = '\0';
		size_t n = path_top_len(full);
		struct stat st;

		if (n > 0) {
			save = full[1 + n];
			full[1 + n] = '\0';
			if (lstat(full, &st) == 0)
				path_top_set(full, S_ISLNK(st.st_mode));
			full[1 + n] = save;
		}
	}
	return path_by_kernel(full, last, follow, name_ok, flags, out, outsz);
}

static int path_any(pid_t pid, const char *base, const char *path, int flags, char *out,
		    size_t outsz, pid_t *via)
{
	if (via)
		*via = 0;
	if (path[0] != '\0' && path_fast(pid, base, path, flags, out, outsz) == 0)
		return 0;
	return path_walk(pid, base, path, flags, out, outsz, false, via);
}

int path_resolve_from(pid_t pid, const char *base, const char *path, int flags, char *out,
		      size_t outsz)
{
	return path_any(pid, base, path, flags, out, outsz, NULL);
}

int path_resolve_via(pid_t pid, int dirfd, const char *path, int flags, char *out, size_t outsz,
		     pid_t *via)
{
	char base[PATH_MAX];
	int rc;

	if (via)
		*via = 0;
	if (path[0] == '\0')
		return -ENOENT;
	if (path[0] == '/')
		return path_any(pid, NULL, path, flags, out, outsz, via);
	rc = path_fd(pid, dirfd, base, sizeof(base));
	if (rc == PATH_NOT_FS)
		return -ENOTDIR;
	if (rc < 0)
		return rc;
	return path_any(pid, base, path, flags, out, outsz, via);
}

int path_resolve(pid_t pid, int dirfd, const char *path, int flags, char *out, size_t outsz)
{
	return path_resolve_via(pid, dirfd, path, flags, out, outsz, NULL);
}
