#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/textesc.h"

static const char *program = "agenttrace";
static int level = 1;

void log_set_program(const char *name) { program = name; }
void log_set_level(int l) { level = l; }
int log_level(void) { return level; }

/* What a line on a terminal starts with: the character attributes reset
 * (SGR 0).  The command shares the terminal and may leave it concealing
 * text, or drawing it black on black, so that the lines that follow
 * (the summary) cannot be seen; "" elsewhere. */
static const char *vmsg_reset(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty ? "\033[0m" : "";
}

/* One fprintf per message so that lines from concurrent writers of the
 * same stderr do not interleave mid-line.  A message names paths, argv
 * and host names the command chose: escaped (lib/textesc.h), so that it
 * stays one line, starts with the program's name and moves no terminal. */
static void vmsg(const char *tag, int errnum, const char *fmt, va_list ap)
{
	char raw[1024], text[4 * sizeof(raw)];
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);

	if (n < 0)
		n = 0;
	textesc(raw, (size_t)n < sizeof(raw) ? (size_t)n : sizeof(raw) - 1, 0, text, sizeof(text));
	if (errnum)
		fprintf(stderr, "%s%s: %s%s: %s\n", vmsg_reset(), program, tag, text,
			strerror(errnum));
	else
		fprintf(stderr, "%s%s: %s%s\n", vmsg_reset(), program, tag, text);
}

#define DEFINE_MSG(fn, tag, minlevel, use_errno)         \
	void fn(const char *fmt, ...)                        \
	{                                                    \
		int saved = errno;                               \
		va_list ap;                                      \
		if (level < (minlevel))                          \
			return;                                      \
		va_start(ap, fmt);                               \
		vmsg(tag, (use_errno) ? saved : 0, fmt, ap);     \
		va_end(ap);                                      \
		errno = saved;                                   \
	}

DEFINE_MSG(error_msg, "", INT_MIN, 0)
DEFINE_MSG(out_msg, "", INT_MIN, 0)
DEFINE_MSG(warn_msg, "warning: ", 0, 0)
DEFINE_MSG(warn_errno, "warning: ", 0, 1)
DEFINE_MSG(info_msg, "", 2, 0)
DEFINE_MSG(debug_msg, "debug: ", 3, 0)
DEFINE_MSG(hint_msg, "Hint: ", 0, 0)

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", 0, fmt, ap);
	va_end(ap);
	exit(AT_EXIT_FAILURE);
}

void die_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg("", saved, fmt, ap);
	va_end(ap);
	exit(AT_EXIT_FAILURE);
}

int log_own_stderr(void)
{
	struct stat st;
	int own, orig, fl;

	if (fstat(STDERR_FILENO, &st) < 0 || !(S_ISFIFO(st.st_mode) || isatty(STDERR_FILENO)))
		return -1;
	/* O_NONBLOCK: a FIFO's open for writing would wait for a reader;
	 * O_NOCTTY: a terminal must not become this process's. */
	own = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (own < 0)
		return -1;
	fl = fcntl(own, F_GETFL);
	orig = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fl < 0 || fcntl(own, F_SETFL, fl & ~O_NONBLOCK) < 0 || orig < 0 ||
	    dup2(own, STDERR_FILENO) < 0) {
		close(own);
		if (orig >= 0)
			close(orig);
		return -1;
	}
	close(own);
	return orig;
}
