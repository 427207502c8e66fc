/* --private-tmp: a fresh TMPDIR per session and, where agenttrace may
 * create a mount namespace (root), a private /tmp as well; both gone when
 * the session ends.
 *
 * The private /tmp is a tmpfs mounted in a mount namespace that the
 * supervisor itself enters just before it starts the command, so that the
 * supervisor resolves paths in the very view the command has (path.h
 * takes the tracee's mount namespace to be the supervisor's).  The tmpfs
 * dies with the last process of that namespace: even a SIGKILL of
 * agenttrace leaves nothing of it behind. */
#ifndef AGENTTRACE_PRIVTMP_H
#define AGENTTRACE_PRIVTMP_H

#include <stdbool.h>

#include "tracer/session.h"

struct privtmp {
	char *dir;        /* the command's TMPDIR (absolute) */
	int parent_fd;    /* O_PATH of its parent, opened before any mount */
	char *name;       /* its last component */
	bool private_ns;  /* /tmp is a private tmpfs */
};

/* Before the policy is loaded: mkdtemp under $TMPDIR (or /tmp), owned by
 * the --user when there is one, exported as TMPDIR so that ${TMPDIR}
 * names it.  Returns -1 to go on or 125 after a message. */
int privtmp_create(struct session *s);

/* After the log is open, before the command starts: the private /tmp
 * (unshare(CLONE_NEWNS), / made a slave, tmpfs on /tmp, the TMPDIR path
 * made again inside it when it lies under /tmp).  Falls back to TMPDIR
 * only, with a message under -v, when not allowed (not root) or when the
 * project itself lies under /tmp.  Never fails the run. */
void privtmp_isolate(struct session *s);

/* At the end: remove the TMPDIR without ever following a link out of it
 * (openat/unlinkat from the parent's descriptor, O_NOFOLLOW|O_DIRECTORY),
 * then free.  Returns 0 or -errno (something could not be removed). */
int privtmp_remove(struct privtmp *p);

/* Removes NAME in directory DFD and everything beneath it, never
 * following a symlink and never leaving the file system of DFD.
 * Exposed for the tests.  0 or -errno of the first failure. */
int privtmp_rm_at(int dfd, const char *name);

#endif
