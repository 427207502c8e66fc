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
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/path.h"

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

/* The walk.  BASE ("" or NULL for "/") is where a relative REST starts.
 * LEXICAL: fold the text only (the caller knows there is no symlink). */
static int path_walk(pid_t pid, const char *base, const char *path, int flags, char *out,
		     size_t outsz, bool lexical)
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

/* openat2(2) is probed once: ENOSYS before Linux 5.6. */
static bool path_no_openat2;

/* The kernel checks a whole name for symlinks in one call:
 * RESOLVE_NO_SYMLINKS (which implies RESOLVE_NO_MAGICLINKS) fails with
 * ELOOP on any link, /proc/self included.  When NAME has none, folding its
 * text is exactly what the walk would do, at the cost of one openat2 and
 * one close instead of one lstat per component.  Returns 0 if it opened. */
static int path_no_links(const char *name, bool dir)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (dir ? O_DIRECTORY : 0),
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	long fd;

	if (path_no_openat2)
		return -ENOSYS;
	fd = syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ENOSYS)
			path_no_openat2 = true;
		return -errno;
	}
	close((int)fd);
	return 0;
}

/* Fold FULL (known to hold no symlink) into OUT; 0, or 1 when it does not
 * fit.  OUT is written only on success: it may be the caller's input. */
static int path_fold(pid_t pid, const char *full, int flags, char *out, size_t outsz)
{
	char res[PATH_MAX];
	size_t n;

	if (path_walk(pid, NULL, full, flags, res, sizeof(res), true) < 0)
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

/* 0 when OUT holds the answer, 1 when the full walk must decide.  Used
 * only where it saves calls: three or more components to check (each
 * syscall costs microseconds in a VM; openat2 + close is two). */
static int path_fast(pid_t pid, const char *base, const char *path, int flags, char *out,
		     size_t outsz)
{
	char full[PATH_MAX];
	size_t bl = 0, pl = strlen(path), end, last;
	bool follow;
	int rc;

	follow = !(flags & PATH_NOFOLLOW) || path[pl - 1] == '/';
	if (path_lstat_count(path, follow) < 3)
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
	end = bl + pl;
	last = end;
	while (last > 0 && full[last - 1] != '/')
		last--;
	if (follow || full[last] == '.' || last == 0) {
		/* The whole name; a name that does not exist yet is left
		 * to the walk (it stops at the first missing component). */
		if (path_no_links(full, false) != 0)
			return 1;
		return path_fold(pid, full, flags, out, outsz);
	}
	/* The last component is not followed: its directory alone must be
	 * free of links. */
	{
		char save = full[last];

		full[last] = '\0';
		rc = path_no_links(last == 1 ? "/" : full, true);
		full[last] = save;
	}
	if (rc != 0)
		return 1;
	return path_fold(pid, full, flags, out, outsz);
}

static int path_any(pid_t pid, const char *base, const char *path, int flags, char *out,
		    size_t outsz)
{
	if (path[0] != '\0' && path_fast(pid, base, path, flags, out, outsz) == 0)
		return 0;
	return path_walk(pid, base, path, flags, out, outsz, false);
}

int path_resolve_from(pid_t pid, const char *base, const char *path, int flags, char *out,
		      size_t outsz)
{
	return path_any(pid, base, path, flags, out, outsz);
}

int path_resolve(pid_t pid, int dirfd, const char *path, int flags, char *out, size_t outsz)
{
	char base[PATH_MAX];
	int rc;

	if (path[0] == '\0')
		return -ENOENT;
	if (path[0] == '/')
		return path_any(pid, NULL, path, flags, out, outsz);
	rc = path_fd(pid, dirfd, base, sizeof(base));
	if (rc == PATH_NOT_FS)
		return -ENOTDIR;
	if (rc < 0)
		return rc;
	return path_any(pid, base, path, flags, out, outsz);
}

void path_proc_self(char *path, size_t size, pid_t pid, bool (*in_session)(pid_t, void *),
		    void *arg)
{
	const char *p, *e;
	long n = 0;
	size_t dl, tail;

	if (strncmp(path, "/proc/", 6) != 0)
		return;
	p = path + 6;
	e = p;
	while (*e >= '0' && *e <= '9') {
		if (n < 100000000)
			n = n * 10 + (*e - '0');
		e++;
	}
	dl = (size_t)(e - p);
	if (dl == 0 || (*e != '/' && *e != '\0'))
		return;
	tail = strlen(e);
	if (6 + 4 + tail >= size)
		return;
	if (in_session ? !in_session((pid_t)n, arg) : (pid_t)n != pid)
		return;
	memmove(path + 6 + 4, e, tail + 1);
	memcpy(path + 6, "self", 4);
}
