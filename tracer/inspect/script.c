/* The script an interpreter is about to run (tracer/inspect/script.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/rules.h"
#include "tracer/inspect/script.h"

/* Reads at most size bytes of the regular file PATH (absolute).
 * O_NONBLOCK so that a FIFO cannot hang the supervisor. */
static size_t script_read_file(const char *path, char *buf, size_t size, bool need_shebang)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
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

size_t script_text(const char *exe, const char *const *argv, size_t argc, const char *script,
		   char *buf, size_t size)
{
	size_t text_arg, text_off, n;

	if (script)
		return script_read_file(script, buf, size, false);
	if (rules_interp_script(exe, argv, argc, NULL, &text_arg, &text_off) == 0 && text_arg) {
		const char *t = argv[text_arg] + text_off;

		n = strlen(t);
		if (n > size)
			n = size;
		memcpy(buf, t, n);
		return n;
	}
	/* A script exec'ed directly: the kernel reads its "#!" line. */
	return exe && exe[0] == '/' ? script_read_file(exe, buf, size, true) : 0;
}
