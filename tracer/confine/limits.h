/* Resource ceilings of a session (limits.c): --timeout, --max-procs,
 * --max-memory, --max-cpu, defaults from the policy's "limits". */
#ifndef AGENTTRACE_LIMITS_H
#define AGENTTRACE_LIMITS_H

#include <stdbool.h>

#include "tracer/syscall/call.h"
#include "tracer/session.h"
#include "tracer/ptrace/tracee.h"

struct record;

/* Arms the timeout; called once the command is started. */
void limits_start(struct session *s);

/* Milliseconds until the next deadline, or -1 when none is armed. */
long limits_next_ms(const struct session *s);

/* Acts on deadlines that have passed: SIGTERM to every process of the
 * session at the timeout, SIGKILL 2 s later. */
void limits_check(struct session *s);

/* PERCENT of the kernel's task limit (the lower of threads-max and
 * pid_max); 0 (and a warning) when it cannot be read. */
uint64_t limits_task_share(uint32_t percent);

/* At a fork/vfork/clone stop of T: false (and a "limit" record) when a new
 * process would exceed --max-procs; the caller then denies with EAGAIN. */
bool limits_spawn_allowed(struct session *s, struct tracee *t, const struct call *c);

/* Before the command is forked: the session's cgroup for --max-memory and
 * --max-cpu and a --max-procs share, when one can be made (else rlimits
 * apply, -v says so; a ceiling given as a share is then dropped). */
void limits_prepare(struct session *s);

/* PERCENT of the machine's physical memory, in bytes; 0 (and a warning)
 * when its size cannot be read. */
uint64_t limits_machine_share(uint32_t percent);

/* fork(2) of the command's process; *IN_CGROUP true when it was made in
 * the session's cgroup, else the child calls limits_enter() first. */
pid_t limits_fork(struct session *s, bool *in_cgroup);

/* In the child, before the command runs: into the session's cgroup, if
 * there is one.  0 or -errno. */
int limits_enter(struct session *s);

/* At the end: records the last OOM kills, removes the cgroup. */
void limits_finish(struct session *s);

/* A spawn refused at --max-procs, by either backend: the limit record
 * (the first LIMITS_SPAWN_RECORDS of a session; the others are counted).
 * WHO holds the asker (pid, ppid, exe, argv, backend). */
void limits_spawn_refused(struct session *s, struct record *who, const char *syscall);

/* In the child, just before exec: RLIMIT_AS and RLIMIT_CPU where no cgroup
 * applies them to the session.  0 or -errno. */
int limits_apply_rlimits(const struct session *s);

/* T is about to receive SIGXCPU: the CPU ceiling was hit. */
void limits_cpu_hit(struct session *s, struct tracee *t);

#endif
