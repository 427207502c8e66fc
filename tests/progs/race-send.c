/* race-send MODE GOOD BAD PORT N: the datagram race.  A second thread
 * flips the IPv4 address of one sockaddr between GOOD and BAD while the
 * main thread sends N one-byte UDP datagrams to it, by sendto(2), by
 * sendmsg(2) with the sockaddr as msg_name, or by sendmmsg(2) of one
 * such message (MODE sendto, sendmsg, sendmmsg); or (MODE sendmsg-name)
 * the socket is connected to GOOD and the thread flips msg_name itself
 * between none and a sockaddr of BAD.  So the supervisor may judge GOOD
 * and the kernel send to BAD.  Prints
 * "sends=N sent=S refused=R": what the calls returned.  Who received
 * what is the receivers' to count.  Exit 0, or 2 on usage errors.
 * Built without sanitizers: it runs under the filter. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in race_sa, race_bad_sa;
static struct in_addr race_good, race_bad;
static struct mmsghdr race_mm;

static void *race_flipper(void *arg)
{
	volatile uint32_t *a = (volatile uint32_t *)&race_sa.sin_addr.s_addr;

	(void)arg;
	for (;;) {
		*a = race_bad.s_addr;
		*a = race_good.s_addr;
	}
	return NULL;
}

static void *race_name_flipper(void *arg)
{
	void *volatile *name = (void *volatile *)&race_mm.msg_hdr.msg_name;

	(void)arg;
	for (;;) {
		*name = &race_bad_sa;
		*name = NULL;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, sent = 0, refused = 0;
	const char *mode = argc > 1 ? argv[1] : "";
	bool by_name = strcmp(mode, "sendmsg-name") == 0;
	char b = 'x';
	struct iovec iov = { &b, 1 };
	pthread_t th;
	int fd;

	if (argc != 6 ||
	    (strcmp(mode, "sendto") && strcmp(mode, "sendmsg") && strcmp(mode, "sendmmsg") &&
	     !by_name) ||
	    inet_pton(AF_INET, argv[2], &race_good) != 1 ||
	    inet_pton(AF_INET, argv[3], &race_bad) != 1) {
		fprintf(stderr, "usage: race-send sendto|sendmsg|sendmmsg|sendmsg-name GOOD BAD PORT N\n");
		return 2;
	}
	race_sa.sin_family = AF_INET;
	race_sa.sin_port = htons((uint16_t)atoi(argv[4]));
	race_sa.sin_addr = race_good;
	race_bad_sa = race_sa;
	race_bad_sa.sin_addr = race_bad;
	race_mm.msg_hdr.msg_name = by_name ? NULL : &race_sa;
	race_mm.msg_hdr.msg_namelen = sizeof(race_sa);
	race_mm.msg_hdr.msg_iov = &iov;
	race_mm.msg_hdr.msg_iovlen = 1;
	n = strtoul(argv[5], NULL, 10);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || (by_name && connect(fd, (struct sockaddr *)&race_sa, sizeof(race_sa)) < 0) ||
	    pthread_create(&th, NULL, by_name ? race_name_flipper : race_flipper, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		ssize_t r;

		if (!strcmp(mode, "sendto"))
			r = sendto(fd, &b, 1, 0, (struct sockaddr *)&race_sa, sizeof(race_sa));
		else if (!strcmp(mode, "sendmmsg"))
			r = sendmmsg(fd, &race_mm, 1, 0) == 1 ? 1 : -1;
		else
			r = sendmsg(fd, &race_mm.msg_hdr, 0);
		if (r == 1)
			sent++;
		else
			refused++;
	}
	printf("sends=%lu sent=%lu refused=%lu\n", n, sent, refused);
	return 0;
}
