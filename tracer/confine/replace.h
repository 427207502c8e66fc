/* The replacement of a file whose content is judged, made by the
 * supervisor with the bytes it judged (agenttrace-policy(5), "Content").
 *
 * git replaces .git/config by renaming config.lock onto it.  The caller
 * owns the lock: it may keep a writable descriptor to it, pass one to
 * another process, map it shared, and change the bytes after any check.
 * So the kernel never renames the lock: the supervisor reads it once,
 * judges those bytes, writes them into a file of its own in the same
 * directory, renames that onto the target and removes the lock.  Whatever
 * the caller kept of the lock is then a file without a name.
 *
 * Everything is done as the caller's file-system identity
 * (tracer/inspect/creds.h), relative to a descriptor of the directory
 * opened without following a symbolic link, so the kernel checks what it
 * would have checked for the caller, and no name is followed that the
 * caller could have swapped. */
#ifndef AGENTTRACE_REPLACE_H
#define AGENTTRACE_REPLACE_H

#include <stdbool.h>
#include <sys/types.h>

#include "rules/gitconfig.h"

enum replace_outcome {
	REPLACE_DONE = 0,    /* the target holds the lock's bytes; the lock is gone */
	REPLACE_REFUSED,     /* the bytes did not pass: nothing changed (CHECK says why) */
	REPLACE_BAD_LOCK,    /* the lock is no file the check can read (WHY) */
	REPLACE_FAILED,      /* a call failed with ERR, as the caller's rename would have */
};

struct replace_result {
	enum replace_outcome outcome;
	struct gitconfig_verdict check; /* DONE, REFUSED: the check of the bytes */
	const char *why;                /* BAD_LOCK */
	int err;                        /* FAILED: errno */
};

/* Replace DIR/TARGET by the content of DIR/LOCK, as task TID, through
 * the new file DIR/TEMP (a name of the supervisor's choosing, judged by
 * the caller of this function): the lock is read once (a regular file of
 * one link and at most GITCONFIG_MAX bytes, not a symbolic link), judged
 * against TARGET's current content, and when it passes, or FORCE (audit
 * mode: nothing is refused), written to TEMP with the lock's permission
 * bits, renamed onto TARGET, and the lock removed. */
void replace_from_lock(pid_t tid, const char *dir, const char *lock, const char *target,
		       const char *temp, bool force, struct replace_result *res);

#endif
