/* The kernel-enforced backstop (doc/THREAT-MODEL.md, --landlock auto|on|off): a
 * Landlock ruleset that handles the write-class file-system accesses and
 * grants them only beneath the policy's coarse write roots, so that a
 * write outside them fails in the kernel even when another thread
 * rewrote the path after the supervisor's check.
 *
 * The ruleset is built once in the supervisor before fork (no allocation
 * between fork and exec); the child only calls landlock_restrict_self().
 *
 * The race detector (landlock_race_*) also lives here: a write the
 * supervisor allowed that Landlock then refuses is evidence of a
 * time-of-check/time-of-use race.  See doc/INTERNALS.md "Landlock". */
#ifndef AGENTTRACE_LANDLOCK_H
#define AGENTTRACE_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/session.h"

struct call;

/* The state of the backstop for one session. */
struct landlock {
	int ruleset_fd;      /* -1 after the child applied it (or none) */
	int abi;             /* the probed ABI version */
	size_t n_roots;      /* existing roots, resolved, granted */
	char **roots;
	bool *root_is_dir;
	size_t n_missing;    /* policy roots that did not exist at start */
	char **missing;
	/* Directories made under $HOME so that a cache root could be granted
	 * (landlock.c), in the order made: removed again at the end when
	 * still empty, so that a run leaves HOME as it found it. */
	size_t n_made;
	struct landlock_made *made;
};

struct landlock_made {
	int parent_fd;       /* O_PATH descriptor of the directory it was made in */
	char *name;
	dev_t dev;
	ino_t ino;
};


/* Decides whether the session uses Landlock (--landlock, the probed ABI,
 * the mode) and builds the ruleset from the policy's write roots into
 * s->landlock (NULL: not used).  Returns -1 to go on, or 125 after a
 * message (--landlock on where it cannot be in force). */
int landlock_setup(struct session *s);

/* In the child, after the seccomp filter and before exec (NO_NEW_PRIVS is
 * set): restrict the process.  No allocation.  0 or -errno. */
int landlock_child_apply(const struct session *s);

/* True when PATH (resolved, absolute) lies beneath a granted root, where
 * Landlock lets the write-class calls through. */
bool landlock_covers(const struct landlock *l, const char *path);

/* True when Landlock decides the syscall NAME (the write-class accesses
 * it handles: creating, opening for write, truncating, removing,
 * renaming, linking); chmod, chown, utimes, xattrs are not its business. */
bool landlock_governs(const char *name);

/* The ABI of the ruleset in force for the command; 0: none. */
int landlock_abi_in_force(const struct landlock *l);

/* Closes the ruleset and removes the directories landlock_setup() made
 * under $HOME that are still empty (the command wrote nothing there). */
void landlock_free(struct landlock *l);

/* At the seccomp stop of a call the policy allowed: a write-class call on
 * a path outside the granted roots (beneath a root that did not exist at
 * start, say) would fail in the kernel with EACCES and nothing would say
 * why; the supervisor denies it itself with a record under
 * LANDLOCK_UNCOVERED_RULE.  The index of that event of C, or -1. */
int landlock_uncovered(const struct session *s, const struct call *c);

#define LANDLOCK_UNCOVERED_RULE "landlock.outside-roots"
#define LANDLOCK_UNCOVERED_WHY                                                              \
	"the policy allows this write, but the Landlock backstop only lets writes through " \
	"beneath the write roots that existed when the session started; create the "       \
	"directory before the session, or use --landlock off"

/* ---- the race detector ----
 *
 * At the seccomp stop of a write-class call the supervisor allowed, in a
 * process with more than one thread, landlock_race_arm() remembers the
 * path arguments (a hash of their bytes) and asks for the syscall-exit
 * stop (the caller resumes with PTRACE_SYSCALL when landlock_race_armed()).
 * At that stop landlock_race_exit() compares: an open that returned a
 * descriptor for a path the policy denies, or a call Landlock refused
 * (EACCES) after its path bytes changed, is a race and gets a record. */
void landlock_race_arm(struct session *s, pid_t tid, const struct call *c);
bool landlock_race_armed(pid_t tid);
void landlock_race_exit(struct session *s, struct tracee *t);
void landlock_race_forget(pid_t tid);

#endif
