/* The ptrace backend's event loop (loop.c) and its signal stops
 * (stops.c). */
#ifndef AGENTTRACE_LOOP_H
#define AGENTTRACE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/session.h"
#include "tracer/ptrace/tracee.h"

/* Run until the command's main process has exited.  Then the processes
 * still running are listed in *left (malloc'ed tgids; the caller frees)
 * and killed: nothing outlives the session unsupervised. */
void loop_run(struct session *s, pid_t **left, size_t *n_left);

/* ---- stops.c ---- */

/* True for SIGSTOP SIGTSTP SIGTTIN SIGTTOU. */
bool stops_is_stop_signal(int sig);

/* At a signal-delivery-stop of T for SIG: the signal to inject when
 * resuming (SIG, or 0 to suppress a stop signal that a SIGCONT sent
 * meanwhile has cancelled, as the kernel itself would have done). */
int stops_deliver(struct session *s, struct tracee *t, int sig);

/* At a group-stop of PID (PTRACE_EVENT_STOP with a stop signal): leave it
 * stopped yet observable with PTRACE_LISTEN, so that SIGCONT resumes it. */
void stops_group_stop(pid_t pid);

#endif
