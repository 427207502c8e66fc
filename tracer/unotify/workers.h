/* Calls the notify engine makes for a caller that take long in the
 * kernel, but never wait on another process: the creation of a file or
 * a directory, which on a file system that has just had many deleted
 * (a package manager's `rm -rf node_modules`, then its install) costs
 * tens of microseconds each in its inode allocation.  A multithreaded
 * caller's creations are made by the supervisor (doc/INTERNALS.md,
 * "Callers that can race"); made by the loop that answers everyone they
 * ran one after another where the program's threads ran them side by
 * side.  A few threads make them instead, each in a working directory
 * and umask of its own (unshare(CLONE_FS)), and answer the caller
 * themselves; the loop goes on.  What may wait on another process (a
 * FIFO, a lease, a connect) has a thread of its own (emulate.c). */
#ifndef AGENTTRACE_UNOTIFY_WORKERS_H
#define AGENTTRACE_UNOTIFY_WORKERS_H

#include <stdbool.h>

#define WORKERS_MAX 4      /* threads, at most; fewer on fewer CPUs */
#define WORKERS_QUEUE 256  /* jobs waiting, at most */

/* Hands JOB(ARG) to the pool, started at the first call: true when a
 * worker will run it (and JOB then owns ARG), false when the pool cannot
 * take it (it could not start, or its queue is full): the caller makes
 * the call itself. */
bool workers_submit(void (*job)(void *arg), void *arg);

#endif
