/* The event loop of the supervisor (loop.c) and its signal handling
 * (signals.c). */
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

/* ---- signals.c ---- */

/* Blocks SIGCHLD and the signals agenttrace forwards (INT TERM HUP QUIT),
 * and SIGPIPE (a closed stderr must not kill the supervisor), keeping the
 * original mask for the child.  Call before spawn_command(). */
void signals_setup(void);

/* Once the command runs: a handler passes the forwarded signals that a
 * process sent to agenttrace on to MAIN_PID, and they are unblocked (those
 * that came meanwhile are passed on now).  Returns 0 or -errno. */
int signals_forward_start(pid_t main_pid);

/* The main process is gone: forward nothing more. */
void signals_forward_stop(void);

/* In the child before exec: the mask the user gave agenttrace. */
void signals_child_reset(void);

/* Waits up to timeout_ms (-1: no deadline; at most 1 s) for SIGCHLD or a
 * forwarded signal's handler.  Returns when something may be ready. */
void signals_wait(long timeout_ms);

/* True for SIGSTOP SIGTSTP SIGTTIN SIGTTOU. */
bool signals_is_stop(int sig);

/* At a signal-delivery-stop of T for SIG: the signal to inject when
 * resuming (SIG, or 0 to suppress a stop signal that a SIGCONT sent
 * meanwhile has cancelled, as the kernel itself would have done). */
int signals_deliver(struct session *s, struct tracee *t, int sig);

/* At a group-stop of PID (PTRACE_EVENT_STOP with a stop signal): leave it
 * stopped yet observable with PTRACE_LISTEN, so that SIGCONT resumes it. */
void signals_group_stop(pid_t pid);

#endif
