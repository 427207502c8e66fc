/* The session's state: names, clocks, ids, the exit status it comes to.
 * Setting it up and tearing it down is start.c's. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "tracer/session.h"

const char *session_kind_name(enum session_kind k)
{
	switch (k) {
	case SESSION_KIND_EXEC: return "exec";
	case SESSION_KIND_WRITE: return "write";
	case SESSION_KIND_READ: return "read";
	case SESSION_KIND_NET: return "net";
	case SESSION_KIND_SYSCALL: return "syscall";
	case SESSION_KIND_LIMIT: return "limit";
	default: return "?";
	}
}

const char *session_engine_name(enum session_engine e)
{
	return e == SESSION_ENGINE_NOTIFY ? "notify" : "ptrace";
}

uint64_t session_elapsed_ms(const struct session *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - s->started.tv_sec) * 1000u +
	       (uint64_t)((now.tv_nsec - s->started.tv_nsec) / 1000000);
}

void session_token(char id[17])
{
	unsigned char b[8];
	ssize_t n = getrandom(b, sizeof(b), GRND_NONBLOCK);

	if (n != (ssize_t)sizeof(b)) {
		/* No entropy yet (early boot): an id only needs to tell runs
		 * apart, time and pid do that. */
		struct timespec ts;
		uint64_t v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 44);
		memcpy(b, &v, sizeof(b));
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(id + 2 * i, 3, "%02x", b[i]);
}

void session_count(struct session *s, int kind, enum rules_action action, const char *rule)
{
	if (kind < 0 || kind >= SESSION_KIND_COUNT || (unsigned)action >= RULES_ACTION_COUNT)
		return;
	s->counts[kind][action]++;
	if (action == RULES_ACTION_DENY)
		s->denials++;
	else if (action == RULES_ACTION_ALERT)
		s->alerts++;
	if (fail_on_matches(&s->opt->fail_on, action, rule))
		s->fail_on_hit = true;
}

void session_note_own_sandbox(struct session *s, const char *rule, const char *prog)
{
	if (!rule || (strcmp(rule, "syscall.namespace") != 0 &&
		      strcmp(rule, "syscall.seccomp_listener") != 0))
		return;
	if (!s->own_sandbox_refused++)
		snprintf(s->own_sandbox_by, sizeof(s->own_sandbox_by), "%s", prog ? prog : "?");
}

int session_exit_status(const struct session *s)
{
	int code;

	if (WIFEXITED(s->main_status))
		code = WEXITSTATUS(s->main_status);
	else if (WIFSIGNALED(s->main_status))
		code = AT_EXIT_SIGNAL_BASE + WTERMSIG(s->main_status);
	else
		code = AT_EXIT_FAILURE;
	if (s->lost)
		return AT_EXIT_FAILURE;
	if (code == 0 && s->fail_on_hit)
		return AT_EXIT_FAIL_ON;
	return code;
}
