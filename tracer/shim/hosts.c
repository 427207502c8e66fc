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
#include "lib/xalloc.h"
#include "rules/rules.h"
#include "tracer/shim/hosts.h"
#include "tracer/session.h"

struct hosts_entry {
	uint8_t family; /* 0: unused slot */
	uint8_t source;
	uint8_t addr[16];
	char name[CHANNEL_HOST_MAX];
};

struct hosts {
	struct hosts_entry ring[HOSTS_CAPACITY];
	size_t next;            /* slot written next; the newest is next - 1 */
	bool resolved;          /* a resolver was started at least once */
	uint64_t resolved_at;   /* session ms of the last start */
};

struct hosts *hosts_new(void)
{
	return xcalloc(1, sizeof(struct hosts));
}

void hosts_free(struct hosts *h)
{
	free(h);
}

void hosts_add(struct hosts *h, const char *name, int family, const uint8_t addr[16],
	       enum channel_source source)
{
	struct hosts_entry *e;
	size_t n;

	if (!name || !*name || (family != AF_INET && family != AF_INET6))
		return;
	n = strnlen(name, CHANNEL_HOST_MAX - 1);
	/* The same answer again (every getaddrinfo of a busy client): just
	 * make it the newest by writing it anew only when it is not already. */
	if (h->next) {
		e = &h->ring[(h->next - 1) % HOSTS_CAPACITY];
		if (e->family == family && memcmp(e->addr, addr, 16) == 0 &&
		    strncmp(e->name, name, n) == 0 && e->name[n] == 0)
			return;
	}
	e = &h->ring[h->next++ % HOSTS_CAPACITY];
	e->family = (uint8_t)family;
	e->source = (uint8_t)source;
	memcpy(e->addr, addr, 16);
	memcpy(e->name, name, n);
	e->name[n] = 0;
}

static const struct hosts_entry *hosts_find(const struct hosts *h, int family,
					    const uint8_t addr[16])
{
	size_t len = family == AF_INET ? 4 : 16;
	size_t n = h->next < HOSTS_CAPACITY ? h->next : HOSTS_CAPACITY;

	for (size_t i = 1; i <= n; i++) {
		const struct hosts_entry *e = &h->ring[(h->next - i) % HOSTS_CAPACITY];

		if (e->family == family && memcmp(e->addr, addr, len) == 0)
			return e;
	}
	return NULL;
}

const char *hosts_lookup(const struct hosts *h, int family, const uint8_t addr[16],
			 enum channel_source *source)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct hosts_entry *e = NULL;

	if (!h)
		return NULL;
	if (family == AF_INET || family == AF_INET6)
		e = hosts_find(h, family, addr);
	if (!e && family == AF_INET6 && memcmp(addr, mapped, sizeof(mapped)) == 0) {
		uint8_t v4[16] = { 0 };

		memcpy(v4, addr + 12, 4);
		e = hosts_find(h, AF_INET, v4);
	}
	if (!e)
		return NULL;
	if (source)
		*source = (enum channel_source)e->source;
	return e->name;
}

/* A host name rule agenttrace can look up: no glob character. */
static bool hosts_resolvable(const char *glob)
{
	return *glob && !strpbrk(glob, "*?[\\");
}

static void hosts_send(int fd, const struct sockaddr_un *sa, socklen_t salen, const char *name)
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
 * finds them: at most HOSTS_FIRST_WAIT_MS, a dead resolver must not hold
 * up every run.  The queue is drained meanwhile (it holds few datagrams). */
static void hosts_wait_first(struct session *s, pid_t pid)
{
	uint64_t until = session_elapsed_ms(s) + HOSTS_FIRST_WAIT_MS;
	struct timespec nap = { 0, 2 * 1000 * 1000 };

	for (;;) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		channel_drain(s);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (session_elapsed_ms(s) >= until) {
			debug_msg("host name resolver still busy after %d ms; going on",
				  HOSTS_FIRST_WAIT_MS);
			break;
		}
		nanosleep(&nap, NULL);
	}
	channel_drain(s);
}

int hosts_resolve(struct session *s)
{
	const struct rules_policy *p = s->policy;
	const struct rules_span *sp = &p->span[RULES_KIND_NET][RULES_ACTION_ALLOW];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct hosts *h = s->hosts;
	uint64_t now = session_elapsed_ms(s);
	int names = 0, fd;
	bool first;
	socklen_t salen;
	pid_t pid;

	if (!h || s->channel_fd < 0)
		return 0;
	if (h->resolved && now - h->resolved_at < HOSTS_REFRESH_MS)
		return 0;
	first = !h->resolved;
	h->resolved = true;
	h->resolved_at = now;
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);

		if (r->pat.net_type == RULES_NET_HOST &&
		    hosts_resolvable(rules_string(p, r->pat.text)))
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
			hosts_wait_first(s, pid);
		return names; /* later ones are reaped by the event loop */
	}
	/* The tests make a slow resolver, to show that the command's events
	 * that arrive meanwhile are kept (t0210). */
	const char *delay = getenv("AGENTTRACE_TEST_RESOLVER_DELAY_MS");
	if (delay) {
		long ms = strtol(delay, NULL, 10);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		if (ms > 0 && ms < 10000)
			nanosleep(&ts, NULL);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		_exit(1);
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);
		const char *name = rules_string(p, r->pat.text);

		if (r->pat.net_type == RULES_NET_HOST && hosts_resolvable(name))
			hosts_send(fd, &sa, salen, name);
	}
	_exit(0);
}
