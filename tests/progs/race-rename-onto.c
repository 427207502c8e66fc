/* race-rename-onto DIR SRC NAME N: a file renamed onto the name being
 * created.  A forked child renames DIR/SRC to DIR/NAME and back, over and
 * over, while the parent (single-threaded, sharing no memory) opens
 * DIR/NAME with O_CREAT|O_WRONLY|O_APPEND N times and writes "RACED" into
 * what it got when that is SRC's file.  Prints "tries=N wins=W": a win
 * is an open that a missing name let through and that reached SRC's
 * file (a hard link of a denied one).  Exit 0, or 2 on usage errors.
 * Built without sanitizers: it runs under the filter. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char src[PATH_MAX], name[PATH_MAX];
	unsigned long n, wins = 0;
	struct stat s0;
	pid_t child;

	if (argc != 5 || (size_t)snprintf(src, sizeof(src), "%s/%s", argv[1], argv[2]) >= sizeof(src) ||
	    (size_t)snprintf(name, sizeof(name), "%s/%s", argv[1], argv[3]) >= sizeof(name)) {
		fprintf(stderr, "usage: race-rename-onto DIR SRC NAME N\n");
		return 2;
	}
	n = strtoul(argv[4], NULL, 10);
	if (stat(src, &s0) < 0)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		for (;;) {
			(void)rename(src, name);
			(void)rename(name, src);
		}
	for (unsigned long i = 0; i < n; i++) {
		int fd = open(name, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
		struct stat st;

		if (fd < 0)
			continue;
		/* A file made here stays: the child's next rename replaces
		 * it (an unlink here could take SRC's name instead). */
		if (fstat(fd, &st) == 0 && st.st_ino == s0.st_ino && st.st_dev == s0.st_dev) {
			wins++;
			(void)!write(fd, "RACED\n", 6);
		}
		close(fd);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	(void)rename(name, src);
	printf("tries=%lu wins=%lu\n", n, wins);
	return 0;
}
