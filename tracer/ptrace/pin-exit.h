/* The ptrace engine's look at an open of a name a program was given to
 * run (stop_pinned(), tracer/stop.h): the kernel makes the open after the
 * check, so the descriptor it returned is looked at in the call's exit
 * stop, and an open that reached another file than the one judged at the
 * exec, which the policy refuses to run, fails with EACCES. */
#ifndef AGENTTRACE_PTRACE_PIN_EXIT_H
#define AGENTTRACE_PTRACE_PIN_EXIT_H

#include <stdbool.h>

struct session;
struct tracee;
struct call;

/* At T's seccomp stop for C, let run: true when its exit stop is wanted
 * (what it needs of C is kept with T until then). */
bool pin_exit_arm(struct tracee *t, const struct call *c);

/* At T's syscall-exit stop: the look, when one was armed. */
void pin_exit_check(struct session *s, struct tracee *t);

#endif
