/* race-share fs|files TREE SAFE NAME TRIES: the race of a second process
 * that shares no memory with the caller but its working directory
 * (clone(CLONE_FS)) or its descriptor table (clone(CLONE_FILES)).  The
 * caller, single-threaded, opens NAME for appending TRIES times: "fs"
 * relative to its working directory, "files" relative to descriptor 100.
 * The other process points that directory now at SAFE, now at TREE
 * (fchdir, or dup2 onto 100).  Prints "tries=N ok=K inside=W": W opens
 * that reached TREE/NAME (by inode).  Exit 0, 2 on usage errors.  Built
 * without sanitizers: it runs under the filter. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *race_mode, *race_name;
static int race_tree, race_safe;
static char race_stack[1 << 16];

static int race_flipper(void *arg)
{
	(void)arg;
	for (;;) {
		if (race_mode[1] == 's') { /* "fs" */
			if (fchdir(race_tree) < 0 || fchdir(race_safe) < 0)
				_exit(3);
		} else if (dup2(race_tree, 100) < 0 || dup2(race_safe, 100) < 0) {
			_exit(3);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long tries, ok = 0, inside = 0;
	struct stat target, st;
	char path[4096];
	pid_t pid;

	if (argc != 6 || (strcmp(argv[1], "fs") && strcmp(argv[1], "files")))
		return 2;
	race_mode = argv[1];
	race_name = argv[4];
	tries = strtoul(argv[5], NULL, 10);
	race_tree = open(argv[2], O_PATH | O_DIRECTORY | O_CLOEXEC);
	race_safe = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/%s", argv[2], race_name);
	if (race_tree < 0 || race_safe < 0 || stat(path, &target) < 0 || fchdir(race_safe) < 0 ||
	    dup2(race_safe, 100) < 0)
		return 2;
	pid = clone(race_flipper, race_stack + sizeof(race_stack),
		    (race_mode[1] == 's' ? CLONE_FS : CLONE_FILES) | SIGCHLD, NULL);
	if (pid < 0)
		return 2;
	for (unsigned long i = 0; i < tries; i++) {
		int fd = race_mode[1] == 's' ? open(race_name, O_WRONLY | O_APPEND | O_CLOEXEC) :
					       openat(100, race_name, O_WRONLY | O_APPEND | O_CLOEXEC);

		if (fd < 0)
			continue;
		ok++;
		if (fstat(fd, &st) == 0 && st.st_ino == target.st_ino && st.st_dev == target.st_dev)
			inside++;
		close(fd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("tries=%lu ok=%lu inside=%lu\n", tries, ok, inside);
	return 0;
}
