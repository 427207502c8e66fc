/* race-read [-w] GOOD BAD MARKER N [process|file]: the race of a read.
 *
 * A second thread flips the bytes in which GOOD and BAD differ (same
 * length; one differing byte makes each flip atomic) while the main
 * thread opens the buffer read-only (with -w: O_RDWR, as fopen's "r+",
 * an open for writing that reads too) N times and reads what it opened.
 * With "process" or "file" a second process flips them (race-mem.h).
 * The supervisor may check GOOD and the kernel then open BAD.  Prints
 * "opens=N ok=K bad=W eacces=E": bad counts the reads that got MARKER,
 * which only BAD holds, so the test can tell a won race from a refused
 * one.  Exit 0, or 2 on usage errors.  Built without sanitizers: it runs
 * under the filter. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "race-mem.h"

static char race_own[RACE_MEM_SIZE];
static char *race_buf = race_own;
static const char *race_good, *race_bad;
static atomic_int race_stop;

static void *race_flipper(void *arg)
{
	(void)arg;
	race_mem_flip(race_buf, race_good, race_bad, &race_stop);
	return NULL;
}

static void race_flip_process(void)
{
	race_mem_flip(race_buf, race_good, race_bad, NULL);
}

int main(int argc, char **argv)
{
	unsigned long opens = 0, ok = 0, bad = 0, eacces = 0, n;
	int mode = O_RDONLY;
	const char *marker;
	char got[4096];
	pthread_t th;
	pid_t other = -1;

	if (argc > 1 && strcmp(argv[1], "-w") == 0) {
		mode = O_RDWR;
		argv++;
		argc--;
	}
	if ((argc != 5 && argc != 6) || strlen(argv[1]) != strlen(argv[2]) ||
	    strlen(argv[1]) >= RACE_MEM_SIZE || !argv[3][0]) {
		fprintf(stderr, "usage: race-read [-w] GOOD BAD MARKER N [process|file] "
				"(GOOD and BAD of one length)\n");
		return 2;
	}
	race_good = argv[1];
	race_bad = argv[2];
	marker = argv[3];
	n = strtoul(argv[4], NULL, 10);
	memcpy(race_buf, race_good, strlen(race_good) + 1);
	if (argc == 6) {
		race_buf = race_mem_map(argv[5], race_good, strlen(race_good) + 1);
		if (!race_buf || (other = race_mem_fork(race_flip_process)) < 0)
			return 2;
	} else if (pthread_create(&th, NULL, race_flipper, NULL) != 0) {
		return 2;
	} else {
		race_mem_wait_begun();
	}
	for (unsigned long i = 0; i < n; i++) {
		int fd = open(race_buf, mode | O_CLOEXEC);
		ssize_t len;

		opens++;
		if (fd < 0) {
			eacces += errno == EACCES;
			continue;
		}
		ok++;
		len = read(fd, got, sizeof(got));
		if (len > 0 && memmem(got, (size_t)len, marker, strlen(marker)))
			bad++;
		close(fd);
	}
	if (other > 0) {
		race_mem_stop(other);
	} else {
		atomic_store(&race_stop, 1);
		pthread_join(th, NULL);
	}
	printf("opens=%lu ok=%lu bad=%lu eacces=%lu\n", opens, ok, bad, eacces);
	return 0;
}
