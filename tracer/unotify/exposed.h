/* Whether a call's judged arguments can change under the supervisor
 * before the kernel reads them again: what makes the notify engine make
 * the call itself (tracer/unotify/emulate.h) rather than let it run.
 *
 * A task can change them when another thread of its process runs, or a
 * process sharing its address space (vfork, CLONE_VM).  Another process
 * can when the bytes judged lie in memory it reaches
 * (tracer/inspect/vma.h): a shared mapping, or a file's pages.  A file's
 * pages are fixed only when no process of the session can write the
 * file: the policy refuses writes to its name, to every other name a
 * mount gives it (a bind mount) and it has no other link, and the
 * command did not inherit it open for writing. */
#ifndef AGENTTRACE_UNOTIFY_EXPOSED_H
#define AGENTTRACE_UNOTIFY_EXPOSED_H

#include <stdbool.h>

struct call;
struct session;
struct tracee;

/* Whether task T's call C, one the engine can make itself, can have its
 * arguments changed under the supervisor. */
bool exposed_can_race(struct session *s, const struct tracee *t, const struct call *c);

/* Notes the regular files this process holds open for writing without
 * FD_CLOEXEC, which the command inherits.  Called once the engine is in
 * force, before the command runs its own code. */
void exposed_note_inherited(struct session *s);

/* Frees what the two above keep in S. */
void exposed_free(struct session *s);

#endif
