/* Starting the command under the supervisor (spawn.c). */
#ifndef AGENTTRACE_SPAWN_H
#define AGENTTRACE_SPAWN_H

#include "tracer/session.h"

/* Fork the command, seize it, and let it go on to install the filter, run
 * the canary and exec.  Returns -1 when the command is started
 * (s->main_pid set, its task in the table), or an exit status after a
 * message (125: ptrace could not start). */
int spawn_command(struct session *s);

/* After the main process ended: -1 when the command really ran, or the
 * exit status of a failure before or at exec (125 setup, 126 not
 * executable, 127 not found), reported from the child through a CLOEXEC
 * pipe and printed here. */
int spawn_outcome(struct session *s);

#endif
