/* The file an exec loads (tracer/inspect/execid.h). */
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
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "tracer/inspect/execid.h"

/* The interpreter of the "#!" script whose first N bytes are HEAD
 * (NUL-terminated) into OUT (PATH_MAX), and its argument into ARG
 * (PATH_MAX; NULL: not wanted): the rest of the line, blanks around it
 * taken off, one argument (fs/binfmt_script.c).  1 when there is an
 * interpreter, 2 when the line gives it an argument too, 0 when it is no
 * script, -1 when its line names none that fits. */
static int execid_interpreter(const char *head, ssize_t n, char *out, char *arg)
{
	const char *p, *e, *a, *ae;

	if (n < 2 || head[0] != '#' || head[1] != '!')
		return 0;
	p = head + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	e = p;
	while (*e && *e != ' ' && *e != '\t' && *e != '\n')
		e++;
	if (e == p || (size_t)(e - p) >= PATH_MAX)
		return -1;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	a = e;
	while (*a == ' ' || *a == '\t')
		a++;
	if (!*a || *a == '\n')
		return 1;
	ae = a + strcspn(a, "\n");
	while (ae > a && (ae[-1] == ' ' || ae[-1] == '\t'))
		ae--;
	if (arg) {
		memcpy(arg, a, (size_t)(ae - a));
		arg[ae - a] = '\0';
	}
	return 2;
}

int exec_script_line(const char *path, char *interp, char *arg)
{
	char head[EXECID_LINE_MAX];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = pread(fd, head, sizeof(head) - 1, 0);
	close(fd);
	head[n > 0 ? n : 0] = '\0';
	return n < 0 ? 0 : execid_interpreter(head, n, interp, arg);
}

int exec_id_of(const char *path, struct exec_id *out)
{
	char cur[PATH_MAX], next[PATH_MAX], head[EXECID_LINE_MAX];

	out->known = false;
	out->direct = false;
	out->before_args = 1; /* argv[0], or a script's path */
	out->lines = 0;
	if (!path || strlen(path) >= sizeof(cur))
		return -ENAMETOOLONG;
	strcpy(cur, path);
	for (int depth = 0; depth <= EXECID_SCRIPT_DEPTH; depth++) {
		int fd = open(cur, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		struct stat st;
		ssize_t n;
		int r;

		if (fd < 0)
			return errno == ENOENT || errno == ENOTDIR ? -errno : 0;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return 0;
		}
		/* One read: a script's line, or an ELF program's magic. */
		n = pread(fd, head, sizeof(head) - 1, 0);
		head[n > 0 ? n : 0] = '\0';
		r = n < 0 ? -1 : execid_interpreter(head, n, next, NULL);
		if (r == 0) {
			/* An ELF program is what /proc/PID/exe will name; any
			 * other format goes to binfmt_misc, which this does not
			 * follow. */
			bool elf = n >= 4 && memcmp(head, "\x7f" "ELF", 4) == 0;

			close(fd);
			if (elf) {
				out->known = true;
				out->direct = depth == 0;
				out->dev = st.st_dev;
				out->ino = st.st_ino;
			}
			return 0;
		}
		close(fd);
		if (r < 0 || next[0] != '/')
			return 0;
		out->before_args += (unsigned)r; /* the interpreter, and its argument */
		strcpy(cur, next);
	}
	return 0;
}

void exec_lines_digest(const char *const *entries, size_t n, char out[65])
{
	struct sha256 h;

	sha256_init(&h);
	for (size_t i = 0; i < n; i++)
		sha256_update(&h, entries[i], strlen(entries[i]) + 1);
	sha256_hex(&h, out);
}

bool exec_env_searched_entry(const char *entry)
{
	return !strncmp(entry, "PATH=", 5) || !strncmp(entry, "RUBYPATH=", 9) ||
	       !strncmp(entry, "HOME=", 5);
}

void exec_env_digest(const char *const *entries, size_t n, char out[65])
{
	struct sha256 h;

	sha256_init(&h);
	for (size_t i = 0; i < n; i++)
		if (exec_env_searched_entry(entries[i]))
			sha256_update(&h, entries[i], strlen(entries[i]) + 1);
	sha256_hex(&h, out);
}

/* The environment a program can start with: the kernel's bound on argv
 * and envp together is a quarter of the stack limit, at most 6 MiB
 * (fs/exec.c, with an unlimited stack). */
#define EXEC_ENV_MAX (8u << 20)

bool exec_env_matches(pid_t pid, const struct exec_id *id)
{
	char path[64], sha[65], *buf;
	size_t len;
	struct sha256 h;
	int r;

	if (!id->env_searched)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	r = readfile_at(AT_FDCWD, path, EXEC_ENV_MAX, &buf, &len, NULL);
	if (r == -ENOENT || r == -ESRCH)
		return true; /* gone: nothing runs */
	if (r < 0)
		return false;
	sha256_init(&h);
	for (size_t at = 0; at < len;) {
		size_t n = strnlen(buf + at, len - at);

		if (at + n < len && exec_env_searched_entry(buf + at))
			sha256_update(&h, buf + at, n + 1);
		at += n + 1;
	}
	free(buf);
	sha256_hex(&h, sha);
	return strcmp(sha, id->env_sha) == 0;
}

