/* race-swap MODE TRIES LINK GOOD BAD NAME read|write MARKER: the race of a
 * second process that shares no memory with the caller
 * (doc/THREAT-MODEL.md, "Time of check, time of use").
 *
 * The caller stays single-threaded, so that nothing in its own memory
 * changes: it opens LINK/NAME TRIES times.  A forked child (a separate
 * process, copy-on-write memory) swaps what LINK is, with one atomic
 * renameat2(RENAME_EXCHANGE) between LINK and LINK.swap per round:
 *
 *   symlink: LINK is a symlink to GOOD, LINK.swap one to BAD;
 *   rename:  LINK is a directory (GOOD is ignored), LINK.swap a symlink
 *            to BAD: a directory component replaced by a symlink, as mv
 *            would do it.
 *
 * read: each open that succeeds is read, and counted in "marker" when the
 * bytes hold MARKER (the protected file's content).  write: each open is
 * O_WRONLY|O_CREAT|O_APPEND and MARKER is written into it; the test looks
 * at BAD/NAME afterwards.  chmod: LINK/NAME is made mode 0777 (MARKER
 * unused); move: a file LINK.src holding MARKER, beside LINK, is renamed
 * to LINK/NAME, and made again.  Prints "tries=N ok=K marker=M eacces=E erofs=R
 * other=O".  Exit 0, or 2 on usage errors.  Built without sanitizers: it
 * runs under the filter. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void swapper(const char *link, const char *other)
{
	for (;;)
		if (renameat2(AT_FDCWD, link, AT_FDCWD, other, RENAME_EXCHANGE) < 0 &&
		    errno != EINTR)
			_exit(3);
}

int main(int argc, char **argv)
{
	unsigned long tries, ok = 0, marker = 0, eacces = 0, erofs = 0, other = 0;
	char path[PATH_MAX], swap[PATH_MAX], buf[4096];
	const char *mode, *link, *good, *bad, *name, *op, *mark;
	bool write_op, chmod_op, move_op;
	char src[PATH_MAX];
	pid_t pid;

	if (argc != 9) {
		fprintf(stderr, "usage: race-swap symlink|rename TRIES LINK GOOD BAD NAME "
				"read|write|chmod|move MARKER\n");
		return 2;
	}
	mode = argv[1];
	tries = strtoul(argv[2], NULL, 10);
	link = argv[3];
	good = argv[4];
	bad = argv[5];
	name = argv[6];
	op = argv[7];
	mark = argv[8];
	write_op = strcmp(op, "write") == 0;
	chmod_op = strcmp(op, "chmod") == 0;
	move_op = strcmp(op, "move") == 0;
	if ((strcmp(mode, "symlink") && strcmp(mode, "rename")) ||
	    (!write_op && !chmod_op && !move_op && strcmp(op, "read")) || !*mark ||
	    (size_t)snprintf(src, sizeof(src), "%s.src", link) >= sizeof(src) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", link, name) >= sizeof(path) ||
	    (size_t)snprintf(swap, sizeof(swap), "%s.swap", link) >= sizeof(swap)) {
		fprintf(stderr, "race-swap: bad arguments\n");
		return 2;
	}
	unlink(swap);
	if (strcmp(mode, "symlink") == 0) {
		unlink(link);
		if (symlink(good, link) < 0) {
			perror("race-swap: symlink");
			return 2;
		}
	}
	if (symlink(bad, swap) < 0) {
		perror("race-swap: symlink");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("race-swap: fork");
		return 2;
	}
	if (pid == 0)
		swapper(link, swap);
	for (unsigned long i = 0; i < tries; i++) {
		int fd, r;
		ssize_t n;

		if (chmod_op || move_op) {
			if (move_op) {
				fd = open(src, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
				if (fd < 0 || write(fd, mark, strlen(mark)) < 0) {
					perror("race-swap: the file to move");
					if (fd >= 0)
						close(fd);
					break;
				}
				close(fd);
			}
			r = chmod_op ? chmod(path, 0777) : rename(src, path);
		} else {
			r = fd = write_op ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0755) :
					    open(path, O_RDONLY | O_CLOEXEC);
		}
		if (r < 0) {
			if (errno == EACCES)
				eacces++;
			else if (errno == EROFS)
				erofs++;
			else
				other++;
			continue;
		}
		ok++;
		if (chmod_op || move_op)
			continue;
		if (write_op) {
			if (write(fd, mark, strlen(mark)) < 0)
				other++;
		} else {
			n = read(fd, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = '\0';
				marker += strstr(buf, mark) != NULL;
			}
		}
		close(fd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (move_op)
		unlink(src);
	printf("tries=%lu ok=%lu marker=%lu eacces=%lu erofs=%lu other=%lu\n", tries, ok, marker,
	       eacces, erofs, other);
	return 0;
}
