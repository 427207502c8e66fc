/* The supervisor's own opens by a name it was given: the log, the
 * evidence directory, the CI step outputs, Landlock's write roots.
 *
 * The supervisor runs as root, and such a name often lies where a session
 * may write (--log run.jsonl in the project, a cache under $HOME).  A
 * symbolic link planted there by an earlier session, or shipped in a
 * repository (run.jsonl -> a/etc/profile.d/x.sh, then a -> /), would have
 * it append its records to, copy scripts into, or let Landlock grant
 * writes beneath, any file or directory of the machine.  So the name is
 * walked one component at a time, and a symbolic link is followed only
 * where no write rule admits a name (rules_write_admits()): a link there
 * is the user's or the system's (/dev/stdout, a ~/logs linked elsewhere),
 * never one a session could have made. */
#ifndef AGENTTRACE_OWNPATH_H
#define AGENTTRACE_OWNPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules/rules.h"

/* openat(PATH, FLAGS, MODE) in the supervisor's view, each component
 * walked as above.  The descriptor, or -errno: -ELOOP with the link's
 * name in LINK (LINK_SIZE bytes) when a link a session could have made is
 * on the way (LINK "" for 40 links followed, as the kernel's ELOOP). */
int ownpath_open(const struct rules_policy *p, const char *path, int flags, mode_t mode,
		 char *link, size_t link_size);

/* The same for a directory made when it is missing (mkdir MODE, the last
 * component only): its descriptor, O_RDONLY | O_DIRECTORY. */
int ownpath_mkdir(const struct rules_policy *p, const char *path, mode_t mode, char *link,
		  size_t link_size);

/* Says why an ownpath_open() or ownpath_mkdir() of PATH (for WHAT: "the
 * log", "--evidence") failed with ERR, LINK as it set it; -EINVAL: the
 * caller found no regular file where it needs one. */
void ownpath_error(const char *what, const char *path, int err, const char *link);

/* The working directory's name into BUF (SIZE bytes): $PWD, the name the
 * shell reached it by, when it is that directory, else getcwd()'s.  A
 * relative name is walked from there.  False (errno set) when neither. */
bool ownpath_cwd(char *buf, size_t size);

/* Tests: every name walked one component at a time, as where openat2(2)
 * is missing, rather than looked up whole first when no link is on the
 * way. */
void ownpath_force_walk(bool on);

/* The canonical name of what FD refers to (the kernel's, read back from
 * /proc/self/fd), malloc'ed; NULL when it has none. */
char *ownpath_name(int fd);

#endif
