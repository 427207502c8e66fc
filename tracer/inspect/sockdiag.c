/* Local sockets by address or inode, from sock_diag (tracer/inspect/sockdiag.h). */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tracer/inspect/sockdiag.h"

#define SOCKDIAG_BUF 32768
/* A dump is a walk of the namespace's UNIX sockets: bounded, so that a
 * namespace with a great many cannot hold the supervisor up. */
#define SOCKDIAG_DUMP_MAX 200000

/* TCP_LISTEN, TCP_CLOSE and TCP_ESTABLISHED of the kernel's socket
 * states (include/net/tcp_states.h), which UNIX sockets use too. */
#define SOCKDIAG_ESTABLISHED 1
#define SOCKDIAG_CLOSE 7
#define SOCKDIAG_LISTEN 10

static int sockdiag_fd = -1;

static int sockdiag_socket(void)
{
	if (sockdiag_fd < 0)
		sockdiag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return sockdiag_fd < 0 ? -errno : sockdiag_fd;
}

/* Sends REQ (LEN bytes) and reads one answer into BUF: its length, or
 * -errno.  A kernel error (NLMSG_ERROR) is returned as such. */
static ssize_t sockdiag_ask(const void *req, size_t len, void *buf, size_t size)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	int fd = sockdiag_socket();
	ssize_t n;

	if (fd < 0)
		return fd;
	do
		n = sendto(fd, req, len, 0, (struct sockaddr *)&nl, sizeof(nl));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	do
		n = recv(fd, buf, size, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* The error of an NLMSG_ERROR message H, or 1 when H is another one. */
static int sockdiag_error(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);

	if (h->nlmsg_type != NLMSG_ERROR)
		return 1;
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EPROTO;
	return e->error ? e->error : -ENOENT;
}

/* ---- inet ---- */

/* ADDR as the kernel routes a connect to it: 0.0.0.0 and :: are this
 * host's loopback; an IPv4-mapped address is IPv4. */
static int sockdiag_inet_dest(int family, const uint8_t addr[16], uint8_t out[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16] = { 0 };

	memset(out, 0, 16);
	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
		family = AF_INET;
		addr += 12;
	}
	if (family == AF_INET) {
		memcpy(out, addr, 4);
		if (memcmp(out, zero, 4) == 0) {
			out[0] = 127;
			out[3] = 1;
		}
		return AF_INET;
	}
	memcpy(out, addr, 16);
	if (memcmp(out, zero, 16) == 0)
		out[15] = 1;
	return AF_INET6;
}

int sockdiag_inet_receiver(int protocol, int family, const uint8_t addr[16], uint16_t port,
			   uint64_t *ino)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr h;
		char b[1024];
	} ans;
	static unsigned lo;
	uint8_t dst[16];
	const struct inet_diag_msg *m;
	ssize_t n;
	int r;

	if (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP)
		return -EPROTONOSUPPORT;
	if (!lo)
		lo = if_nametoindex("lo");
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)sockdiag_inet_dest(family, addr, dst);
	req.r.sdiag_protocol = (uint8_t)protocol;
	req.r.idiag_states = ~0u;
	/* One lookup as for a packet from this host to DST:PORT on the
	 * loopback device.  The two protocols name the sides the other way
	 * round: tcp_diag looks up (dst, dport) -> (src, sport), udp_diag
	 * (src, sport) -> (dst, dport).  The peer's port is 0, which no
	 * established connection has, so TCP finds the listener. */
	if (protocol == IPPROTO_TCP) {
		memcpy(req.r.id.idiag_src, dst, 16);
		memcpy(req.r.id.idiag_dst, dst, 16);
		req.r.id.idiag_sport = htons(port);
	} else {
		memcpy(req.r.id.idiag_dst, dst, 16);
		memcpy(req.r.id.idiag_src, dst, 16);
		req.r.id.idiag_dport = htons(port);
	}
	req.r.id.idiag_if = lo;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	n = sockdiag_ask(&req, sizeof(req), &ans, sizeof(ans));
	if (n < 0)
		return (int)n;
	if (!NLMSG_OK(&ans.h, (size_t)n))
		return -EPROTO;
	r = sockdiag_error(&ans.h);
	if (r <= 0)
		return r;
	if (ans.h.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    ans.h.nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EPROTO;
	m = NLMSG_DATA(&ans.h);
	*ino = m->idiag_inode;
	return 0;
}

