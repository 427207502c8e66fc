/* Resource ceilings.
 *
 *  --timeout:    SIGTERM to every process of the session, SIGKILL 2 s later
 *                for those that ignore it; the exit status is the killed
 *                command's (143 or 137).
 *  --max-procs:  live processes (thread groups) counted in the task table,
 *                plus forks allowed but not seen yet; a spawn over the
 *                ceiling fails with EAGAIN, as fork(2) does at RLIMIT_NPROC.
 *  --max-memory: the whole session's memory, in a cgroup (cgroup.c): the
 *                kernel's OOM killer ends a process of the session when it
 *                is reached, and the kill is recorded (the cgroup's oom_kill
 *                count, polled).  No usable cgroup (not root, no delegated
 *                controller): RLIMIT_AS of each process, where allocations
 *                beyond it fail with ENOMEM and nothing can be recorded.
 *  --max-cpu:    the whole session's CPU time, read from the cgroup every
 *                100 ms: over it, a record, SIGXCPU to every process (what
 *                RLIMIT_CPU would send), SIGKILL 1 s later.  Without a
 *                cgroup: RLIMIT_CPU of each process; the SIGXCPU is
 *                recorded, the kernel's SIGKILL follows 1 s later.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/confine/cgroup.h"
#include "tracer/confine/limits.h"
#include "tracer/record/record.h"

#define LIMITS_KILL_GRACE_MS 2000
/* RLIMIT_CPU's own grace between SIGXCPU and SIGKILL. */
#define LIMITS_CPU_GRACE_MS 1000
#define LIMITS_CGROUP_POLL_MS 100
/* A fork storm retries; its first refusals say all there is to say. */
#define LIMITS_SPAWN_RECORDS 10

/* R holds who (pid, ppid, exe, argv; backend when not the session's). */
static void limits_emit(struct session *s, struct record *r, const char *rule,
			const char *why, const char *syscall, const char *detail, int err)
{
	r->event = "alert";
	r->action = "deny";
	r->kind = SESSION_KIND_LIMIT;
	r->syscall = syscall;
	r->port = -1;
	r->err = err;
	r->rule = rule;
	r->why = why;
	r->detail = detail;
	record_emit(s, r);
}

static void limits_record(struct session *s, struct tracee *t, const char *rule,
			  const char *why, const char *syscall, const char *detail, int err)
{
	struct record r = { 0 };

	if (t)
		record_who(&r, t);
	else
		r.pid = s->main_pid;
	limits_emit(s, &r, rule, why, syscall, detail, err);
}

void limits_spawn_refused(struct session *s, struct record *who, const char *syscall)
{
	char why[128], detail[64];

	if (s->spawn_refusals++ >= LIMITS_SPAWN_RECORDS) {
		/* Counted, not recorded: see LIMITS_SPAWN_RECORDS. */
		session_count(s, SESSION_KIND_LIMIT, RULES_ACTION_DENY, "limit.max-procs");
		return;
	}
	snprintf(why, sizeof(why), "the session already runs --max-procs %llu processes",
		 (unsigned long long)s->max_procs);
	snprintf(detail, sizeof(detail), "max-procs %llu", (unsigned long long)s->max_procs);
	limits_emit(s, who, "limit.max-procs", why, syscall, detail, EAGAIN);
}

void limits_start(struct session *s)
{
	if (s->timeout_ms)
		s->term_at_ms = s->timeout_ms;
}

long limits_next_ms(const struct session *s)
{
	uint64_t now, next = s->term_at_ms ? s->term_at_ms : s->kill_at_ms;

	/* A cgroup is polled from the start: its first poll is due at 0,
	 * which is a deadline, not "none". */
	if (s->cgroup && (!next || s->cgroup_poll_at_ms < next)) {
		next = s->cgroup_poll_at_ms;
		if (!next)
			return 0;
	}
	if (!next)
		return -1;
	now = session_elapsed_ms(s);
	return next > now ? (long)(next - now) : 0;
}

struct limits_signal {
	int sig;
	unsigned n;
};

static void limits_signal_one(struct tracee *e, void *arg)
{
	struct limits_signal *ls = arg;

	if (e->pid != e->tgid)
		return;
	if (kill(e->pid, ls->sig) == 0)
		ls->n++;
	/* A stopped process only acts on SIGTERM once continued. */
	if (ls->sig == SIGTERM)
		kill(e->pid, SIGCONT);
}

/* The session's cgroup: CPU time over --max-cpu, OOM kills of the memory
 * ceiling. */
