/* race-connect GOOD BAD PORT N [family|process|file]: the connect race.
 * A second thread flips the IPv4 address of one sockaddr between GOOD
 * and BAD while the main thread connects a new TCP socket to it N times,
 * so that the supervisor may judge GOOD and the kernel connect to BAD.
 * With "family" the address stays BAD and the thread flips its family
 * between AF_UNSPEC (no destination: a connect that dissolves) and
 * AF_INET.  With "process" or "file" a second process flips the address
 * (race-mem.h).  Prints "connects=N
 * good=G bad=B refused=R": good and bad count the connections made, by
 * the peer address the kernel reports.  Exit 0, or 2 on usage errors.
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

#include "race-mem.h"

static struct sockaddr_in race_own;
static struct sockaddr_in *race_sap = &race_own;
static struct in_addr race_good, race_bad;

/* The second process's flips, by race-mem.h's way. */
static void race_process_flipper(void)
{
	for (;;) {
		race_mem_put(&race_sap->sin_addr, &race_bad, sizeof(race_bad));
		race_mem_put(&race_sap->sin_addr, &race_good, sizeof(race_good));
	}
}

static void *race_family_flipper(void *arg)
{
	volatile sa_family_t *f = &race_sap->sin_family;

	(void)arg;
	for (;;) {
		*f = AF_INET;
		*f = AF_UNSPEC;
	}
	return NULL;
}

static void *race_flipper(void *arg)
{
	volatile uint32_t *a = (volatile uint32_t *)&race_sap->sin_addr.s_addr;

	(void)arg;
	for (;;) {
		*a = race_bad.s_addr;
		*a = race_good.s_addr;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, good = 0, bad = 0, refused = 0;
	pthread_t th;

	bool family = argc == 6 && strcmp(argv[5], "family") == 0;
	bool other = argc == 6 && !family;

	if ((argc != 5 && argc != 6) || inet_pton(AF_INET, argv[1], &race_good) != 1 ||
	    inet_pton(AF_INET, argv[2], &race_bad) != 1) {
		fprintf(stderr, "usage: race-connect GOOD BAD PORT N [family|process|file]\n");
		return 2;
	}
	race_own.sin_family = AF_INET;
	race_own.sin_port = htons((uint16_t)atoi(argv[3]));
	race_own.sin_addr = family ? race_bad : race_good;
	n = strtoul(argv[4], NULL, 10);
	if (other) {
		race_sap = race_mem_map(argv[5], &race_own, sizeof(race_own));
		if (!race_sap || race_mem_fork(race_process_flipper) < 0)
			return 2;
	} else if (pthread_create(&th, NULL, family ? race_family_flipper : race_flipper, NULL) != 0) {
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);

		if (fd < 0)
			return 2;
		if (connect(fd, (struct sockaddr *)race_sap, sizeof(*race_sap)) == 0 &&
		    getpeername(fd, (struct sockaddr *)&peer, &len) == 0) {
			if (peer.sin_addr.s_addr == race_bad.s_addr)
				bad++;
			else
				good++;
		} else {
			refused++;
		}
		close(fd);
	}
	printf("connects=%lu good=%lu bad=%lu refused=%lu\n", n, good, bad, refused);
	return 0;
}
