/* Which calls of a single-threaded caller another process can turn, by
 * a name it changes (a symlink swapped, a directory renamed in the path),
 * towards an object the policy refuses and no kernel mechanism refuses
 * either: what the notify engine makes itself for such a caller too
 * (tracer/unotify/emulate.h), since the kernel would walk the names
 * again after the check.
 *
 * Only the last component of a name-changing call (rename, link, unlink,
 * mkdir, ...) is fixed by the caller's memory: the kernel does not
 * follow it.  The directories on the way are the attacker's.  So such a
 * call can reach a refused object in another directory only when its
 * last name is one the policy refuses somewhere inside the write roots
 * (where Landlock lets it through), or the directory is inside a
 * protected tree no mask covers: one made during the session, or any
 * when the masks are not in force.  A call that changes a file's
 * attributes, owner, mode or times is not Landlock's business: always
 * made here.  So is the connect or bind of a UNIX socket's path.
 *
 * An open for writing follows its last component, which a swapped
 * symlink can make any name: it is made here when its judged last name
 * is one the policy refuses, or when a protected tree may be unmasked;
 * the rest rely on the masks and Landlock (doc/THREAT-MODEL.md says what
 * stays open). */
#ifndef AGENTTRACE_UNOTIFY_NAMEWATCH_H
#define AGENTTRACE_UNOTIFY_NAMEWATCH_H

#include <stdbool.h>
#include <sys/types.h>

struct call;
struct session;

/* Whether S's allowed call C of task TID of process TGID, one the engine
 * can make itself, is to be made by it whatever the caller's memory:
 * see above; also a write-class call whose path goes through another
 * process's /proc descriptors or working directory.  Notes in S a call
 * that makes a name of a protected tree, or a symlink into /proc (from
 * then on every write-class call is made by the engine). */
bool namewatch_exposed(struct session *s, const struct call *c, pid_t tgid, pid_t tid);

/* Frees what namewatch_exposed() keeps in S. */
void namewatch_free(struct session *s);

#endif