bool exec_id_matches(pid_t pid, const struct exec_id *id)
{
	char link[64];
	struct stat st;

	if (!id->known)
		return true;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if (stat(link, &st) < 0)
		return true; /* gone: nothing runs */
	return st.st_dev == id->dev && st.st_ino == id->ino;
}

/* What /proc/PID/cmdline may hold beyond a judged argv: an interpreter's
 * line and path before it, a few times over. */
#define EXEC_ARGV_SLACK (16 * 1024)

/* The entry after the one at P in a NUL-separated line ending at END. */
static const char *exec_next(const char *p, const char *end)
{
	p += strlen(p) + 1;
	return p < end ? p : end;
}

bool exec_argv_matches(pid_t pid, const struct exec_id *id, const char *const *argv, size_t argc)
{
	bool direct = id->known && id->direct, ok = true;
	size_t judged = 0, cap, len = 0, n = 0;
	/* Most lines fit here: an exec flood must not allocate (and under
	 * a sanitizer quarantine) a buffer each. */
	char small[4096], path[64], *buf = small;
	const char *p, *end;
	int fd;

	if (argc == 0)
		return true; /* the kernel puts "" */
	for (size_t i = 0; i < argc; i++)
		judged += strlen(argv[i]) + 1;
	cap = judged + EXEC_ARGV_SLACK;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	for (;;) {
		size_t room = (buf == small ? sizeof(small) - 1 : cap) - len;
		ssize_t r;

		if (room == 0 && buf == small && cap > sizeof(small) - 1) {
			buf = xmalloc(cap + 1);
			memcpy(buf, small, len);
			continue;
		}
		if (room == 0)
			break;
		r = read(fd, buf + len, room);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (len >= cap)
		ok = false; /* more than was judged, and more than any interpreter adds */
	buf[len] = '\0';
	end = buf + len;
	for (p = buf; p < end; p = exec_next(p, end))
		n++;
	if (!ok) {
		/* said above */
	} else if (direct) {
		ok = n == argc;
		p = buf;
		for (size_t i = 0; ok && i < argc; i++, p = exec_next(p, end))
			ok = strcmp(p, argv[i]) == 0;
	} else {
		/* Interpreters first, as many entries as their "#!" lines
		 * give (unknown for binfmt_misc): the judged arguments after
		 * argv[0] end the line. */
		size_t before = id->lines ? id->lines + 1 : id->before_args;
		const char *lines[2 * EXECID_SCRIPT_DEPTH];
		char sha[65];

		ok = n > argc && ((!id->known && !id->lines) || n == argc - 1 + before) &&
		     id->lines <= 2 * EXECID_SCRIPT_DEPTH;
		p = buf;
		for (size_t i = 0; ok && i < n - (argc - 1); i++) {
			if (i < id->lines)
				lines[i] = p;
			p = exec_next(p, end);
		}
		/* The interpreters the kernel ran are those judged: a line
		 * rewritten after the check names others. */
		if (ok && id->lines) {
			exec_lines_digest(lines, id->lines, sha);
			ok = strcmp(sha, id->lines_sha) == 0;
		}
		for (size_t i = 1; ok && i < argc; i++, p = exec_next(p, end))
			ok = strcmp(p, argv[i]) == 0;
	}
	if (buf != small)
		free(buf);
	return ok;
}

/* ---- the files a program opens by the names it was given ---- */

/* The identity of task PID's working directory; false: gone. */
static bool exec_cwd_of(pid_t pid, dev_t *dev, ino_t *ino)
{
	char link[64];
	struct stat st;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	if (stat(link, &st) < 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

bool exec_pin_make(struct exec_pin *pin, int view, pid_t pid, const char *text, const char *cwd,
		   const char *path, bool script)
{
	char abs[PATH_MAX];
	struct stat st;

	if (!text[0])
		return false;
	memset(pin, 0, sizeof(*pin));
	pin->script = script;
	pin->text_hash = hash_text(text);
	if (text[0] != '/') {
		if (!exec_cwd_of(pid, &pin->cwd_dev, &pin->cwd_ino))
			return false;
		if (cwd && (size_t)snprintf(abs, sizeof(abs), "%s/%s", strcmp(cwd, "/") ? cwd : "",
					    text) < sizeof(abs))
			pin->abs_hash = hash_text(abs);
	}
	/* The name as resolved, not followed: a symlink put there since
	 * the check is not the file judged. */
	if (path[0] == '/' &&
	    fstatat(view, view == AT_FDCWD ? path : (path[1] ? path + 1 : "."), &st,
		    AT_SYMLINK_NOFOLLOW) == 0) {
		pin->dev = st.st_dev;
		pin->ino = st.st_ino;
	}
	return true;
}

struct exec_pin *exec_pin_find(struct exec_pin *pins, unsigned n, uint64_t text_hash, pid_t tid)
{
	if (!text_hash)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		dev_t dev;
		ino_t ino;

		if (pins[i].abs_hash == text_hash)
			return &pins[i];
		if (pins[i].text_hash != text_hash)
			continue;
		if (!pins[i].cwd_ino || (exec_cwd_of(tid, &dev, &ino) && dev == pins[i].cwd_dev &&
					 ino == pins[i].cwd_ino))
			return &pins[i];
	}
	return NULL;
}
