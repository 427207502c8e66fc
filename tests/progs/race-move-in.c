/* race-move-in LOG N: a directory holding a .env moved into the project
 * while a second process keeps exchanging it with a plain file inside
 * node_modules (where the .env rule does not apply), so that what stood
 * at the old name just before the rename is not what the rename moves.
 *
 * In the current directory: node_modules/D/{.env,.fnv}, node_modules/F
 * and .fnv are made; racing reads of the decoy come first (a second
 * thread runs: the supervisor looks for a .env then, and finds none);
 * then a child renames node_modules/D to X until a directory lands there.
 * Then N opens of a buffer the second thread flips between X/.fnv and
 * X/.env, each read checked against LOG: a read that got the .env's bytes
 * while no read.project-env record was added during its open is
 * unrecorded.  Prints "bad=B unrecorded=U".  Exit 0; 2 on usage errors,
 * 3 when no directory landed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char race_path[] = "X/.fnv";
static atomic_int race_go, race_stop;

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		exit(2);
	close(fd);
}

/* The second thread: idle until told, then flips one byte (f <-> e). */
static void *flipper(void *arg)
{
	volatile char *c = (volatile char *)race_path + 3;

	while (!atomic_load(&race_stop)) {
		if (!atomic_load(&race_go)) {
			usleep(100);
			continue;
		}
		*c = 'e';
		for (volatile int i = 0; i < 50; i++)
			;
		*c = 'f';
		for (volatile int i = 0; i < 50; i++)
			;
	}
	return arg;
}

static void decoy_reads(int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open(".fnv", O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	static char got[4096], logbuf[1 << 16];
	unsigned long n, bad = 0, unrecorded = 0;
	pthread_t th;
	struct stat st;
	int landed = 0, logfd;
	pid_t b;

	if (argc != 3)
		return 2;
	n = strtoul(argv[2], NULL, 10);
	if (mkdir("node_modules", 0755) < 0 || mkdir("node_modules/D", 0755) < 0)
		return 2;
	put("node_modules/D/.env", "SECRET-ENV-BYTES\n");
	put("node_modules/D/.fnv", "decoy\n");
	put("node_modules/F", "plain\n");
	put(".fnv", "decoy\n");
	if (pthread_create(&th, NULL, flipper, NULL) != 0)
		return 2;
	decoy_reads(2000);
	b = fork();
	if (b == 0)
		for (;;)
			syscall(SYS_renameat2, AT_FDCWD, "node_modules/D", AT_FDCWD, "node_modules/F",
				RENAME_EXCHANGE);
	if (b < 0)
		return 2;
	/* Decoy reads while the exchanges go on, as a busy session has them. */
	usleep(10000);
	decoy_reads(2000);
	for (int tries = 0; tries < 20000 && !landed; tries++) {
		int status;
		pid_t a = fork();

		if (a == 0)
			_exit(rename("node_modules/D", "X") == 0 ? 0 : 1);
		if (a < 0 || waitpid(a, &status, 0) != a || !WIFEXITED(status) || WEXITSTATUS(status))
			continue;
		if (lstat("X", &st) == 0 && S_ISDIR(st.st_mode))
			landed = 1;
		else if (rename("X", "node_modules/D") == 0)
			decoy_reads(1);
	}
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	if (!landed)
		return 3;
	if ((logfd = open(argv[1], O_RDONLY | O_CLOEXEC)) < 0)
		return 2;
	atomic_store(&race_go, 1);
	for (unsigned long i = 0; i < n; i++) {
		off_t before = lseek(logfd, 0, SEEK_END);
		int fd = open(race_path, O_RDONLY | O_CLOEXEC);
		ssize_t len, k;

		if (fd < 0)
			continue;
		len = read(fd, got, sizeof(got));
		close(fd);
		if (len <= 0 || !memmem(got, (size_t)len, "SECRET-ENV", 10))
			continue;
		bad++;
		k = pread(logfd, logbuf, sizeof(logbuf), before);
		if (k <= 0 || !memmem(logbuf, (size_t)k, "read.project-env", 16))
			unrecorded++;
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	printf("bad=%lu unrecorded=%lu\n", bad, unrecorded);
	return 0;
}
