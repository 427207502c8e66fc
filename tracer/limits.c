/* Resource ceilings.
 *
 *  --timeout:    SIGTERM to every process of the session, SIGKILL 2 s later
 *                for those that ignore it; the exit status is the killed
 *                command's (143 or 137).
 *  --max-procs:  live processes (thread groups) counted in the task table,
 *                plus forks allowed but not seen yet; a spawn over the
 *                ceiling fails with EAGAIN, as fork(2) does at RLIMIT_NPROC.
 *  --max-memory: RLIMIT_AS of each process (inherited), so allocations
 *                beyond it fail with ENOMEM; no record can be written for
 *                that, the kernel does not tell the supervisor.
 *  --max-cpu:    RLIMIT_CPU of each process (inherited); SIGXCPU at the
 *                soft limit is recorded, SIGKILL follows 1 s later.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

#include "lib/log.h"
#include "tracer/limits.h"
#include "tracer/record.h"

#define LIMITS_KILL_GRACE_MS 2000
/* A fork storm retries; its first refusals say all there is to say. */
#define LIMITS_SPAWN_RECORDS 10

static void limits_record(struct session *s, struct tracee *t, const char *rule,
			  const char *why, const char *syscall, const char *detail, int err)
{
	struct record r = { 0 };

	r.event = "alert";
	r.pid = t ? t->tgid : s->main_pid;
	r.ppid = t ? t->ppid : 0;
	if (t && t->info) {
		r.exe = t->info->exe;
		r.argv = (const char *const *)t->info->argv;
		r.argc = t->info->argc;
	}
	r.action = "deny";
	r.kind = SESSION_KIND_LIMIT;
	r.syscall = syscall;
	r.port = -1;
	r.err = err;
	r.rule = rule;
	r.why = why;
	r.detail = detail;
	record_emit(s, &r);
}

void limits_start(struct session *s)
{
	if (s->timeout_ms)
		s->term_at_ms = s->timeout_ms;
}

long limits_next_ms(const struct session *s)
{
	uint64_t now, next = s->term_at_ms ? s->term_at_ms : s->kill_at_ms;

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

void limits_check(struct session *s)
{
	uint64_t now;

	if (!s->term_at_ms && !s->kill_at_ms)
		return;
	now = session_elapsed_ms(s);
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
		tracee_foreach(&s->tasks, limits_signal_one, &ls);
		if (ls.n) {
			char why[128], detail[64];

			/* The escalation is part of the story: which run
			 * ignored SIGTERM and had to be killed. */
			snprintf(why, sizeof(why), "%u process%s ignored SIGTERM at --timeout: "
				 "killed with SIGKILL", ls.n, ls.n == 1 ? "" : "es");
			snprintf(detail, sizeof(detail), "SIGKILL to %u", ls.n);
			limits_record(s, tracee_find(&s->tasks, s->main_pid), "limit.timeout-kill",
				      why, NULL, detail, 0);
		}
	}
}

bool limits_spawn_allowed(struct session *s, struct tracee *t, const struct call *c)
{
	char why[128], detail[64];

	if (!s->max_procs || c->spawns_thread)
		return true;
	if (s->tasks.procs + s->tasks.spawn_pending < s->max_procs)
		return true;
	if (s->spawn_refusals++ < LIMITS_SPAWN_RECORDS) {
		snprintf(why, sizeof(why), "the session already runs --max-procs %llu processes",
			 (unsigned long long)s->max_procs);
		snprintf(detail, sizeof(detail), "max-procs %llu", (unsigned long long)s->max_procs);
		limits_record(s, t, "limit.max-procs", why, c->name, detail, EAGAIN);
	} else {
		/* Counted, not recorded: see LIMITS_SPAWN_RECORDS. */
		s->counts[SESSION_KIND_LIMIT][RULES_ACTION_DENY]++;
		s->denials++;
	}
	return false;
}

int limits_apply_rlimits(const struct session *s)
{
	struct rlimit rl;

	if (s->max_memory) {
		rl.rlim_cur = rl.rlim_max = s->max_memory;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			return -errno;
	}
	if (s->max_cpu) {
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

	snprintf(why, sizeof(why), "the process used --max-cpu %llu s of CPU",
		 (unsigned long long)s->max_cpu);
	snprintf(detail, sizeof(detail), "max-cpu %llus", (unsigned long long)s->max_cpu);
	limits_record(s, t, "limit.max-cpu", why, NULL, detail, 0);
}
