/* The command's masks (--mask auto|on|off, doc/INTERNALS.md "Masks"): a
 * mount namespace of the command's own in which what the policy denies
 * is out of the kernel's reach whatever path leads there, so that a
 * second process swapping a symlink or renaming a directory between the
 * supervisor's check and the kernel's walk finds nothing to win.
 *
 *  - a credential the read deny rules name: an empty file (mode 0) over a
 *    file, an empty read-only directory over a directory;
 *  - a protected object inside ${ROOT} (.git/hooks, .github/workflows,
 *    .git/config, ...) that the write deny rules name: bound onto itself
 *    read-only, and each directory between ${ROOT} and it bound onto
 *    itself (a "pin"), since a mount point cannot be renamed or removed:
 *    the protected path cannot be moved away and made again unmasked.
 *
 * The set is computed in the supervisor from the compiled policy
 * (mask-plan.c), before the fork; the child makes the namespace and the
 * mounts before its seccomp filter is installed (which then refuses
 * mount, umount, unshare and setns for good).  The supervisor stays in
 * its own view: it differs from the command's only where the policy
 * denies everything anyway. */
#ifndef AGENTTRACE_MASK_H
#define AGENTTRACE_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/session.h"

enum mask_kind {
	MASK_PIN = 0,   /* a directory on the way to a read-only object: bound onto itself */
	MASK_READONLY,  /* a file or tree the policy denies writing: bound onto itself read-only */
	MASK_EMPTY_DIR, /* a directory the policy denies reading: an empty read-only dir over it */
	MASK_EMPTY_FILE, /* a file the policy denies reading: an empty file of mode 0 over it */
};

struct mask_entry {
	enum mask_kind kind;
	char *path;        /* absolute, resolved, no symlink in it */
	const char *rule;  /* the rule that denies it (the block's string); "" for a pin */
};

/* How the command's namespace is made. */
enum mask_ns {
	MASK_NS_NONE = 0,  /* no namespace: the supervisor's checks alone */
	MASK_NS_MOUNT,     /* root: a mount namespace */
	MASK_NS_USER,      /* not root: a user namespace (the user mapped to itself) and a mount namespace */
};

struct mask {
	struct mask_entry *v;
	size_t n;
	unsigned n_read, n_write;  /* masks of each kind of rule (pins not counted) */
	bool truncated;            /* a bound of the plan was reached: some objects stay unmasked */
	bool read_inexact;         /* a read deny rule names objects the plan does not look for */
	int read_alerts;           /* an object a read alert rule names exists: 1, 0, -1 not yet known */
	enum mask_ns want;         /* what the child is to make */
	enum mask_ns ns;           /* what it made (the child's report) */
	char why[256];             /* why ns is MASK_NS_NONE */
	unsigned applied;          /* masks the child put in force */
	unsigned failed;           /* masks the child could not mount */
	uid_t uid;                 /* the user namespace's one mapping */
	gid_t gid;
	int status_fd[2];          /* the child's report (struct mask_report), -1 */
	int view_fd;               /* the command's root (O_PATH), taken at first use; -1 */
	bool no_mount;             /* test knob MASK_MOUNT=0: the namespace is made, no mount in it */
};

/* ---- the plan (mask-plan.c) ---- */

/* The objects to mask under policy P for a project at ROOT (absolute,
 * resolved): the read deny rules' existing objects, and the write deny
 * rules' existing objects beneath ROOT, each only when the policy denies
 * it as a whole (an --allow-read, --allow-write or a layer's "overrides"
 * that admits something of it keeps it unmasked).  Appends to M.  The
 * denied files with other names (hard links) go to L (linked.h): the
 * read deny rules' files and trees, the write deny rules' anywhere. */
void mask_plan(struct mask *m, const struct rules_policy *p, const char *root, struct linked *l);

/* Whether an object that a read alert rule of P names exists now, looked
 * for along each rule's pattern in full ("**" at every depth), within
 * bounds; true too where a bound was reached or a directory on the way
 * could not be listed. */
