/* race-path OP SRC GOOD BAD N [process|file]: the race of a call that
 * changes a name.  A second thread (or process: race-mem.h) flips the
 * bytes in which GOOD and BAD differ (same length) while the main thread
 * makes SRC anew and then, N times, OP: "rename" (SRC to the buffer),
 * "link" (the buffer a new name of SRC), "linkfd" (the same by
 * linkat(2) of SRC's open descriptor, AT_EMPTY_PATH), "symlink" (the
 * buffer a symbolic link to SRC) or "bind" (a UNIX socket bound to the
 * buffer, SRC unused, which makes a socket file there); or on a file GOOD and BAD name (SRC
 * unused), "chown" (its group made 1), "setxattr" (user.raced set) or
 * "utimes" (its times made 12345), where bad is 1 when BAD has that group,
 * attribute or time at the end.  Prints "tries=N ok=K bad=W eacces=E": bad
 * counts the calls whose new name really is BAD (BAD names SRC's inode
 * afterwards, or is the link to it), so the test can tell a won race
 * from a refused one.  Exit 0, or 2 on usage errors.  Built without sanitizers:
 * it runs under the filter. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "race-mem.h"

static char race_own[RACE_MEM_SIZE];
static struct sockaddr_un race_sa = { .sun_family = AF_UNIX }; /* "bind": its sun_path flips */
static char *race_buf = race_own;
static const char *race_good, *race_bad;

static void *race_flipper(void *arg)
{
	(void)arg;
	race_mem_flip(race_buf, race_good, race_bad, NULL);
	return NULL;
}

static void race_flip_process(void)
{
	race_mem_flip(race_buf, race_good, race_bad, NULL);
}

int main(int argc, char **argv)
{
	unsigned long n, ok = 0, bad = 0, eacces = 0;
	const char *op, *src;
	pthread_t th;
	bool link_op, symlink_op, by_fd;

	if ((argc != 6 && argc != 7) || strlen(argv[3]) != strlen(argv[4]) ||
	    strlen(argv[3]) >= RACE_MEM_SIZE ||
	    (strcmp(argv[1], "rename") != 0 && strcmp(argv[1], "link") != 0 &&
	     strcmp(argv[1], "linkfd") != 0 && strcmp(argv[1], "symlink") != 0 &&
	     strcmp(argv[1], "chown") != 0 && strcmp(argv[1], "setxattr") != 0 &&
	     strcmp(argv[1], "utimes") != 0 && strcmp(argv[1], "bind") != 0)) {
		fprintf(stderr,
			"usage: race-path rename|link|linkfd|symlink|bind|chown|setxattr|utimes "
				"SRC GOOD BAD N [process|file]\n");
		return 2;
	}
	op = argv[1];
	by_fd = strcmp(op, "linkfd") == 0;
	link_op = by_fd || strcmp(op, "link") == 0;
	symlink_op = strcmp(op, "symlink") == 0;
	src = argv[2];
	race_good = argv[3];
	race_bad = argv[4];
	n = strtoul(argv[5], NULL, 10);
	if (strcmp(op, "bind") == 0) {
		if (argc == 7 || strlen(race_good) >= sizeof(race_sa.sun_path))
			return 2;
		race_buf = race_sa.sun_path;
	}
	memcpy(race_buf, race_good, strlen(race_good) + 1);
	if (argc == 7) {
		race_buf = race_mem_map(argv[6], race_good, strlen(race_good) + 1);
		if (!race_buf || race_mem_fork(race_flip_process) < 0)
			return 2;
	} else if (pthread_create(&th, NULL, race_flipper, NULL) != 0) {
		return 2;
	} else {
		race_mem_wait_begun();
	}
	if (strcmp(op, "bind") == 0) {
		struct stat b;

		for (unsigned long i = 0; i < n; i++) {
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

			if (fd < 0)
				return 2;
			r = bind(fd, (struct sockaddr *)&race_sa, (socklen_t)sizeof(race_sa));
			if (r < 0)
				eacces += errno == EACCES;
			else
				ok++;
			close(fd);
			if (lstat(race_bad, &b) == 0 && S_ISSOCK(b.st_mode)) {
				bad++;
				unlink(race_bad);
			}
			unlink(race_good);
		}
		printf("tries=%lu ok=%lu bad=%lu eacces=%lu\n", n, ok, bad, eacces);
		return 0;
	}
	if (strcmp(op, "chown") == 0 || strcmp(op, "setxattr") == 0 || strcmp(op, "utimes") == 0) {
		bool by_chown = op[1] == 'h', by_utimes = op[0] == 'u';
		const struct timeval tv[2] = { { 12345, 0 }, { 12345, 0 } };
		struct stat b;
		char v[8];

		for (unsigned long i = 0; i < n; i++) {
			int r = by_utimes  ? utimes(race_buf, tv)
				: by_chown ? chown(race_buf, (uid_t)-1, 1)
					   : setxattr(race_buf, "user.raced", "1", 1, 0);

			if (r < 0) {
				eacces += errno == EACCES;
				continue;
			}
			ok++;
		}
		/* Reached at least once (a reset would be refused as well). */
		bad = by_utimes	 ? stat(race_bad, &b) == 0 && b.st_mtime == 12345
		      : by_chown ? stat(race_bad, &b) == 0 && b.st_gid == 1
				 : getxattr(race_bad, "user.raced", v, sizeof(v)) > 0;
		printf("tries=%lu ok=%lu bad=%lu eacces=%lu\n", n, ok, bad, eacces);
		return 0;
	}
	for (unsigned long i = 0; i < n; i++) {
		struct stat a, b;
		int fd = open(src, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), r;

		if (fd < 0 || fstat(fd, &a) < 0)
			return 2;
		r = by_fd ? linkat(fd, "", AT_FDCWD, race_buf, AT_EMPTY_PATH)
		    : symlink_op ? symlink(src, race_buf)
		    : link_op	 ? link(src, race_buf)
				 : rename(src, race_buf);
		close(fd);
		if (r < 0) {
			eacces += errno == EACCES;
			if (!link_op && !symlink_op)
				unlink(src);
			continue;
		}
		ok++;
		if (stat(race_bad, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			bad++;
		if (symlink_op) {
			if (lstat(race_good, &b) == 0 && S_ISLNK(b.st_mode))
				unlink(race_good);
		} else if (link_op) {
			/* The good name goes for the next try; the source too. */
			if (stat(race_good, &b) == 0 && a.st_ino == b.st_ino)
				unlink(race_good);
			unlink(src);
		} else if (stat(race_good, &b) == 0 && a.st_ino == b.st_ino) {
			unlink(race_good);
		}
	}
	printf("tries=%lu ok=%lu bad=%lu eacces=%lu\n", n, ok, bad, eacces);
	return 0;
}
