/* race-exec GOOD BAD N [sh|script|env NAME]: the exec race.  N times a child
 * process starts a thread that flips the bytes in which GOOD and BAD
 * differ (same length) and execs the buffer, so that the supervisor may
 * judge GOOD and the kernel run BAD; with "sh" the buffer is the command
 * of "/bin/sh -c", the program's argument rather than its path; with
 * "script" GOOD is a "#!" script run with the arguments "a", and the
 * thread puts "-x" before that "a" (BAD unused); with "env NAME" GOOD and
 * BAD are directories, the buffer is the exec's one environment entry
 * "PATH=GOOD" or "PATH=BAD", and bash runs NAME, which it searches PATH
 * for (GOOD/NAME and BAD/NAME exit 0 and 42).  Prints "execs=N good=G bad=B other=O": good and bad
 * count the children whose exit status says which program ran, other the
 * refused, killed and torn ones.  GOOD and BAD are copies of this program:
 * run without arguments it exits 42 when a file "bad" lies next to it,
 * else 0.  Exit 0, or 2 on usage errors.  Built without sanitizers: it
 * runs under the filter. */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "race-mem.h"

static char race_buf[4096];
static const char *race_good, *race_bad;

static void *race_flipper(void *arg)
{
	(void)arg;
	race_mem_flip(race_buf, race_good, race_bad, NULL);
	return NULL;
}

/* "script": argv, whose tail the thread turns from "a" into "-x" "a". */
static char *race_script[4] = { NULL, "a", NULL, NULL };

static void *race_inserter(void *arg)
{
	char *volatile *slot = race_script;

	(void)arg;
	for (;;) {
		slot[2] = "a";
		slot[1] = "-x";
		slot[1] = "a";
		slot[2] = NULL;
	}
	return NULL;
}

/* Run as GOOD or BAD: which one am I? */
static int race_as_program(void)
{
	char self[4096], *slash;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 8);

	if (len <= 0)
		return 3;
	self[len] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return 3;
	strcpy(slash + 1, "bad");
	return access(self, F_OK) == 0 ? 42 : 0;
}

int main(int argc, char **argv)
{
	unsigned long n, good = 0, bad = 0, other = 0;

	if (argc == 1)
		return race_as_program();
	static char env_good[sizeof(race_buf)], env_bad[sizeof(race_buf)];
	bool by_env = argc == 6 && strcmp(argv[4], "env") == 0;

	if ((argc != 4 && !by_env &&
	     (argc != 5 || (strcmp(argv[4], "sh") != 0 && strcmp(argv[4], "script") != 0))) ||
	    strlen(argv[1]) != strlen(argv[2]) || strlen(argv[1]) >= sizeof(race_buf) - 8) {
		fprintf(stderr, "usage: race-exec GOOD BAD N [sh|script|env NAME] "
			"(GOOD and BAD of one length)\n");
		return 2;
	}
	race_good = argv[1];
	race_bad = argv[2];
	if (by_env) {
		snprintf(env_good, sizeof(env_good), "PATH=%s", argv[1]);
		snprintf(env_bad, sizeof(env_bad), "PATH=%s", argv[2]);
		race_good = env_good;
		race_bad = env_bad;
	}
	n = strtoul(argv[3], NULL, 10);
	for (unsigned long i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			pthread_t th;
			char *args[] = { race_buf, NULL }, *sh[] = { "/bin/sh", "-c", race_buf, NULL };
			bool by_sh = argc == 5 && argv[4][1] == 'h', by_script = argc == 5 && !by_sh;
			char *bash[] = { "bash", argv[argc - 1], NULL }, *env[] = { race_buf, NULL };

			if (by_script) {
				race_script[0] = argv[1];
				if (pthread_create(&th, NULL, race_inserter, NULL) != 0)
					_exit(3);
				for (int t = 0; t < 10000; t++)
					execv(race_script[0], race_script);
				_exit(4);
			}

			memcpy(race_buf, race_good, strlen(race_good) + 1);
			if (pthread_create(&th, NULL, race_flipper, NULL) != 0)
				_exit(3);
			for (int t = 0; t < 10000; t++)
				by_env ? execve("/bin/bash", bash, env) :
				by_sh ? execv(sh[0], sh) : execv(race_buf, args);
			_exit(4);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0) {
			other++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			good++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
			bad++;
		else
			other++;
	}
	printf("execs=%lu good=%lu bad=%lu other=%lu\n", n, good, bad, other);
	return 0;
}
