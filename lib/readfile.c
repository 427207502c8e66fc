/* Whole-file reads (readfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/readfile.h"
#include "lib/xalloc.h"

int readfile_fd(int fd, size_t max, char **buf, size_t *len, struct stat *st)
{
	struct stat sb;
	size_t cap, got = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (!st)
		st = &sb;
	if (fstat(fd, st) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	if ((unsigned long long)st->st_size > max)
		return -EFBIG;
	/* One byte more than fstat said, to see a file that grew. */
	cap = (size_t)st->st_size + 1;
	b = xmalloc(cap + 1);
	for (;;) {
		ssize_t n;

		if (got == cap) {
			if (cap > max)
				break;
			cap = cap > max / 2 ? max + 1 : cap * 2;
			b = xrealloc(b, cap + 1);
		}
		n = read(fd, b + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(b);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > max) {
		free(b);
		return -EFBIG;
	}
	b[got] = 0;
	*buf = b;
	*len = got;
	return 0;
}

int readfile_at(int dir, const char *name, size_t max, char **buf, size_t *len, struct stat *st)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int rc;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	rc = readfile_fd(fd, max, buf, len, st);
	close(fd);
	return rc;
}
