/* spawn-helper OP ARGS...: start a program the ways the preload shim must
 * follow, and exit with its status (or the errno of a failure, as
 * tests/progs/try-syscall does).
 *
 *   posix-spawn PATH ARG...    posix_spawn, then wait
 *   posix-spawnp FILE ARG...   posix_spawnp (PATH search), then wait
 *   vfork-exec PATH ARG...     vfork + execv in the child, then wait
 *   empty-env-exec PATH ARG... execve with an empty environment
 *   clearenv-exec FILE ARG...  clearenv() + execvp
 *   execl PATH ARG1            execl(PATH, PATH, ARG1, NULL)
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int helper_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int helper_fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(err));
	return err;
}

int main(int argc, char **argv)
{
	const char *op;
	pid_t pid;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: spawn-helper OP PROGRAM [ARG...]\n");
		return 2;
	}
	op = argv[1];
	if (strcmp(op, "posix-spawn") == 0 || strcmp(op, "posix-spawnp") == 0) {
		r = op[11] == 'p' ? posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) :
				    posix_spawn(&pid, argv[2], NULL, NULL, argv + 2, environ);
		return r ? helper_fail(op, r) : helper_wait(pid);
	}
	if (strcmp(op, "vfork-exec") == 0) {
		pid = vfork();
		if (pid == 0) {
			execv(argv[2], argv + 2);
			_exit(errno);
		}
		return pid < 0 ? helper_fail(op, errno) : helper_wait(pid);
	}
	if (strcmp(op, "empty-env-exec") == 0) {
		char *const empty[] = { NULL };

		execve(argv[2], argv + 2, empty);
		return helper_fail(op, errno);
	}
	if (strcmp(op, "clearenv-exec") == 0) {
		clearenv();
		setenv("PATH", "/usr/bin:/bin", 1);
		execvp(argv[2], argv + 2);
		return helper_fail(op, errno);
	}
	if (strcmp(op, "execl") == 0) {
		execl(argv[2], argv[2], argc > 3 ? argv[3] : (char *)NULL, (char *)NULL);
		return helper_fail(op, errno);
	}
	fprintf(stderr, "spawn-helper: unknown op %s\n", op);
	return 2;
}