/* ---- unix ---- */

static void sockdiag_unix_parse(const struct nlmsghdr *h, struct sockdiag_unix *out)
{
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	const struct rtattr *a = (const struct rtattr *)(m + 1);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));

	memset(out, 0, sizeof(*out));
	out->type = m->udiag_type;
	out->state = m->udiag_state;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t n = RTA_PAYLOAD(a);

		if (a->rta_type == UNIX_DIAG_NAME) {
			if (n > sizeof(out->name))
				n = sizeof(out->name);
			memcpy(out->name, RTA_DATA(a), n);
			out->name_len = n;
		} else if (a->rta_type == UNIX_DIAG_VFS && n >= sizeof(struct unix_diag_vfs)) {
			const struct unix_diag_vfs *v = RTA_DATA(a);

			/* The kernel's own dev_t: 12 bits of major, 20 of minor. */
			out->has_vfs = true;
			out->vfs_dev = makedev(v->udiag_vfs_dev >> 20, v->udiag_vfs_dev & 0xfffff);
			out->vfs_ino = v->udiag_vfs_ino;
		}
	}
}

static void sockdiag_unix_req(struct unix_diag_req *r)
{
	memset(r, 0, sizeof(*r));
	r->sdiag_family = AF_UNIX;
	r->udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_VFS;
	r->udiag_cookie[0] = r->udiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

int sockdiag_unix_of(uint64_t ino, struct sockdiag_unix *out)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req;
	union {
		struct nlmsghdr h;
		char b[1024];
	} ans;
	ssize_t n;
	int r;

	if (ino > UINT32_MAX)
		return -ENOENT; /* the interface names sockets by 32 bits */
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	sockdiag_unix_req(&req.r);
	req.r.udiag_states = ~0u;
	req.r.udiag_ino = (uint32_t)ino;
	n = sockdiag_ask(&req, sizeof(req), &ans, sizeof(ans));
	if (n < 0)
		return (int)n;
	if (!NLMSG_OK(&ans.h, (size_t)n))
		return -EPROTO;
	r = sockdiag_error(&ans.h);
	if (r <= 0)
		return r;
	if (ans.h.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    ans.h.nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -EPROTO;
	sockdiag_unix_parse(&ans.h, out);
	return 0;
}

int sockdiag_unix_bound(dev_t dev, uint64_t ino, const unsigned char *name, size_t n, int type,
			uint64_t *out)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} req;
	static char buf[SOCKDIAG_BUF] __attribute__((aligned(8)));
	unsigned seen = 0;
	int found = -ENOENT;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	sockdiag_unix_req(&req.r);
	/* A listener, or a datagram socket that takes what is sent to it. */
	req.r.udiag_states = (1u << SOCKDIAG_LISTEN) | (1u << SOCKDIAG_CLOSE);
	for (ssize_t len = sockdiag_ask(&req, sizeof(req), buf, sizeof(buf)); len > 0;) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		ssize_t next;

		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct sockdiag_unix u;
			bool hit;

			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return found == 0 ? 0 : sockdiag_error(h);
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				continue;
			if (++seen > SOCKDIAG_DUMP_MAX) {
				/* The rest of the dump would answer the next
				 * question: a fresh socket for that. */
				close(sockdiag_fd);
				sockdiag_fd = -1;
				return found;
			}
			sockdiag_unix_parse(h, &u);
			if (type && u.type != type)
				continue;
			if (name)
				hit = u.name_len == n + 1 && u.name[0] == '\0' &&
				      memcmp(u.name + 1, name, n) == 0;
			else
				hit = u.has_vfs && u.vfs_dev == dev && u.vfs_ino == (uint32_t)ino;
			if (hit && found != 0) {
				*out = ((const struct unix_diag_msg *)NLMSG_DATA(h))->udiag_ino;
				found = 0;
			}
		}
		/* The rest of the dump, read to its end so that the next
		 * question does not get its messages. */
		do
			next = recv(sockdiag_fd, buf, sizeof(buf), 0);
		while (next < 0 && errno == EINTR);
		len = next;
	}
	return found;
}
