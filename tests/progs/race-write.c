/* race-write GOOD BAD N [process|file]: the time-of-check/time-of-use race
 * of doc/THREAT-MODEL.md.
 *
 * A second thread flips the bytes in which GOOD and BAD differ (same
 * length; one differing byte makes each flip atomic) while the main
 * thread opens the buffer for writing N times.  With "process" or "file"
 * a second process flips them (race-mem.h).  The supervisor may check
 * GOOD and the kernel then open BAD.  Prints "opens=N ok=K bad=W eacces=E
 * other=TEXT" (the last error but EACCES, "none"):
 * bad counts the descriptors that really are BAD (by device and inode),
 * so the test can tell a won race from a refused one.  Exit 0, or 2 on
 * usage errors.  Built without sanitizers: it runs under the filter. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	int other_errno = 0; /* the last error other than EACCES, for the test's diagnostics */
	pthread_t th;
	pid_t other = -1;

	if ((argc != 4 && argc != 5) || strlen(argv[1]) != strlen(argv[2]) ||
	    strlen(argv[1]) >= RACE_MEM_SIZE) {
		fprintf(stderr, "usage: race-write GOOD BAD N [process|file] "
				"(GOOD and BAD of one length)\n");
		return 2;
	}
	race_good = argv[1];
	race_bad = argv[2];
	n = strtoul(argv[3], NULL, 10);
	memcpy(race_buf, race_good, strlen(race_good) + 1);
	if (argc == 5) {
		race_buf = race_mem_map(argv[4], race_good, strlen(race_good) + 1);
		if (!race_buf || (other = race_mem_fork(race_flip_process)) < 0)
			return 2;
	} else if (pthread_create(&th, NULL, race_flipper, NULL) != 0) {
		return 2;
	} else {
		race_mem_wait_begun();
	}
	for (unsigned long i = 0; i < n; i++) {
		int fd = open(race_buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		struct stat a, b;

		opens++;
		if (fd < 0) {
			if (errno == EACCES)
				eacces++;
			else
				other_errno = errno;
			continue;
		}
		ok++;
		if (fstat(fd, &a) == 0 && stat(race_bad, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			bad++;
		close(fd);
	}
	if (other > 0) {
		race_mem_stop(other);
	} else {
		atomic_store(&race_stop, 1);
		pthread_join(th, NULL);
	}
	printf("opens=%lu ok=%lu bad=%lu eacces=%lu other=%s\n", opens, ok, bad, eacces,
	       other_errno ? strerror(other_errno) : "none");
	return 0;
}