static void limits_cgroup_poll(struct session *s, uint64_t now)
{
	struct tracee *main_t = tracee_find(&s->tasks, s->main_pid);
	uint64_t v;

	s->cgroup_poll_at_ms = now + LIMITS_CGROUP_POLL_MS;
	if (!s->procs_exceeded && s->max_procs_percent &&
	    cgroup_task_ceiling_hits(s->cgroup, &v) == 0 && v > 0) {
		char why[256], detail[64];

		/* A fork bomb spins at the ceiling for good: the session is
		 * ended, not left to spin. */
		snprintf(why, sizeof(why), "the session reached its ceiling of %llu tasks (%u%% of the "
			 "kernel's task limit) and a fork failed: every process of it was killed",
			 (unsigned long long)s->max_procs, (unsigned)s->max_procs_percent);
		snprintf(detail, sizeof(detail), "max-procs %u%%", (unsigned)s->max_procs_percent);
		limits_record(s, main_t, "limit.max-procs", why, NULL, detail, EAGAIN);
		s->procs_exceeded = true;
		cgroup_kill_all(s->cgroup);
	}
	if (cgroup_oom_kills(s->cgroup, &v) == 0 && v > s->oom_kills) {
		char why[160], detail[64];

		snprintf(why, sizeof(why), "the session's memory reached --max-memory %llu bytes: "
			 "the kernel killed %llu process%s of it",
			 (unsigned long long)s->max_memory, (unsigned long long)(v - s->oom_kills),
			 v - s->oom_kills == 1 ? "" : "es");
		snprintf(detail, sizeof(detail), "max-memory %llu", (unsigned long long)s->max_memory);
		limits_record(s, main_t, "limit.max-memory", why, NULL, detail, 0);
		s->oom_kills = v;
	}
	if (!s->cpu_exceeded && s->max_cpu && cgroup_cpu_usec(s->cgroup, &v) == 0 &&
	    v >= s->max_cpu * 1000000u) {
		char why[128], detail[64];

		snprintf(why, sizeof(why), "the session used --max-cpu %llu s of CPU (%.2f s)",
			 (unsigned long long)s->max_cpu, (double)v / 1e6);
		snprintf(detail, sizeof(detail), "max-cpu %llus", (unsigned long long)s->max_cpu);
		limits_record(s, main_t, "limit.max-cpu", why, NULL, detail, 0);
		s->cpu_exceeded = true;
		cgroup_signal(s->cgroup, SIGXCPU);
		if (!s->kill_at_ms || s->kill_at_ms > now + LIMITS_CPU_GRACE_MS)
			s->kill_at_ms = now + LIMITS_CPU_GRACE_MS;
	}
}

void limits_check(struct session *s)
{
	uint64_t now;

	if (!s->term_at_ms && !s->kill_at_ms && !s->cgroup)
		return;
	now = session_elapsed_ms(s);
	if (s->cgroup && now >= s->cgroup_poll_at_ms)
		limits_cgroup_poll(s, now);
	if (s->term_at_ms && now >= s->term_at_ms) {
		struct limits_signal ls = { SIGTERM, 0 };
		char why[128], detail[64];
		struct tracee *main_t = tracee_find(&s->tasks, s->main_pid);

		snprintf(why, sizeof(why), "the session ran longer than --timeout %.3g s",
			 (double)s->timeout_ms / 1000.0);
		snprintf(detail, sizeof(detail), "timeout %.3gs", (double)s->timeout_ms / 1000.0);
		limits_record(s, main_t, "limit.timeout", why, NULL, detail, 0);
		s->timed_out = true;
		s->term_at_ms = 0;
		s->kill_at_ms = now + LIMITS_KILL_GRACE_MS;
		tracee_foreach(&s->tasks, limits_signal_one, &ls);
	}
	if (s->kill_at_ms && now >= s->kill_at_ms) {
		struct limits_signal ls = { SIGKILL, 0 };

		s->kill_at_ms = 0;
		/* The cgroup also knows the processes preload mode does not trace. */
		if (s->cgroup)
			ls.n = (unsigned)cgroup_signal(s->cgroup, SIGKILL);
		else
			tracee_foreach(&s->tasks, limits_signal_one, &ls);
		if (ls.n) {
			char why[128], detail[64];

			/* The escalation is part of the story: which run
			 * ignored SIGTERM and had to be killed. */
			snprintf(why, sizeof(why), "%u process%s ignored %s: killed with SIGKILL",
				 ls.n, ls.n == 1 ? "" : "es",
				 s->timed_out ? "SIGTERM at --timeout" : "SIGXCPU at --max-cpu");
			snprintf(detail, sizeof(detail), "SIGKILL to %u", ls.n);
			limits_record(s, tracee_find(&s->tasks, s->main_pid),
				      s->timed_out ? "limit.timeout-kill" : "limit.max-cpu-kill",
				      why, NULL, detail, 0);
		}
	}
}

static uint64_t limits_read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

uint64_t limits_task_share(uint32_t percent)
{
	uint64_t threads = limits_read_sysctl("/proc/sys/kernel/threads-max");
	uint64_t pids = limits_read_sysctl("/proc/sys/kernel/pid_max");
	uint64_t limit = threads && pids ? (threads < pids ? threads : pids) : threads + pids;

	if (!limit) {
		warn_msg("limits: cannot read the kernel's task limit: no process ceiling");
		return 0;
	}
	return limit * percent / 100 ? limit * percent / 100 : 1;
}

