/* The file an exec loads (tracer/inspect/execid.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "tracer/inspect/execid.h"

/* The kernel follows at most this many "#!" levels (fs/exec.c). */
#define EXECID_SCRIPT_DEPTH 4

/* The interpreter of the "#!" script open at FD into OUT (PATH_MAX); 1
 * when there is one, 2 when its line gives it an argument too (the rest
 * of the line, one argument), 0 when FD is no script, -1 when it cannot
 * be read. */
static int execid_interpreter(int fd, char *out)
{
	char head[256];
	ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
	char *p, *e;

	if (n < 0)
		return -1;
	head[n] = '\0';
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
	while (*e == ' ' || *e == '\t')
		e++;
	return *e && *e != '\n' ? 2 : 1;
}

int exec_id_of(const char *path, struct exec_id *out)
{
	char cur[PATH_MAX], next[PATH_MAX];
	unsigned char magic[4];

	out->known = false;
	out->direct = false;
	out->before_args = 1; /* argv[0], or a script's path */
	if (!path || strlen(path) >= sizeof(cur))
		return -ENAMETOOLONG;
	strcpy(cur, path);
	for (int depth = 0; depth <= EXECID_SCRIPT_DEPTH; depth++) {
		int fd = open(cur, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		struct stat st;
		int r;

		if (fd < 0)
			return errno == ENOENT || errno == ENOTDIR ? -errno : 0;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return 0;
		}
		r = execid_interpreter(fd, next);
		if (r == 0) {
			/* An ELF program is what /proc/PID/exe will name; any
			 * other format goes to binfmt_misc, which this does not
			 * follow. */
			bool elf = pread(fd, magic, 4, 0) == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;

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

bool exec_argv_matches(pid_t pid, const struct exec_id *id, const char *const *argv, size_t argc,
		       bool cut)
{
	size_t judged = 0, cap, len = 0, n = 0, k;
	char path[64], *buf;
	const char **entry;
	bool ok;
	int fd;

	for (size_t i = 0; i < argc; i++)
		judged += strlen(argv[i]) + 1;
	cap = judged + EXEC_ARGV_SLACK;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r = read(fd, buf + len, cap - len);

		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == cap)
			break;
	}
	close(fd);
	if (len == cap && !cut) {
		free(buf);
		return false; /* more than was judged, and more than any interpreter adds */
	}
	buf[len] = '\0';
	entry = xmalloc((len + 1) * sizeof(*entry));
	for (size_t at = 0; at < len; at += strlen(buf + at) + 1)
		entry[n++] = buf + at;
	bool direct = id->known && id->direct;

	if ((!direct && cut) || argc == 0) {
		/* Neither end is known; or no argument was given, where the
		 * kernel puts an empty argv[0]. */
		ok = true;
	} else if (cut) {
		/* The judged ones begin the loaded ones (the last judged one
		 * may itself be cut short). */
		ok = n >= argc;
		for (size_t i = 0; ok && i < argc; i++)
			ok = i + 1 < argc ? strcmp(entry[i], argv[i]) == 0
					  : strncmp(entry[i], argv[i], strlen(argv[i])) == 0;
	} else if (direct) {
		ok = n == argc;
		for (size_t i = 0; ok && i < argc; i++)
			ok = strcmp(entry[i], argv[i]) == 0;
	} else {
		/* Interpreters first, as many entries as their "#!" lines
		 * give (unknown for binfmt_misc): the judged arguments after
		 * argv[0] end the line. */
		ok = n > argc && (!id->known || n == argc - 1 + id->before_args);
		k = n - (argc - 1);
		for (size_t i = 1; ok && i < argc; i++)
			ok = strcmp(entry[k + i - 1], argv[i]) == 0;
	}
	free(entry);
	free(buf);
	return ok;
}
