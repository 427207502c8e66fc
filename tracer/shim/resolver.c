/* agenttrace's own lookups of the host names the policy allows
 * (tracer/shim/resolver.h). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/testknob.h"
#include "rules/rules.h"
#include "tracer/session.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/resolver.h"

/* A host name rule agenttrace can look up: no glob character. */
static bool resolver_can_look_up(const char *glob)
{
	return *glob && !strpbrk(glob, "*?[\\");
}

static void resolver_send(int fd, const struct sockaddr_un *sa, socklen_t salen, const char *name)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	struct channel_msg m;

	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return;
	memset(&m, 0, sizeof(m));
	m.magic = CHANNEL_MAGIC;
	m.version = CHANNEL_VERSION;
	m.type = CHANNEL_HOSTS;
	m.pid = getpid();
	m.ppid = getppid();
	m.u.hosts.source = CHANNEL_SOURCE_RESOLVER;
	strncpy(m.u.hosts.name, name, sizeof(m.u.hosts.name) - 1);
	for (struct addrinfo *ai = res; ai && m.u.hosts.n < CHANNEL_HOST_ADDRS; ai = ai->ai_next) {
		struct channel_addr *a = &m.u.hosts.addrs[m.u.hosts.n];

		if (ai->ai_family == AF_INET) {
			a->family = AF_INET;
			memcpy(a->addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			a->family = AF_INET6;
			memcpy(a->addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		m.u.hosts.n++;
	}
	freeaddrinfo(res);
	if (m.u.hosts.n)
		sendto(fd, &m, CHANNEL_HEADER_SIZE + sizeof(m.u.hosts), 0,
		       (const struct sockaddr *)sa, salen);
}

/* The first answers before the command runs (it is still held at the
 * canary in ptrace mode), so that a static program connecting at once
 * finds them: at most RESOLVER_FIRST_WAIT_MS, a dead resolver must not hold
 * up every run.  The queue is drained meanwhile (it holds few datagrams). */
static void resolver_wait_first(struct session *s, pid_t pid)
{
	uint64_t until = session_elapsed_ms(s) + RESOLVER_FIRST_WAIT_MS;
	struct timespec nap = { 0, 2 * 1000 * 1000 };

	for (;;) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		channel_drain(s);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (session_elapsed_ms(s) >= until) {
			debug_msg("host name resolver still busy after %d ms; going on",
				  RESOLVER_FIRST_WAIT_MS);
			break;
		}
		nanosleep(&nap, NULL);
	}
	channel_drain(s);
}

int resolver_run(struct session *s)
{
	const struct rules_policy *p = s->policy;
	const struct rules_span *sp = &p->span[RULES_KIND_NET][RULES_ACTION_ALLOW];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t now = session_elapsed_ms(s);
	int names = 0, fd;
	bool first;
	socklen_t salen;
	pid_t pid;

	if (!s->hosts || s->channel_fd < 0)
		return 0;
	if (s->resolved && now - s->resolved_at < RESOLVER_REFRESH_MS)
		return 0;
	first = !s->resolved;
	s->resolved = true;
	s->resolved_at = now;
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);

		if (r->pat.net_type == RULES_NET_HOST &&
		    resolver_can_look_up(rules_string(p, r->pat.text)))
			names++;
	}
	if (!names)
		return 0;
	/* The abstract name: "@x" is "\0x", no terminating NUL. */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(s->channel_name));
	memcpy(sa.sun_path + 1, s->channel_name + 1, strlen(s->channel_name) - 1);
	pid = fork();
	if (pid < 0) {
		debug_msg("cannot start the host name resolver: %s", strerror(errno));
		return 0;
	}
	if (pid > 0) {
		if (first)
			resolver_wait_first(s, pid);
		return names; /* later ones are reaped by the event loop */
	}
	/* The tests make a slow resolver, to show that the command's events
	 * that arrive meanwhile are kept (t0210). */
	long ms = test_knob("RESOLVER_DELAY_MS", 0, 0, 9999);
	if (ms > 0) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		_exit(1);
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);
		const char *name = rules_string(p, r->pat.text);

		if (r->pat.net_type == RULES_NET_HOST && resolver_can_look_up(name))
			resolver_send(fd, &sa, salen, name);
	}
	_exit(0);
}