bool limits_spawn_allowed(struct session *s, struct tracee *t, const struct call *c)
{
	struct record who = { 0 };

	if (!session_counts_spawns(s) || c->spawns_thread)
		return true;
	if (s->tasks.procs + s->tasks.spawn_pending < s->max_procs)
		return true;
	record_who(&who, t);
	limits_spawn_refused(s, &who, c->name);
	return false;
}

void limits_prepare(struct session *s)
{
	struct cgroup_session *cg;
	int r;

	if (s->cgroup || (!s->max_memory && !s->max_cpu && !s->max_procs_percent))
		return;
	cg = xcalloc(1, sizeof(*cg));
	r = cgroup_open(cg, s->max_memory, s->max_cpu != 0,
			s->max_procs_percent ? s->max_procs : 0);
	if (s->max_procs_percent && (r < 0 || !cg->pids_dir)) {
		info_msg("limits: %s: the process ceiling of %u%% of the kernel's task limit is not "
			 "applied", r < 0 ? strerror(-r) : "no pids controller",
			 (unsigned)s->max_procs_percent);
		s->max_procs = 0;
	}
	if (r < 0) {
		free(cg);
		/* An address-space limit per process is no share of the
		 * machine's memory, and breaks programs that reserve address
		 * space (sanitizers, V8, JVMs): a share is the session's or
		 * nothing. */
		if (s->max_memory_percent) {
			info_msg("limits: no usable cgroup (%s): the memory ceiling of %u%% of the "
				 "machine's memory is not applied%s", strerror(-r),
				 (unsigned)s->max_memory_percent,
				 s->max_cpu ? "; --max-cpu applies to each process (RLIMIT_CPU)" : "");
			s->max_memory = 0;
			return;
		}
		info_msg("limits: no usable cgroup (%s): --max-memory and --max-cpu apply to "
			 "each process (rlimits), not to the session", strerror(-r));
		return;
	}
	info_msg("limits: the session's cgroup (v%d): %s%s%s", cg->version,
		 cg->mem_dir ? cg->mem_dir : "", cg->mem_dir && cg->cpu_dir ? " " : "",
		 cg->cpu_dir && (!cg->mem_dir || strcmp(cg->cpu_dir, cg->mem_dir)) ? cg->cpu_dir : "");
	s->cgroup = cg;
}

uint64_t limits_machine_share(uint32_t percent)
{
	struct sysinfo si;

	if (sysinfo(&si) < 0 || !si.totalram) {
		warn_msg("limits: cannot read the machine's memory size (%s): no memory ceiling",
			 strerror(errno));
		return 0;
	}
	return (uint64_t)si.totalram * si.mem_unit / 100 * percent;
}

pid_t limits_fork(struct session *s, bool *in_cgroup)
{
	*in_cgroup = false;
	return s->cgroup ? cgroup_fork(s->cgroup, in_cgroup) : fork();
}

int limits_enter(struct session *s)
{
	return s->cgroup ? cgroup_enter_self(s->cgroup) : 0;
}

void limits_finish(struct session *s)
{
	if (!s->cgroup)
		return;
	/* A kill in the last 100 ms is recorded too. */
	limits_cgroup_poll(s, session_elapsed_ms(s));
	cgroup_close(s->cgroup);
	free(s->cgroup);
	s->cgroup = NULL;
}

int limits_apply_rlimits(const struct session *s)
{
	struct rlimit rl;

	if (s->max_memory && !(s->cgroup && s->cgroup->mem_dir)) {
		rl.rlim_cur = rl.rlim_max = s->max_memory;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			return -errno;
	}
	if (s->max_cpu && !(s->cgroup && s->cgroup->cpu_dir)) {
		struct rlimit old;

		if (getrlimit(RLIMIT_CPU, &old) < 0)
			return -errno;
		rl.rlim_cur = s->max_cpu;
		rl.rlim_max = s->max_cpu + 1;
		if (old.rlim_max != RLIM_INFINITY && rl.rlim_max > old.rlim_max)
			rl.rlim_max = old.rlim_max;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_CPU, &rl) < 0)
			return -errno;
	}
	return 0;
}

void limits_cpu_hit(struct session *s, struct tracee *t)
{
	char why[128], detail[64];

	/* With a cgroup, the SIGXCPU is agenttrace's own, already recorded. */
	if (s->cgroup && s->cgroup->cpu_dir)
		return;

	snprintf(why, sizeof(why), "the process used --max-cpu %llu s of CPU",
		 (unsigned long long)s->max_cpu);
	snprintf(detail, sizeof(detail), "max-cpu %llus", (unsigned long long)s->max_cpu);
	limits_record(s, t, "limit.max-cpu", why, NULL, detail, 0);
}
