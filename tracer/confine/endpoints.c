/* Session endpoints (tracer/confine/endpoints.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/testknob.h"
#include "lib/xalloc.h"
#include "tracer/confine/endpoints.h"
#include "tracer/inspect/sockdiag.h"
#include "tracer/record/record.h"
#include "tracer/session.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define ENDPOINTS_NAME_BUCKETS 256
/* The owner walk's bounds (endpoints_owner()). */
#define ENDPOINTS_OWNER_FDS 20000
#define ENDPOINTS_OWNER_MS 100
#define ENDPOINTS_OWNER_WALKS 64
#define ENDPOINTS_OWNER_CACHE 16

/* A UNIX name the session bound a socket to. */
struct endpoint_name {
	char *name;
	uint64_t ino;
	struct endpoint_name *next;
};

struct endpoint_owner {
	uint64_t ino;
	pid_t pid;     /* 0: looked for, not found */
	char exe[256];
};

struct endpoints {
	uint64_t *inos;            /* open addressing; 0 is a free slot */
	size_t cap, n;
	struct endpoint_name *names[ENDPOINTS_NAME_BUCKETS];
	struct endpoint_owner owners[ENDPOINTS_OWNER_CACHE];
	unsigned owners_next;
	unsigned walks;
};

struct endpoints *endpoints_new(void)
{
	struct endpoints *e = xcalloc(1, sizeof(*e));

	e->cap = 64;
	e->inos = xcalloc(e->cap, sizeof(*e->inos));
	return e;
}

void endpoints_free(struct endpoints *e)
{
	if (!e)
		return;
	for (size_t b = 0; b < ENDPOINTS_NAME_BUCKETS; b++) {
		struct endpoint_name *n = e->names[b], *next;

		for (; n; n = next) {
			next = n->next;
			free(n->name);
			free(n);
		}
	}
	free(e->inos);
	free(e);
}

/* ---- the sockets the session bound ---- */

static size_t endpoints_slot(const struct endpoints *e, uint64_t ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ULL) >> 17) & (e->cap - 1);
}

static bool endpoints_has(const struct endpoints *e, uint64_t ino)
{
	for (size_t i = endpoints_slot(e, ino);; i = (i + 1) & (e->cap - 1)) {
		if (e->inos[i] == ino)
			return true;
		if (e->inos[i] == 0)
			return false;
	}
}

static void endpoints_put(struct endpoints *e, uint64_t ino)
{
	if (ino == 0 || endpoints_has(e, ino))
		return;
	if ((e->n + 1) * 4 > e->cap * 3) {
		uint64_t *old = e->inos;
		size_t cap = e->cap;

		e->cap *= 2;
		e->inos = xcalloc(e->cap, sizeof(*e->inos));
		e->n = 0;
		for (size_t i = 0; i < cap; i++)
			if (old[i])
				endpoints_put(e, old[i]);
		free(old);
	}
	for (size_t i = endpoints_slot(e, ino);; i = (i + 1) & (e->cap - 1))
		if (e->inos[i] == 0) {
			e->inos[i] = ino;
			e->n++;
			return;
		}
}

static struct endpoint_name **endpoints_bucket(struct endpoints *e, const char *name)
{
	return &e->names[hash_fnv1a(name, strlen(name)) % ENDPOINTS_NAME_BUCKETS];
}

static void endpoints_name_add(struct endpoints *e, const char *name, uint64_t ino)
{
	struct endpoint_name **b = endpoints_bucket(e, name), *n;

	for (n = *b; n; n = n->next)
		if (n->ino == ino && strcmp(n->name, name) == 0)
			return;
	n = xmalloc(sizeof(*n));
	n->name = xstrdup(name);
	n->ino = ino;
	n->next = *b;
	*b = n;
}

int endpoints_copy(pid_t tgid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0), copy, err;

	if (pidfd < 0)
		return -errno;
	copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	return copy < 0 ? -err : copy;
}

/* Whether the socket COPY is bound to an address already; its family in
 * *FAMILY. */
