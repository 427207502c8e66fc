/* race-openat2 BAD N [resolve]: the race of an openat2(2)'s flags.  A
 * second thread flips open_how.flags between O_PATH (which opens nothing
 * for reading or writing) and O_WRONLY|O_CREAT while the main thread
 * calls openat2 of BAD, a name the policy refuses writes to, N times;
 * with "resolve", open_how.resolve is RESOLVE_NO_MAGICLINKS.  Prints
 * "tries=N ok=K eacces=E made=M": made is 1 when BAD exists at the end.
 * Exit 0, or 2 on usage errors.  Built without sanitizers: it runs under
 * the filter. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct open_how race_how;
static atomic_int race_stop;

static void *race_flipper(void *arg)
{
	volatile unsigned long long *flags = &race_how.flags;

	(void)arg;
	while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
		*flags = O_WRONLY | O_CREAT;
		*flags = O_PATH;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, ok = 0, eacces = 0;
	pthread_t th;
	struct stat st;

	if (argc != 3 && (argc != 4 || strcmp(argv[3], "resolve") != 0)) {
		fprintf(stderr, "usage: race-openat2 BAD N [resolve]\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	race_how.flags = O_PATH;
	race_how.mode = 0644;
	race_how.resolve = argc == 4 ? RESOLVE_NO_MAGICLINKS : 0;
	if (pthread_create(&th, NULL, race_flipper, NULL) != 0)
		return 2;
	for (unsigned long i = 0; i < n; i++) {
		long fd = syscall(SYS_openat2, AT_FDCWD, argv[1], &race_how, sizeof(race_how));

		if (fd < 0) {
			eacces += errno == EACCES;
			continue;
		}
		ok++;
		close((int)fd);
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	printf("tries=%lu ok=%lu eacces=%lu made=%d\n", n, ok, eacces, stat(argv[1], &st) == 0);
	return 0;
}
