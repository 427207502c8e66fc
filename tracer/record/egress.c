/* The session's egress table (tracer/record/egress.h). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/xalloc.h"
#include "tracer/record/egress.h"
#include "tracer/record/record.h"

static bool egress_same(const struct egress_dest *d, const char *family, const char *addr,
			int port, const char *host)
{
	return d->port == port && strcmp(d->family, family) == 0 && strcmp(d->addr, addr) == 0 &&
	       (d->host == host || (d->host && host && strcmp(d->host, host) == 0));
}

static void egress_note_one(struct egress *e, const struct rules_event *ev, bool denied)
{
	const char *family = record_family_name(ev->family);
	char addr[INET6_ADDRSTRLEN + 128];
	int port = ev->family == AF_UNIX ? -1 : ev->port;
	const char *host = ev->family == AF_UNIX ? NULL : ev->host;
	struct egress_dest *d = NULL;

	if (!family || !record_addr_text(ev, addr, sizeof(addr)))
		return;
	/* A linear walk: at most EGRESS_MAX short compares, next to a
	 * seccomp stop that costs far more. */
	for (size_t i = 0; i < e->n && !d; i++)
		if (egress_same(&e->v[i], family, addr, port, host))
			d = &e->v[i];
	if (!d && e->n == EGRESS_MAX) {
		if (denied)
			e->other_denied++;
		else
			e->other_allowed++;
		return;
	}
	if (!d) {
		if (!e->v)
			e->v = xcalloc(EGRESS_MAX, sizeof(*e->v));
		d = &e->v[e->n++];
		d->family = family;
		d->addr = xstrdup(addr);
		d->port = port;
		d->host = host ? xstrdup(host) : NULL;
	}
	if (denied)
		d->denied++;
	else
		d->allowed++;
}

void egress_note(struct egress *e, const struct rules_event *events, size_t n, bool denied)
{
	for (size_t i = 0; e && events && i < n && i < RULES_CALL_EVENTS; i++)
		if (events[i].kind == RULES_KIND_NET)
			egress_note_one(e, &events[i], denied);
}

void egress_sort(struct egress *e)
{
	/* Ties keep the order first seen: a stable insertion sort, the
	 * table being small. */
	for (size_t i = 1; e && i < e->n; i++) {
		struct egress_dest d = e->v[i];
		size_t j = i;

		for (; j > 0; j--) {
			struct egress_dest *p = &e->v[j - 1];
			uint64_t tp = p->allowed + p->denied, td = d.allowed + d.denied;
			bool before = (d.denied > 0 && p->denied == 0) ||
				      ((d.denied > 0) == (p->denied > 0) && td > tp);

			if (!before)
				break;
			e->v[j] = *p;
		}
		e->v[j] = d;
	}
}

void egress_free(struct egress *e)
{
	for (size_t i = 0; e && i < e->n; i++) {
		free(e->v[i].addr);
		free(e->v[i].host);
	}
	if (e)
		free(e->v);
}
