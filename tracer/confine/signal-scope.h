/* Signals to many processes at once, kept to the session: kill(-1, sig),
 * kill(0, sig), kill(-pgrp, sig) and pidfd_send_signal(2) with
 * PIDFD_SIGNAL_PROCESS_GROUP (the decoder marks them, call.h
 * signal_scope).  doc/SYSCALLS.md "Signals" says what each does. */
#ifndef AGENTTRACE_SIGNAL_SCOPE_H
#define AGENTTRACE_SIGNAL_SCOPE_H

#include "tracer/session.h"

struct call;
struct stop_answer;
struct tracee;

/* At the stop of task T in call C (C->signal_scope set), answering in A:
 * let the kernel run the call when every process it reaches is the session's;
 * else send the signal to the session's own processes among them
 * (supervisor-made, with the caller's permission to signal each checked
 * as the kernel would) and answer the call as the kernel would have for
 * those, or refuse it with EPERM when none is the session's.  Processes
 * outside the session that were spared are recorded (kind "syscall",
 * rule syscall.signal-outside); agenttrace's own processes are spared
 * without a record. */
void signal_scope_run(struct session *s, struct tracee *t, struct call *c, struct stop_answer *a);

#endif
