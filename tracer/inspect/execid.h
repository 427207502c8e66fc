/* Which file an exec will run, by identity (device and inode), so that
 * the program the kernel loaded can be checked against the one the policy
 * judged: a path the caller rewrote after the check, or a file swapped at
 * the judged path, runs another inode.  A "#!" script runs its
 * interpreter (binfmt_script, up to four levels), which is the file
 * /proc/PID/exe names after the exec. */
#ifndef AGENTTRACE_INSPECT_EXECID_H
#define AGENTTRACE_INSPECT_EXECID_H

#include <stdbool.h>
#include <sys/types.h>

struct exec_id {
	bool known;  /* false: a format this cannot follow (binfmt_misc, ...) */
	dev_t dev;
	ino_t ino;
};

/* The file an execve of PATH (resolved, absolute) loads.  OUT->known is
 * false when that cannot be told (a format binfmt_misc runs).  Returns 0,
 * or -errno when PATH (or a script's interpreter) cannot be opened: the
 * kernel would fail the exec, unless the caller's memory changes first,
 * and the supervisor answers it so itself. */
int exec_id_of(const char *path, struct exec_id *out);

/* Whether process PID, just after its exec, runs the file ID names.  True
 * when ID is not known (nothing to compare) or PID is gone. */
bool exec_id_matches(pid_t pid, const struct exec_id *id);

#endif
