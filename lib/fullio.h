/* Whole reads and writes of a descriptor: the loops a short count or an
 * EINTR needs, in one place. */
#ifndef AGENTTRACE_FULLIO_H
#define AGENTTRACE_FULLIO_H

#include <stddef.h>

/* All N bytes of BUF to FD.  0, or -errno (-EIO when a write wrote
 * nothing). */
int write_full(int fd, const void *buf, size_t n);

/* N bytes from FD into BUF.  0, -EIO when the end came first, or -errno. */
int read_full(int fd, void *buf, size_t n);

#endif
