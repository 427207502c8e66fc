/* Unit tests of tracer/inspect/sockdiag.c: the kernel names the socket
 * that a local address reaches, sockets this test makes itself. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tracer/inspect/sockdiag.h"

static uint64_t ino_of(int fd)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return st.st_ino;
}

/* A socket of TYPE bound to ADDR (FAMILY) port 0, listening when a
 * stream; its port in *PORT. */
static int bound_inet(int family, int type, const char *addr, uint16_t *port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		ck_assert_int_eq(inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr), 1);
	else
		ck_assert_int_eq(inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -1; /* no IPv6 here */
	}
	if (type == SOCK_STREAM)
		ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
					  ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static void addr_of(int family, const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	ck_assert_int_eq(inet_pton(family, text, out), 1);
}

START_TEST(tcp_listener_found)
{
	uint8_t a[16];
	uint16_t port;
	uint64_t ino = 0;
	int fd = bound_inet(AF_INET, SOCK_STREAM, "127.0.0.1", &port);

	addr_of(AF_INET, "127.0.0.1", a);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	/* 0.0.0.0 as a destination is loopback */
	addr_of(AF_INET, "0.0.0.0", a);
	ino = 0;
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	/* IPv4-mapped */
	addr_of(AF_INET6, "::ffff:127.0.0.1", a);
	ino = 0;
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET6, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	/* not UDP's */
	addr_of(AF_INET, "127.0.0.1", a);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_UDP, AF_INET, a, port, &ino), -ENOENT);
	close(fd);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), -ENOENT);
}
END_TEST

START_TEST(tcp_wildcard_and_dual_stack)
{
	uint8_t a[16];
	uint16_t port;
	uint64_t ino = 0;
	int fd = bound_inet(AF_INET, SOCK_STREAM, "0.0.0.0", &port);

	addr_of(AF_INET, "127.0.0.1", a);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	close(fd);
	fd = bound_inet(AF_INET6, SOCK_STREAM, "::", &port);
	if (fd < 0)
		return;
	ino = 0;
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	addr_of(AF_INET6, "::1", a);
	ino = 0;
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET6, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	close(fd);
}
END_TEST

START_TEST(a_connection_is_not_the_listener)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint8_t a[16];
	uint16_t port;
	uint64_t ino = 0;
	int srv = bound_inet(AF_INET, SOCK_STREAM, "127.0.0.1", &port);
	int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), acc;

	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(cli, (struct sockaddr *)&sa, sizeof(sa)), 0);
	acc = accept(srv, NULL, NULL);
	ck_assert_int_ge(acc, 0);
	addr_of(AF_INET, "127.0.0.1", a);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(srv));
	close(acc);
	close(cli);
	close(srv);
}
END_TEST

START_TEST(udp_receiver_found)
{
	uint8_t a[16];
	uint16_t port;
	uint64_t ino = 0;
	int fd = bound_inet(AF_INET, SOCK_DGRAM, "127.0.0.1", &port);

	addr_of(AF_INET, "127.0.0.1", a);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_UDP, AF_INET, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_TCP, AF_INET, a, port, &ino), -ENOENT);
	close(fd);
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_UDP, AF_INET, a, port, &ino), -ENOENT);
	fd = bound_inet(AF_INET6, SOCK_DGRAM, "::1", &port);
	if (fd < 0)
		return;
	addr_of(AF_INET6, "::1", a);
	ino = 0;
	ck_assert_int_eq(sockdiag_inet_receiver(IPPROTO_UDP, AF_INET6, a, port, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));
	close(fd);
}
END_TEST

START_TEST(unix_path_and_abstract)
{
	char dir[] = "check-sockdiag.XXXXXX"; /* in the build dir, relative: short */
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct sockdiag_unix u;
	struct stat st;
	uint64_t ino = 0;
	int fd, ab;
	char name[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/s", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&un, sizeof(un)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(stat(un.sun_path, &st), 0);
	ck_assert_int_eq(sockdiag_unix_of(ino_of(fd), &u), 0);
	ck_assert_int_eq(u.type, SOCK_STREAM);
	ck_assert(u.has_vfs);
	ck_assert_uint_eq(u.vfs_ino, (uint32_t)st.st_ino);
	ck_assert_uint_eq(u.vfs_dev, st.st_dev);
	ck_assert_int_eq(sockdiag_unix_bound(st.st_dev, st.st_ino, NULL, 0, 0, &ino), 0);
	ck_assert_uint_eq(ino, ino_of(fd));

	snprintf(name, sizeof(name), "check-sockdiag-%d", (int)getpid());
	memset(un.sun_path, 0, sizeof(un.sun_path));
	memcpy(un.sun_path + 1, name, strlen(name));
	ab = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(ab, (struct sockaddr *)&un,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))), 0);
	ck_assert_int_eq(sockdiag_unix_of(ino_of(ab), &u), 0);
	ck_assert_int_eq(u.type, SOCK_DGRAM);
	ck_assert_uint_eq(u.name_len, strlen(name) + 1);
	ck_assert_int_eq(memcmp(u.name + 1, name, strlen(name)), 0);
	ino = 0;
	ck_assert_int_eq(sockdiag_unix_bound(0, 0, (const unsigned char *)name, strlen(name), 0, &ino),
			 0);
	ck_assert_uint_eq(ino, ino_of(ab));
	ck_assert_int_eq(sockdiag_unix_bound(0, 0, (const unsigned char *)name, strlen(name),
					     SOCK_STREAM, &ino), -ENOENT);
	close(ab);
	ck_assert_int_eq(sockdiag_unix_bound(0, 0, (const unsigned char *)name, strlen(name), 0, &ino),
			 -ENOENT);
	ino = ino_of(fd);
	close(fd);
	ck_assert_int_eq(sockdiag_unix_of(ino, &u), -ENOENT);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/s", dir);
	unlink(un.sun_path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sockdiag");
	TCase *tc = tcase_create("lookups");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, tcp_listener_found);
	tcase_add_test(tc, tcp_wildcard_and_dual_stack);
	tcase_add_test(tc, a_connection_is_not_the_listener);
	tcase_add_test(tc, udp_receiver_found);
	tcase_add_test(tc, unix_path_and_abstract);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
