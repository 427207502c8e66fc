/* race-fdswap TARGET N: the race of a /proc fd link reopened.  A second
 * thread keeps putting, on descriptor 10, now a pipe and now TARGET
 * opened read-only, while the main thread opens /proc/self/fd/10 for
 * writing N times: the supervisor may judge the pipe (nothing to judge)
 * and reopen TARGET.  Prints "tries=N pipes=P bad=B eacces=E": bad
 * counts the descriptors opened for writing that are TARGET.  Exit 0, or
 * 2 on usage errors.  Built without sanitizers: it runs under the filter. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int race_pipe, race_target;
static atomic_int race_stop;

static void *race_swapper(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
		dup2(race_pipe, 10);
		dup2(race_target, 10);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, pipes = 0, bad = 0, eacces = 0;
	struct stat target, st;
	int p[2];
	pthread_t th;

	if (argc != 3)
		return fprintf(stderr, "usage: race-fdswap TARGET N\n"), 2;
	n = strtoul(argv[2], NULL, 10);
	/* The pipe's read end at 20 alone, the file at 30: a supervisor that
	 * looks for the pipe among the descriptors finds 10 first. */
	race_target = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (race_target < 0 || fstat(race_target, &target) < 0 || pipe(p) < 0 ||
	    dup2(p[0], 20) < 0 || dup2(race_target, 30) < 0)
		return 2;
	close(p[0]);
	close(p[1]);
	close(race_target);
	race_pipe = 20;
	race_target = 30;
	if (pthread_create(&th, NULL, race_swapper, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		int fd = open("/proc/self/fd/10", O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd < 0) {
			eacces += errno == EACCES;
			continue;
		}
		if (fstat(fd, &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino)
			bad++;
		else
			pipes++;
		close(fd);
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	printf("tries=%lu pipes=%lu bad=%lu eacces=%lu\n", n, pipes, bad, eacces);
	return 0;
}
