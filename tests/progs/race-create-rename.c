/* race-create-rename DIR N: a creation in a directory the same process
 * renames at once.  N times: DIR is made anew, a second thread opens
 * DIR/pre-commit with O_CREAT (so the supervisor makes it: the caller
 * can race), and the main thread renames DIR to .git/hooks meanwhile.
 * Prints "tries=N wins=W": a win is a descriptor whose file is
 * .git/hooks/pre-commit, a hook planted past the rule that refuses
 * writes there (the rename of an empty DIR is allowed).  Run in a
 * project whose .git has no hooks directory.  Exit 0, or 2 on usage
 * errors.  Built without sanitizers: it runs under the filter. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_int go;
static char hook[PATH_MAX];
static int created;

static void *creator(void *arg)
{
	(void)arg;
	while (!atomic_load(&go))
		;
	created = open(hook, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0755);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, wins = 0;
	const char *dir;

	if (argc != 3 || strlen(argv[1]) + sizeof("/pre-commit") > sizeof(hook)) {
		fprintf(stderr, "usage: race-create-rename DIR N\n");
		return 2;
	}
	dir = argv[1];
	n = strtoul(argv[2], NULL, 10);
	snprintf(hook, sizeof(hook), "%s/pre-commit", dir);
	for (unsigned long i = 0; i < n; i++) {
		struct stat a, b;
		pthread_t th;

		unlink(hook);
		rmdir(".git/hooks");
		rmdir(dir);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return 2;
		atomic_store(&go, 0);
		if (pthread_create(&th, NULL, creator, NULL) != 0)
			return 2;
		atomic_store(&go, 1);
		(void)rename(dir, ".git/hooks");
		pthread_join(th, NULL);
		if (created < 0)
			continue;
		if (fstat(created, &a) == 0 && stat(".git/hooks/pre-commit", &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			wins++;
		close(created);
	}
	unlink(hook);
	rmdir(dir);
	printf("tries=%lu wins=%lu\n", n, wins);
	return 0;
}