static bool endpoints_bound(int copy, int *family)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (getsockname(copy, (struct sockaddr *)&ss, &len) < 0)
		return true; /* cannot tell: not the session's to claim */
	*family = ss.ss_family;
	switch (ss.ss_family) {
	case AF_UNIX:
		return len > offsetof(struct sockaddr_un, sun_path);
	case AF_INET:
		return ((const struct sockaddr_in *)&ss)->sin_port != 0;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)&ss)->sin6_port != 0;
	default:
		return true;
	}
}

static int endpoints_sockopt(int copy, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(copy, SOL_SOCKET, opt, &v, &len) < 0 ? -errno : v;
}

/* The protocol whose table a connect or a datagram of socket COPY is
 * looked up in: IPPROTO_TCP, IPPROTO_UDP, 0 for one that has no
 * receiving socket (ping), -1 for another. */
static int endpoints_protocol(int copy)
{
	switch (endpoints_sockopt(copy, SO_PROTOCOL)) {
	case IPPROTO_TCP:
	case IPPROTO_MPTCP: /* falls back to TCP's listener */
		return IPPROTO_TCP;
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
		return IPPROTO_UDP;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return 0;
	default:
		return -1;
	}
}

void endpoints_note_bind(struct endpoints *e, pid_t tgid, int fd, const struct rules_event *ev,
			 const char *name)
{
	int copy = endpoints_copy(tgid, fd), family = 0;
	struct stat st;

	if (copy < 0)
		return;
	if (fstat(copy, &st) < 0 || !S_ISSOCK(st.st_mode) || endpoints_bound(copy, &family))
		goto out;
	if (ev && ev->port && (family == AF_INET || family == AF_INET6)) {
		int proto = endpoints_protocol(copy);
		uint64_t other;

		/* An address someone else has: the bind fails, or shares it
		 * (SO_REUSEPORT, UDP's SO_REUSEADDR) and the kernel may hand a
		 * connection to either. */
		if (proto > 0 &&
		    sockdiag_inet_receiver(proto, ev->family, ev->addr, ev->port, &other) == 0 &&
		    !endpoints_has(e, other))
			goto out;
	}
	endpoints_put(e, st.st_ino);
	if (name && *name && family == AF_UNIX)
		endpoints_name_add(e, name, st.st_ino);
out:
	close(copy);
}

