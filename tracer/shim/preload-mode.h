/* The preload-only run loop (--backend preload, or auto when ptrace cannot
 * start): nothing is traced; the shim decides in-process and reports each
 * event over the channel; agenttrace stays the parent and the one writer
 * of records (backend "preload"). */
#ifndef AGENTTRACE_PRELOAD_MODE_H
#define AGENTTRACE_PRELOAD_MODE_H

#include <stddef.h>
#include <sys/types.h>

#include "tracer/shim/channel.h"
#include "tracer/session.h"

/* Run until the command's main process has exited, then list and kill
 * the processes of the session still running (agenttrace is their
 * subreaper): as loop_run(). */
void preload_mode_run(struct session *s, pid_t **left, size_t *n_left);

/* One EVENT message -> one record. */
void preload_mode_event(struct session *s, const struct channel_msg *m);

/* The text every preload-only summary carries (doc/THREAT-MODEL.md). */
#define PRELOAD_MODE_NOTE                                                           \
	"preload-only: decisions were taken inside the programs by an LD_PRELOAD "   \
	"library, which static binaries, raw syscalls and libc-internal calls "      \
	"bypass; signals, pidfds and the machine's calls (TIOCSTI, raw sockets, "     \
	"device nodes, host name) are not judged, nor rules with \"under\" (the "    \
	"programs above a process are not known); use the ptrace backend for "      \
	"enforcement"

/* The command's own exec, which agenttrace makes without the shim, decided
 * as the shim decides an exec.  -1 to go on, else the exit status (126)
 * after the denial record, with s->command_refused set: the session ends
 * with its summary. */
int preload_mode_decide_command(struct session *s);

#endif