bool mask_plan_read_alerts_exist(const struct rules_policy *p);

/* ---- the session (mask.c) ---- */

/* Before the fork: decides (--mask, the mode, root or not, the probe),
 * plans, says what it will do with -v.  Returns AT_GO_ON, or 125 after a
 * message (--mask on where no namespace can be made). */
int mask_setup(struct session *s);

/* Before each fork: the pipe of the child's report.  0 or -errno. */
int mask_spawn_prepare(struct session *s);

/* In the child, first thing after the fork (before it is traced): the
 * namespace and the mounts, then the report to the supervisor through
 * the status pipe.  Never fails the child: what could not be made is
 * reported. */
void mask_child_apply(struct session *s);

/* In the supervisor after the fork, before it traces the child: the
 * child's report.  Returns
 * AT_GO_ON, 125 after a message (--mask on and the masks are not all in
 * force), or AT_MASK_RETRY when the child made a user namespace but no
 * mask in it: that child is to be killed and the command started again
 * without a namespace (spawn.c). */
int mask_child_report(struct session *s);
#define AT_MASK_RETRY (-2)

/* Whether masks are in force (for the summary and the emulated calls). */
bool mask_in_force(const struct mask *m);

/* Whether the whole plan is in force: the namespace made, the plan not
 * cut short by its bounds, no mount failed.  Then every object the deny
 * rules named at the start is out of the kernel's reach on any path. */
bool mask_complete(const struct mask *m);

/* Whether the kernel's view alone keeps every read the policy denies or
 * alerts on from a read-only open by path: the plan complete and in
 * force, every read deny rule's objects looked for, and no object of a
 * read alert rule there (looked for once, at the first question: such
 * a read is the supervisor's to record).  Under Landlock's scope, a
 * continued read-only open then reaches nothing it would not record. */
bool mask_guards_reads(struct mask *m, const struct rules_policy *p);

/* An allowed call of the session is to give a file the name PATH, which
 * the look of mask_guards_reads() may not have seen (an open that
 * creates it, a link's or a rename's new name): a name a read alert rule
 * names makes the reads unguarded for good, looked for or not. */
void mask_reads_named(struct mask *m, const struct rules_policy *p, const char *path);

/* Whether the reads may be guarded, now or once looked for: then a
 * rename to where a read alert rule could name what a directory holds
 * is to be made by the supervisor, and what arrived looked at after it
 * (mask_reads_arrived()): a check of the source beforehand is one
 * another process can undo. */
bool mask_reads_unsettled(const struct mask *m);

/* The supervisor renamed something to PATH for the session: a directory
 * there, where a read alert rule could name what it holds, has the look
 * made again at the next question. */
void mask_reads_arrived(struct mask *m, const struct rules_policy *p, const char *path);

/* The command's root directory as an O_PATH descriptor (taken from task
 * TID, any task of the session: they share one mount namespace), for the
 * calls the supervisor makes for the command (tracer/unotify/emulate.c):
 * a lookup relative to it walks the command's mounts, masks included.
 * AT_FDCWD when no mask is in force. */
int mask_view_fd(struct session *s, pid_t tid);

/* Whether PATH (absolute, resolved) is a mount point of the masks or lies
 * beneath an empty one.  A rename or unlink the supervisor made onto
 * such a path in its own namespace would detach the mask in the
 * command's (Linux 3.18+: a mount point in another namespace does not
 * stop it): any such call of the supervisor's is to be answered EBUSY,
 * as the kernel answers the command itself. */
bool mask_covers(const struct mask *m, const char *path);

/* The summary's "masks" text for the human line: NULL when nothing is
 * to be said. */
const char *mask_summary_note(const struct mask *m);

const char *mask_ns_name(enum mask_ns ns); /* "mount" "user" NULL */

void mask_free(struct mask *m);

#endif
