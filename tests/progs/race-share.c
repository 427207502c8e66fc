/* race-share MODE TREE SAFE NAME TRIES: the race of a second process
 * that is no thread of the caller but shares something with it.  The
 * caller, single-threaded, opens NAME for appending TRIES times; the
 * other process makes what the open names lead now to SAFE/NAME, now to
 * TREE/NAME:
 *   fs          it shares the working directory (clone(CLONE_FS)) and
 *               moves it (fchdir); the open is relative;
 *   files       it shares the descriptor table (clone(CLONE_FILES)) and
 *               dup2()s SAFE or TREE onto 100; the open is at 100;
 *   vm          it shares the memory (clone(CLONE_VM)) and rewrites the
 *               path the open reads, in the caller's private memory;
 *   vm-spawned  the same, after the caller has run /bin/true by vfork and
 *               exec (that child's sharing ends; the flipper's does not);
 *   vm-thread   the same, the flipper started by a second thread that
 *               has ended before the opens (the caller is one thread);
 *   fs-exec     as fs, the opens made by a new program the caller execs
 *               (itself, as fs-execd): an exec does not end what
 *               CLONE_FS shares.
 * Prints "tries=N ok=K inside=W": W opens that reached TREE/NAME (by
 * inode).  Exit 0, 2 on usage errors.  Built without sanitizers: it runs
 * under the filter. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *race_mode;
static int race_tree, race_safe;
static char race_stack[1 << 16];
/* What the open reads, rewritten by the vm flipper: private memory. */
static char race_path[4096], race_safe_path[4096], race_tree_path[4096];
static pid_t race_pid;

static bool race_vm(void)
{
	return !strncmp(race_mode, "vm", 2);
}

static int race_flipper(void *arg)
{
	size_t ns = strlen(race_safe_path) + 1, nt = strlen(race_tree_path) + 1;

	(void)arg;
	for (;;) {
		if (race_vm()) {
			memcpy(race_path, race_tree_path, nt);
			memcpy(race_path, race_safe_path, ns);
		} else if (race_mode[1] == 's') { /* "fs" */
			if (fchdir(race_tree) < 0 || fchdir(race_safe) < 0)
				_exit(3);
		} else if (dup2(race_tree, 100) < 0 || dup2(race_safe, 100) < 0) {
			_exit(3);
		}
	}
	return 0;
}

static void *race_start(void *arg)
{
	int flags = race_vm() ? CLONE_VM : race_mode[1] == 's' ? CLONE_FS : CLONE_FILES;

	(void)arg;
	race_pid = clone(race_flipper, race_stack + sizeof(race_stack), flags | SIGCHLD, NULL);
	return NULL;
}

static int race_spawn_true(void)
{
	int status;
	pid_t pid = vfork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "fs", "files", "vm", "vm-spawned", "vm-thread",
					     "fs-exec", "fs-execd" };
	unsigned long tries, ok = 0, inside = 0;
	struct stat target, st;
	bool known = false;

	for (size_t i = 0; argc == 6 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= !strcmp(argv[1], modes[i]);
	if (!known)
		return 2;
	race_mode = argv[1];
	tries = strtoul(argv[5], NULL, 10);
	race_tree = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	race_safe = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(race_tree_path, sizeof(race_tree_path), "%s/%s", argv[2], argv[4]);
	snprintf(race_safe_path, sizeof(race_safe_path), "%s/%s", argv[3], argv[4]);
	if (race_vm())
		strcpy(race_path, race_safe_path);
	else
		snprintf(race_path, sizeof(race_path), "%s", argv[4]);
	if (race_tree < 0 || race_safe < 0 || stat(race_tree_path, &target) < 0 ||
	    fchdir(race_safe) < 0 || dup2(race_safe, 100) < 0)
		return 2;
	if (!strcmp(race_mode, "fs-execd")) {
		/* The flipper, started before the exec, moves this directory. */
		const char *flipper = getenv("RACE_SHARE_FLIPPER");

		race_pid = flipper ? (pid_t)atoi(flipper) : -1;
	} else if (!strcmp(race_mode, "vm-thread")) {
		pthread_t th;

		if (pthread_create(&th, NULL, race_start, NULL) || pthread_join(th, NULL))
			return 2;
		usleep(200000); /* its end told to whoever watches */
	} else {
		race_start(NULL);
	}
	if (race_pid <= 0)
		return 2;
	if (!strcmp(race_mode, "fs-exec")) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)race_pid);
		setenv("RACE_SHARE_FLIPPER", pid, 1);
		execl("/proc/self/exe", argv[0], "fs-execd", argv[2], argv[3], argv[4], argv[5],
		      (char *)NULL);
		return 2;
	}
	if (!strcmp(race_mode, "vm-spawned") && race_spawn_true() < 0)
		return 2;
	for (unsigned long i = 0; i < tries; i++) {
		int fd = race_mode[1] == 'i' ? openat(100, race_path, O_WRONLY | O_APPEND | O_CLOEXEC) :
					       open(race_path, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd < 0)
			continue;
		ok++;
		if (fstat(fd, &st) == 0 && st.st_ino == target.st_ino && st.st_dev == target.st_dev)
			inside++;
		close(fd);
	}
	kill(race_pid, SIGKILL);
	waitpid(race_pid, NULL, 0);
	printf("tries=%lu ok=%lu inside=%lu\n", tries, ok, inside);
	return 0;
}
