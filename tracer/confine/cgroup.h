/* A cgroup of the session (cgroup.c), for the ceilings that are the
 * session's and not each process's: --max-memory and --max-cpu (agenttrace(1)
 * "resource ceilings for the whole session").  cgroup v2 when the memory
 * controller can be enabled below agenttrace's own cgroup, else the v1
 * memory and cpuacct hierarchies; neither: the caller falls back to
 * per-process rlimits. */
#ifndef AGENTTRACE_CGROUP_H
#define AGENTTRACE_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cgroup_session {
	int version;     /* 1 or 2 */
	char *mem_dir;   /* where memory is limited; NULL: not limited */
	char *cpu_dir;   /* where CPU time is read; NULL: not read */
	char *pids_dir;  /* where tasks are limited; NULL: not limited */
};

/* Makes the session's cgroup(s) agenttrace.<pid> below agenttrace's own:
 * memory limited to MAX_MEMORY bytes (0: not limited), CPU time readable
 * when WANT_CPU, tasks (processes and threads) limited to MAX_TASKS where
 * the pids controller can be had (pids_dir NULL where not; the rest
 * applies).  0, or -errno when no usable cgroup exists (nothing is left
 * behind then).  AGENTTRACE_TEST_NO_CGROUP=1 forces the failure. */
int cgroup_open(struct cgroup_session *cg, uint64_t max_memory, int want_cpu, uint64_t max_tasks);

/* fork(2), the child made inside the session's cgroup where the kernel
 * can: clone3(CLONE_INTO_CGROUP) (Linux 5.7) into a v2 cgroup, and
 * *ENTERED true.  Elsewhere (v1, an older kernel, a refusal,
 * AGENTTRACE_TEST_NO_CLONE_INTO_CGROUP=1) a plain fork(), *ENTERED false,
 * and the child enters by cgroup_enter_self() before the command runs. */
pid_t cgroup_fork(const struct cgroup_session *cg, bool *entered);

/* The calling process, which has one thread, into the cgroup(s).  0 or
 * -errno. */
int cgroup_enter_self(const struct cgroup_session *cg);

/* CPU time used so far by the session's processes, in microseconds. */
int cgroup_cpu_usec(const struct cgroup_session *cg, uint64_t *usec);

/* How many processes the kernel killed for the memory limit so far. */
int cgroup_oom_kills(const struct cgroup_session *cg, uint64_t *n);

/* How many forks and clones the task ceiling refused so far. */
int cgroup_task_ceiling_hits(const struct cgroup_session *cg, uint64_t *n);

/* Kills every process of the cgroup, one that forks meanwhile too. */
void cgroup_kill_all(const struct cgroup_session *cg);

/* Sends SIG to every process in the cgroup (the ones the preload backend
 * does not trace too).  How many were signalled. */
int cgroup_signal(const struct cgroup_session *cg, int sig);

/* Removes the cgroup(s) once empty and frees CG's strings. */
void cgroup_close(struct cgroup_session *cg);

#endif
