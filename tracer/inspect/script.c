/* The script an interpreter is about to run (tracer/inspect/script.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/inspect/script.h"

static const char *script_base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;

	return b ? b + 1 : (p ? p : "");
}


enum script_interp { SCRIPT_NOT_INTERP, SCRIPT_SHELL, SCRIPT_PYTHON, SCRIPT_NODE, SCRIPT_PERL,
		     SCRIPT_RUBY };

static enum script_interp script_interp_of(const char *base)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
					      "busybox", "fish", NULL };

	for (size_t i = 0; shells[i]; i++)
		if (strcmp(base, shells[i]) == 0)
			return SCRIPT_SHELL;
	if (strncmp(base, "python", 6) == 0 || strncmp(base, "pypy", 4) == 0)
		return SCRIPT_PYTHON;
	if (strcmp(base, "node") == 0 || strcmp(base, "nodejs") == 0 || strcmp(base, "deno") == 0 ||
	    strcmp(base, "bun") == 0)
		return SCRIPT_NODE;
	if (strncmp(base, "perl", 4) == 0)
		return SCRIPT_PERL;
	if (strncmp(base, "ruby", 4) == 0)
		return SCRIPT_RUBY;
	return SCRIPT_NOT_INTERP;
}

/* Reads at most size bytes of a regular file, path relative to CWD
 * (NULL: the process's own, /proc/PID/cwd).  O_NONBLOCK so that a FIFO cannot hang the supervisor. */
static size_t script_read_file(pid_t pid, const char *cwd, const char *path, char *buf,
			       size_t size, bool need_shebang)
{
	char full[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	int fd;

	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else if (cwd)
		snprintf(full, sizeof(full), "%s/%s", cwd, path);
	else
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", (int)pid, path);
	fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	if (need_shebang && (n < 2 || buf[0] != '#' || buf[1] != '!'))
		return 0;
	return (size_t)n;
}

static size_t script_copy(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);

	if (n > size)
		n = size;
	memcpy(buf, text, n);
	return n;
}

size_t script_text(pid_t pid, const char *cwd, const char *exe, const char *const *argv,
		   size_t argc, char *buf, size_t size)
{
	enum script_interp kind = script_interp_of(script_base(exe));

	if (kind == SCRIPT_NOT_INTERP) {
		/* A script exec'ed directly: the kernel reads its "#!" line. */
		return exe ? script_read_file(pid, cwd, exe, buf, size, true) : 0;
	}
	for (size_t i = 1; i < argc && argv[i]; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			if (i + 1 < argc && argv[i + 1])
				return script_read_file(pid, cwd, argv[i + 1], buf, size, false);
			return 0;
		}
		if (a[0] != '-' || a[1] == 0) {
			if (a[0] == '-')
				return 0; /* "-": the script comes from stdin */
			return script_read_file(pid, cwd, a, buf, size, false);
		}
		switch (kind) {
		case SCRIPT_SHELL:
			/* "-c", also combined as in "-ec", "-xc". */
			if (a[1] != '-' && strchr(a + 1, 'c'))
				return i + 1 < argc && argv[i + 1] ? script_copy(argv[i + 1], buf, size) : 0;
			if (strcmp(a, "-o") == 0 || strcmp(a, "+o") == 0)
				i++;
			break;
		case SCRIPT_PYTHON:
			if (a[1] != '-' && a[strlen(a) - 1] == 'c')
				return i + 1 < argc && argv[i + 1] ? script_copy(argv[i + 1], buf, size) : 0;
			if (strcmp(a, "-m") == 0)
				return 0;
			if (strcmp(a, "-W") == 0 || strcmp(a, "-X") == 0)
				i++;
			break;
		case SCRIPT_NODE:
			if (strcmp(a, "-e") == 0 || strcmp(a, "--eval") == 0 || strcmp(a, "-p") == 0 ||
			    strcmp(a, "--print") == 0)
				return i + 1 < argc && argv[i + 1] ? script_copy(argv[i + 1], buf, size) : 0;
			break;
		case SCRIPT_PERL:
		case SCRIPT_RUBY:
			if (strcmp(a, "-e") == 0 || strcmp(a, "-E") == 0)
				return i + 1 < argc && argv[i + 1] ? script_copy(argv[i + 1], buf, size) : 0;
			break;
		default:
			break;
		}
	}
	return 0;
}
