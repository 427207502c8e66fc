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

struct hosts_entry {
	uint8_t family; /* 0: unused slot */
	uint8_t source;
	uint8_t addr[16];
	char name[CHANNEL_HOST_MAX];
};

struct hosts {
	struct hosts_entry ring[HOSTS_CAPACITY];
	size_t next;            /* slot written next; the newest is next - 1 */
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
