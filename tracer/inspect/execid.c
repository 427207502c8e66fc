/* The file an exec loads (tracer/inspect/execid.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/inspect/execid.h"

/* The kernel follows at most this many "#!" levels (fs/exec.c). */
#define EXECID_SCRIPT_DEPTH 4

/* The interpreter of the "#!" script open at FD into OUT (PATH_MAX); 1
 * when there is one, 0 when FD is no script, -1 when it cannot be read. */
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
	return 1;
}

int exec_id_of(const char *path, struct exec_id *out)
{
	char cur[PATH_MAX], next[PATH_MAX];
	unsigned char magic[4];

	out->known = false;
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
				out->dev = st.st_dev;
				out->ino = st.st_ino;
			}
			return 0;
		}
		close(fd);
		if (r < 0 || next[0] != '/')
			return 0;
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
