/* --max-procs in preload mode: the shim asks agenttrace before a process
 * is made (fork, vfork, posix_spawn*) and tells it which one was made
 * (wrap-proc.c; the protocol is channel.h's SPAWN_ASK and SPAWN_DONE). */
#ifndef AGENTTRACE_PRELOAD_WRAP_PROC_H
#define AGENTTRACE_PRELOAD_WRAP_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One spawn's conversation with agenttrace, on the caller's stack. */
struct proc_ticket {
	int chan;       /* the datagram socket DONE goes out on, -1 none */
	uint32_t token;
	bool granted;   /* asked and answered "go on": DONE is owed */
};

/* Before a spawn named NAME ("fork", "posix_spawn", ...): 0 to go on, or
 * EAGAIN when the session is at --max-procs.  Without a ceiling (or
 * outside preload mode) 0 at once, nothing sent.  errno is kept. */
int proc_ask(const char *name, struct proc_ticket *t);

/* After it, in the process that asked: the new process, or -1 when the
 * spawn failed.  Releases T.  errno is kept. */
void proc_done(struct proc_ticket *t, pid_t child);

/* In a new child of fork(): drops T without a word (the parent speaks). */
void proc_forget(struct proc_ticket *t);

#endif
