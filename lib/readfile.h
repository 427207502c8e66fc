/* A regular file read whole, at most a given size.  The open takes
 * O_NOFOLLOW and O_NONBLOCK: no symlink is followed, no FIFO or device
 * is waited on, so a name the supervised command controls cannot make
 * the reader read elsewhere or hang. */
#ifndef AGENTTRACE_READFILE_H
#define AGENTTRACE_READFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* NAME relative to DIR (AT_FDCWD, or an absolute NAME, for a path).
 * Returns 0 with *BUF (malloc'ed, NUL-terminated, the caller's) and *LEN;
 * -EFBIG when the file holds more than MAX bytes, -EINVAL when it is no
 * regular file, -ELOOP for a symlink, another -errno when it cannot be
 * opened or read.  ST, unless NULL, gets the file's fstat(2) (also on
 * -EFBIG and -EINVAL).  Nothing is allocated on failure. */
int readfile_at(int dir, const char *name, size_t max, char **buf, size_t *len, struct stat *st);

/* The same for the open FD, from its offset; FD stays open. */
int readfile_fd(int fd, size_t max, char **buf, size_t *len, struct stat *st);

#endif
