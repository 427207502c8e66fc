/* Who a task is to the file system, and the supervisor's thread taking
 * that identity for a call it makes in the task's stead: the notify
 * engine's opens of racing callers (tracer/unotify/emulate.h), the
 * replacements of files whose content is judged (tracer/confine/replace.h).
 * What the kernel would check for the caller (permissions, the owner and
 * group of a new file) it then checks for the supervisor. */
#ifndef AGENTTRACE_CREDS_H
#define AGENTTRACE_CREDS_H

#include <stdint.h>
#include <sys/types.h>

#define CREDS_GROUPS 64

struct creds {
	uid_t fsuid;
	gid_t fsgid;
	/* The real, effective and saved ids: what a UNIX socket's peer learns
	 * of its sender (SO_PEERCRED, SCM_CREDENTIALS), and which of them the
	 * kernel lets it claim. */
	uid_t uid[3];
	gid_t gid[3];
	gid_t groups[CREDS_GROUPS];
	int n_groups;
	mode_t umask;
	/* The effective capabilities (CapEff): a root caller that dropped
	 * CAP_DAC_OVERRIDE or CAP_FOWNER is refused what root without them
	 * is refused. */
	uint64_t cap_eff;
	/* In what creds_become() saved: what it changed (CREDS_CHANGED_*),
	 * which is all creds_restore() puts back. */
	unsigned changed;
};

#define CREDS_CHANGED_GROUPS 1u
#define CREDS_CHANGED_FSGID 2u
#define CREDS_CHANGED_FSUID 4u
#define CREDS_CHANGED_CAPS 8u

/* Task TID's ids (real, effective, saved, fs), supplementary groups,
 * umask and effective capabilities, from
 * /proc/TID/status.  0, -ESRCH (gone) or -EPROTO (unreadable). */
int creds_of_task(pid_t tid, struct creds *cr);

/* The calling thread (only it: raw system calls, not glibc's, which
 * would change every thread of the supervisor) takes CR's file-system
 * identity; SAVED holds its own to go back to with creds_restore().  The
 * groups change only where the supervisor may change them (root), and
 * its effective capabilities are cut to the caller's.  What the caller
 * shares with the supervisor (a root command's ids and groups) is left
 * alone: the supervisor's own identity, which nothing changes once the
 * command runs, is read once, at the first call. */
void creds_become(const struct creds *cr, struct creds *saved);
/* Reads the supervisor's own identity, from the thread that calls it:
 * the main thread, before any thread of the supervisor takes another
 * (a thread that connects a UNIX socket for a caller gives up root for
 * good, and must not be the one it is read from). */
void creds_init(void);
void creds_restore(const struct creds *saved);

#endif