void endpoints_note_autobind(struct endpoints *e, int copy)
{
	struct stat st;
	int family = 0;

	if (copy < 0 || fstat(copy, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    endpoints_bound(copy, &family) || (family != AF_INET && family != AF_INET6))
		return;
	endpoints_put(e, st.st_ino);
}

int endpoints_listen_event(int copy, struct rules_event *ev)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type = endpoints_sockopt(copy, SO_TYPE);

	if (type < 0)
		return type;
	memset(&ss, 0, sizeof(ss));
	if (getsockname(copy, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (type != SOCK_STREAM || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->kind = RULES_KIND_NET;
	ev->bind = true;
	ev->family = ss.ss_family;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		memcpy(ev->addr, &in->sin_addr, 4);
		ev->port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		memcpy(ev->addr, &in6->sin6_addr, 16);
		ev->port = ntohs(in6->sin6_port);
	}
	return 1;
}

/* ---- whose a destination is ---- */

/* The bytes of the abstract name TEXT ("@name", rules_unix_abstract_text())
 * into OUT (108 bytes): their count. */
static size_t endpoints_abstract_raw(const char *text, unsigned char *out)
{
	size_t n = 0;

	for (const char *p = text + 1; *p && n < 107; n++) {
		unsigned v;

		if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1) {
			out[n] = (unsigned char)v;
			p += 4;
		} else {
			out[n] = (unsigned char)*p++;
		}
	}
	return n;
}

/* The session's socket among those bound to NAME that MATCH accepts;
 * candidates that are gone are forgotten. */
static bool endpoints_named(struct endpoints *e, const char *name,
			    bool (*match)(const struct sockdiag_unix *u, const void *arg),
			    const void *arg)
{
	struct endpoint_name **link = endpoints_bucket(e, name);

	while (*link) {
		struct endpoint_name *n = *link;
		struct sockdiag_unix u;
		int r;

		if (strcmp(n->name, name) != 0) {
			link = &n->next;
			continue;
		}
		r = sockdiag_unix_of(n->ino, &u);
		if (r == -ENOENT) {
			*link = n->next;
			free(n->name);
			free(n);
			continue;
		}
		if (r == 0 && match(&u, arg))
			return true;
		link = &n->next;
	}
	return false;
}

struct endpoints_abstract_want {
	const unsigned char *raw;
	size_t n;
	int type;
};

static bool endpoints_abstract_match(const struct sockdiag_unix *u, const void *arg)
{
	const struct endpoints_abstract_want *w = arg;

	return u->type == w->type && u->name_len == w->n + 1 && u->name[0] == '\0' &&
	       memcmp(u->name + 1, w->raw, w->n) == 0;
}

static bool endpoints_vfs_match(const struct sockdiag_unix *u, const void *arg)
{
	const struct stat *st = arg;

	return u->has_vfs && u->vfs_dev == st->st_dev && u->vfs_ino == (uint32_t)st->st_ino;
}

/* A copy of the caller's socket into OUT, or the answer when it has none. */
static bool endpoints_caller(pid_t tgid, int fd, struct endpoint_found *out)
{
	int copy = endpoints_copy(tgid, fd);

	if (copy >= 0) {
		out->copy = copy;
		return true;
	}
	if (copy == -EBADF) {
		/* No such descriptor: the kernel fails the call itself. */
		out->endpoint = RULES_ENDPOINT_NONE;
		out->answer = EBADF;
	}
	return false; /* else outside: nothing could be told */
}

static void endpoints_find_unix(struct endpoints *e, int copy, const struct rules_event *ev,
				struct endpoint_found *out)
{
	const char *name = ev->unix_path;
	uint64_t ino = 0;
	struct stat st;
	int r;

	if (name[0] == '@') {
		unsigned char raw[108];
		struct endpoints_abstract_want w = { raw, endpoints_abstract_raw(name, raw), 0 };

		w.type = copy >= 0 ? endpoints_sockopt(copy, SO_TYPE) : -EBADF;
		if (w.type < 0) {
			out->endpoint = RULES_ENDPOINT_NONE;
			out->answer = -w.type; /* ENOTSOCK: the kernel's own */
			return;
		}
		if (endpoints_named(e, name, endpoints_abstract_match, &w)) {
			out->endpoint = RULES_ENDPOINT_SESSION;
			return;
		}
		r = sockdiag_unix_bound(0, 0, raw, w.n, w.type, &ino);
	} else {
		if (stat(name, &st) < 0) {
			/* The kernel's answer, before any permission check of
			 * the socket: nothing is there to reach. */
			out->endpoint = RULES_ENDPOINT_NONE;
			out->answer = errno;
			return;
		}
		if (!S_ISSOCK(st.st_mode)) {
			out->endpoint = RULES_ENDPOINT_NONE;
			out->answer = ECONNREFUSED;
			return;
		}
		out->vfs_dev = st.st_dev;
		out->vfs_ino = (uint64_t)st.st_ino;
		if (endpoints_named(e, name, endpoints_vfs_match, &st)) {
			out->endpoint = RULES_ENDPOINT_SESSION;
			return;
		}
		r = sockdiag_unix_bound(st.st_dev, st.st_ino, NULL, 0, 0, &ino);
	}
	if (r == -ENOENT) {
		out->endpoint = RULES_ENDPOINT_NONE;
		out->answer = ECONNREFUSED;
	} else if (r == 0) {
		out->listener = ino;
	}
}

void endpoints_find_on(struct endpoints *e, int copy, const struct rules_event *ev,
		       struct endpoint_found *out)
{
	uint64_t ino = 0;
	int proto, r;

	/* Whatever cannot be told is outside: the policy then refuses it
	 * unless a rule names the destination. */
	out->endpoint = RULES_ENDPOINT_OUTSIDE;
	out->answer = 0;
	out->listener = 0;
	out->vfs_dev = 0;
	out->vfs_ino = 0;
	if (ev->family == AF_UNIX) {
		endpoints_find_unix(e, copy, ev, out);
		return;
	}
	if (copy < 0)
		return;
	proto = endpoints_protocol(copy);
	if (proto == 0) {
		out->endpoint = RULES_ENDPOINT_NONE; /* an echo request: no server */
		return;
	}
	if (proto < 0) {
		if (endpoints_sockopt(copy, SO_TYPE) == -ENOTSOCK) {
			out->endpoint = RULES_ENDPOINT_NONE;
			out->answer = ENOTSOCK;
		}
		return;
	}
	r = sockdiag_inet_receiver(proto, ev->family, ev->addr, ev->port, &ino);
	if (r == -ENOENT) {
		out->endpoint = RULES_ENDPOINT_NONE;
		out->answer = proto == IPPROTO_TCP ? ECONNREFUSED : 0;
	} else if (r == 0 && endpoints_has(e, ino)) {
		out->endpoint = RULES_ENDPOINT_SESSION;
	} else if (r == 0) {
		out->listener = ino;
	}
}

void endpoints_find(struct endpoints *e, pid_t tgid, int fd, const struct rules_event *ev,
		    struct endpoint_found *out)
{
	memset(out, 0, sizeof(*out));
	out->copy = -1;
	out->endpoint = RULES_ENDPOINT_OUTSIDE;
	/* A path needs no socket of the caller's: its file names the one
	 * that is reached, whatever the caller's is. */
	if ((ev->family != AF_UNIX || ev->unix_path[0] == '@') && !endpoints_caller(tgid, fd, out))
		return;
	endpoints_find_on(e, out->copy, ev, out);
}

void endpoints_claim(struct endpoints *e, uint64_t ino, const char *name)
{
	endpoints_put(e, ino);
	if (name && *name)
		endpoints_name_add(e, name, ino);
}

/* ---- who listens ---- */

static uint64_t endpoints_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether process PID holds the socket LINK ("socket:[INO]"); *FDS
 * counts the descriptors looked at. */
static bool endpoints_holds(pid_t pid, const char *link, unsigned *fds)
{
	char dir[64], path[64 + 256], text[64];
	struct dirent *d;
	bool hit = false;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return false;
	while (!hit && (d = readdir(dp)) && *fds < ENDPOINTS_OWNER_FDS) {
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		(*fds)++;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		n = readlink(path, text, sizeof(text) - 1);
		if (n <= 0)
			continue;
		text[n] = '\0';
		hit = strcmp(text, link) == 0;
	}
	closedir(dp);
	return hit;
}

/* The walk's time bound; the tests' (AGENTTRACE_TEST_OWNER_WALK_MS): whether
 * a denial names its listener must not depend on how loaded the machine is. */
static long endpoints_owner_ms(void)
{
	static long ms = -1;

	if (ms < 0)
		ms = test_knob("OWNER_WALK_MS", ENDPOINTS_OWNER_MS, 1, 60000);
	return ms;
}

int endpoints_owner(struct endpoints *e, uint64_t ino, pid_t *pid, char *exe, size_t size)
{
	struct endpoint_owner *o;
	char link[40], path[64];
	uint64_t until;
	unsigned fds = 0;
	struct dirent *d;
	DIR *proc;
	ssize_t n;

	if (!ino)
		return -ENOENT;
	for (unsigned i = 0; i < ENDPOINTS_OWNER_CACHE; i++) {
		o = &e->owners[i];
		if (o->ino == ino) {
			if (!o->pid)
				return -ENOENT;
			*pid = o->pid;
			snprintf(exe, size, "%s", o->exe);
			return 0;
		}
	}
	if (e->walks >= ENDPOINTS_OWNER_WALKS)
		return -ENOENT;
	e->walks++;
	o = &e->owners[e->owners_next++ % ENDPOINTS_OWNER_CACHE];
	memset(o, 0, sizeof(*o));
	o->ino = ino;
	snprintf(link, sizeof(link), "socket:[%llu]", (unsigned long long)ino);
	until = endpoints_now_ms() + endpoints_owner_ms();
	proc = opendir("/proc");
	if (!proc)
		return -ENOENT;
	while ((d = readdir(proc)) && fds < ENDPOINTS_OWNER_FDS && endpoints_now_ms() < until) {
		char *end;
		long v = strtol(d->d_name, &end, 10);

		if (*end || v <= 0 || !endpoints_holds((pid_t)v, link, &fds))
			continue;
		o->pid = (pid_t)v;
		snprintf(path, sizeof(path), "/proc/%ld/exe", v);
		n = readlink(path, o->exe, sizeof(o->exe) - 1);
		o->exe[n > 0 ? n : 0] = '\0';
		break;
	}
	closedir(proc);
	if (!o->pid)
		return -ENOENT;
	*pid = o->pid;
	snprintf(exe, size, "%s", o->exe);
	return 0;
}

/* ---- what the command inherits ---- */

#define ENDPOINTS_INHERITED_RECORDS 16

/* The address of socket COPY (its peer when PEER) as text into BUF, its
 * family in *FAMILY and port in *PORT (-1 none).  False when it has none. */
static bool endpoints_addr_text(int copy, bool peer, char *buf, size_t size, int *family,
				int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct rules_event ev = { .kind = RULES_KIND_NET };

	memset(&ss, 0, sizeof(ss));
	if ((peer ? getpeername : getsockname)(copy, (struct sockaddr *)&ss, &len) < 0)
		return false;
	*family = ss.ss_family;
	*port = -1;
	ev.family = ss.ss_family;
	if (ss.ss_family == AF_INET) {
		memcpy(ev.addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(ev.addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else if (ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
		size_t n = len > offsetof(struct sockaddr_un, sun_path) ?
				   len - offsetof(struct sockaddr_un, sun_path) : 0;

		if (n == 0)
			return false; /* unnamed: a socketpair's end */
		if (un->sun_path[0] == '\0') {
			rules_unix_abstract_text((const unsigned char *)un->sun_path + 1, n - 1, buf,
						 size);
		} else {
			snprintf(buf, size, "%.*s", (int)strnlen(un->sun_path, n), un->sun_path);
		}
		return true;
	} else {
		return false;
	}
	if (*port == 0 && !peer)
		return false; /* bound to nothing */
	return inet_ntop(ss.ss_family, ev.addr, buf, (socklen_t)size) != NULL;
}

void endpoints_warn_inherited(struct session *s, const struct tracee *t)
{
	char dir[64], path[64 + 256], text[64], addr[PATH_MAX], why[PATH_MAX + 160];
	unsigned written = 0;
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)t->tgid);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp)) && written < ENDPOINTS_INHERITED_RECORDS) {
		struct record r = { 0 };
		int fd, copy, family = 0, port = -1, listening;
		bool peer = false;
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		n = readlink(path, text, sizeof(text) - 1);
		if (n <= 0)
			continue;
		text[n] = '\0';
		if (strncmp(text, "socket:[", 8) != 0)
			continue;
		fd = atoi(d->d_name);
		copy = endpoints_copy(t->tgid, fd);
		if (copy < 0)
			continue;
		listening = endpoints_sockopt(copy, SO_ACCEPTCONN) == 1;
		if (!listening)
			peer = endpoints_addr_text(copy, true, addr, sizeof(addr), &family, &port);
		if (!peer && !endpoints_addr_text(copy, false, addr, sizeof(addr), &family, &port))
			snprintf(addr, sizeof(addr), "%s", "");
		close(copy);
		snprintf(why, sizeof(why),
			 "descriptor %d, a socket %s%s%s%.0d, came from agenttrace's caller: it is "
			 "used without any check", fd,
			 listening ? "listening on " : peer ? "connected to " : addr[0] ? "bound to " :
								 "with no address",
			 addr, port > 0 ? ":" : "", port > 0 ? port : 0);
		r.event = "warning";
		record_who(&r, t);
		r.kind = -1;
		r.port = port > 0 ? port : -1;
		r.rule = "fd.inherited-socket";
		r.why = why;
		r.family = record_family_name(family);
		r.addr = addr[0] ? addr : NULL;
		record_emit(s, &r);
		written++;
	}
	closedir(dp);
}
