/* connect, sendto, sendmsg, sendmmsg (preload mode: decided here, with the host
 * name this process resolved for the address; whose a local destination
 * is, the supervisor says), bind and listen (preload mode: an address
 * other than loopback is judged, a UNIX path is a write, and a socket
 * bound is reported as the session's), and the name lookups (both
 * modes: their answers go to the supervisor, which matches "net" rules
 * written with host names and puts "host" into records). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "preload/ask.h"
#include "preload/real.h"
#include "preload/shim.h"
#include "lib/channel-wire.h"

#define EXPORT __attribute__((visibility("default")))

/* 0 or the errno of a denial, for a destination SA of the socket FD, or
 * (BIND) the address FD is bound to; UPATH (PATH_MAX) gets the UNIX name
 * (resolved, or "@name"), "" for none. */
/* The address family of socket FD; 0 when it is none. */
static int net_domain(int fd)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 ? domain : 0;
}

static int net_check_at(int fd, const struct sockaddr *sa, socklen_t len, const char *name,
			bool bind, char *upath)
{
	char host[CHANNEL_HOST_MAX];
	struct ask_call c = { 0 };
	int saved = errno;

	upath[0] = 0;
	if (!sa || len < (socklen_t)sizeof(sa_family_t))
		return 0;
	c.syscall = name;
	c.kind = RULES_KIND_NET;
	c.family = sa->sa_family;
	c.sock_fd = fd;
	c.bind = bind;
	/* A datagram named AF_UNSPEC goes where its address says on an IPv4
	 * socket (udp_sendmsg() takes it for AF_INET); on an IPv6 one, to
	 * the connected peer.  A connect with it dissolves an association. */
	if (sa->sa_family == AF_UNSPEC && !bind && strcmp(name, "connect") != 0 &&
	    len >= (socklen_t)sizeof(struct sockaddr_in) && net_domain(fd) == AF_INET)
		c.family = AF_INET;
	switch (c.family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (len < (socklen_t)sizeof(*in))
			return 0;
		memcpy(c.addr, &in->sin_addr, 4);
		c.port = ntohs(in->sin_port);
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (len < (socklen_t)sizeof(*in6))
			return 0;
		memcpy(c.addr, &in6->sin6_addr, 16);
		c.port = ntohs(in6->sin6_port);
		break;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t n = len > offsetof(struct sockaddr_un, sun_path) ?
			   len - offsetof(struct sockaddr_un, sun_path) : 0;

		if (n > sizeof(un->sun_path))
			n = sizeof(un->sun_path);
		if (n == 0) {
			c.unix_path = NULL; /* unnamed */
		} else if (un->sun_path[0] == 0) {
			rules_unix_abstract_text((const unsigned char *)un->sun_path + 1, n - 1, upath,
				     PATH_MAX);
			c.unix_path = upath;
		} else {
			char rel[sizeof(un->sun_path) + 1];

			memcpy(rel, un->sun_path, n);
			rel[n] = 0;
			if (ask_path(AT_FDCWD, rel, false, upath) < 0) {
				upath[0] = 0;
				return 0;
			}
			c.unix_path = upath;
		}
		if (bind) {
			/* No event for an abstract name (no file is made); a path
			 * is a write of the socket file. */
			if (!c.unix_path || c.unix_path[0] == '@')
				return 0;
			c.kind = RULES_KIND_WRITE;
			c.path = c.unix_path;
			c.unix_path = NULL;
			c.family = 0;
		}
		break;
	}
	default:
		return 0; /* netlink and the like: not the policy's business */
	}
	if (c.family != AF_UNIX && c.kind == RULES_KIND_NET && !bind)
		c.host = ask_host_of(c.family, c.addr, host);
	errno = saved;
	return ask_decide(&c);
}

static int net_check(int fd, const struct sockaddr *sa, socklen_t len, const char *name)
{
	char upath[PATH_MAX];

	return net_check_at(fd, sa, len, name, false, upath);
}

/* Whether socket FD is bound to nothing yet; its inode, family and type. */
static bool net_unbound(int fd, uint64_t *ino, int *family, int *type)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss), tl = sizeof(*type);
	struct stat st;

	memset(&ss, 0, sizeof(ss));
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, type, &tl) < 0)
		return false;
	*ino = st.st_ino;
	*family = ss.ss_family;
	switch (ss.ss_family) {
	case AF_UNIX:
		return len <= offsetof(struct sockaddr_un, sun_path);
	case AF_INET:
		return ((const struct sockaddr_in *)&ss)->sin_port == 0;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)&ss)->sin6_port == 0;
	default:
		return false;
	}
}

EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	int err;

	if (shim_deciding() && (err = net_check(fd, sa, len, "connect"))) {
		errno = err;
		return -1;
	}
	return REAL(connect, int (*)(int, const struct sockaddr *, socklen_t))(fd, sa, len);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa,
		      socklen_t len)
{
	int err;

	if (shim_deciding() && sa && (err = net_check(fd, sa, len, "sendto"))) {
		errno = err;
		return -1;
	}
	return REAL(sendto, ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *,
					socklen_t))(fd, buf, n, flags, sa, len);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	int err;

	if (shim_deciding() && msg && msg->msg_name &&
	    (err = net_check(fd, msg->msg_name, msg->msg_namelen, "sendmsg"))) {
		errno = err;
		return -1;
	}
	return REAL(sendmsg, ssize_t (*)(int, const struct msghdr *, int))(fd, msg, flags);
}

/* Every message's destination, as the supervisor judges them: one that is
 * denied refuses the whole call. */
EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	int err;

	for (unsigned int i = 0; shim_deciding() && vec && i < vlen; i++) {
		const struct msghdr *msg = &vec[i].msg_hdr;

		if (msg->msg_name &&
		    (err = net_check(fd, msg->msg_name, msg->msg_namelen, "sendmmsg"))) {
			errno = err;
			return -1;
		}
	}
	return REAL(sendmmsg, int (*)(int, struct mmsghdr *, unsigned int, int))(fd, vec, vlen,
										 flags);
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	char upath[PATH_MAX] = "";
	bool deciding = shim_deciding(), fresh = false;
	uint64_t ino = 0;
	int err, family = 0, type = 0, r;

	if (deciding) {
		fresh = net_unbound(fd, &ino, &family, &type);
		if ((err = net_check_at(fd, sa, len, "bind", true, upath))) {
			errno = err;
			return -1;
		}
	}
	r = REAL(bind, int (*)(int, const struct sockaddr *, socklen_t))(fd, sa, len);
	if (r == 0 && fresh)
		ask_bound(ino, family, family == AF_UNIX ? upath : NULL);
	return r;
}

EXPORT int listen(int fd, int backlog)
{
	bool fresh = false;
	uint64_t ino = 0;
	int family = 0, type = 0, r;

	/* An inet socket bound to nothing is bound by listen(2) to every
	 * address of its family: judged as that bind. */
	if (shim_deciding() && (fresh = net_unbound(fd, &ino, &family, &type)) &&
	    (family == AF_INET || family == AF_INET6) && type == SOCK_STREAM) {
		struct ask_call c = { .syscall = "listen", .kind = RULES_KIND_NET, .family = family,
				      .bind = true, .sock_fd = fd };
		int err = ask_decide(&c);

		if (err) {
			errno = err;
			return -1;
		}
	}
	r = REAL(listen, int (*)(int, int))(fd, backlog);
	if (r == 0 && fresh && family != AF_UNIX)
		ask_bound(ino, family, NULL);
	return r;
}

EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res)
{
	int r = REAL(getaddrinfo, int (*)(const char *, const char *, const struct addrinfo *,
					  struct addrinfo **))(node, service, hints, res);

	if (r == 0 && node && res && *res && shim_active())
		ask_hosts_addrinfo(node, *res);
	return r;
}

EXPORT struct hostent *gethostbyname(const char *name)
{
	struct hostent *h = REAL(gethostbyname, struct hostent *(*)(const char *))(name);

	if (h && shim_active())
		ask_hosts_list(name, h->h_addrtype, h->h_addr_list);
	return h;
}

EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	struct hostent *h = REAL(gethostbyname2, struct hostent *(*)(const char *, int))(name, af);

	if (h && shim_active())
		ask_hosts_list(name, h->h_addrtype, h->h_addr_list);
	return h;
}

EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t buflen,
			   struct hostent **result, int *h_errnop)
{
	int r = REAL(gethostbyname_r, int (*)(const char *, struct hostent *, char *, size_t,
					      struct hostent **, int *))(name, ret, buf, buflen,
									 result, h_errnop);

	if (r == 0 && result && *result && shim_active())
		ask_hosts_list(name, (*result)->h_addrtype, (*result)->h_addr_list);
	return r;
}

EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret, char *buf,
			    size_t buflen, struct hostent **result, int *h_errnop)
{
	int r = REAL(gethostbyname2_r, int (*)(const char *, int, struct hostent *, char *, size_t,
					       struct hostent **, int *))(name, af, ret, buf, buflen,
									  result, h_errnop);

	if (r == 0 && result && *result && shim_active())
		ask_hosts_list(name, (*result)->h_addrtype, (*result)->h_addr_list);
	return r;
}
