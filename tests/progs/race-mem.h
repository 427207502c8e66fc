/* Memory that a second process, not a thread, can change: the race
 * helpers' "process" and "file" ways of flipping what the supervisor
 * judged (doc/THREAT-MODEL.md).
 *
 *   "process"  a shared anonymous mapping, written by a forked process;
 *   "file"     a private mapping of a file in TMPDIR (already unlinked),
 *              whose pages the process never writes: a forked process
 *              changes them with pwrite(2) to the file;
 *   "fd3"      the same with the file open for writing on descriptor 3,
 *              inherited (a redirection of the shell that started the
 *              command: a file the policy may refuse writes to by name);
 *   "alias"    the same with the file mapped by the name in
 *              $RACE_MEM_MAP and written by the name in $RACE_MEM_WRITE
 *              (two names of one file: a hard link, a bind mount).
 *
 * Header-only: each helper program is one source file. */
#ifndef RACE_MEM_H
#define RACE_MEM_H

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define RACE_MEM_SIZE 4096

static void *race_mem_base;
static int race_mem_fd = -1; /* "file": the file mapped */

/* LEN bytes of INIT in a page of MODE's memory; NULL on an unknown mode
 * or a failure. */
static inline void *race_mem_map(const char *mode, const void *init, size_t len)
{
	if (len > RACE_MEM_SIZE)
		return NULL;
	if (strcmp(mode, "process") == 0) {
		race_mem_base = mmap(NULL, RACE_MEM_SIZE, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (race_mem_base == MAP_FAILED)
			return NULL;
		memcpy(race_mem_base, init, len);
		return race_mem_base;
	}
	if (strcmp(mode, "file") == 0 || strcmp(mode, "fd3") == 0 || strcmp(mode, "alias") == 0) {
		const char *dir = getenv("TMPDIR");
		char path[4096];

		if (strcmp(mode, "fd3") == 0) {
			race_mem_fd = 3;
		} else if (strcmp(mode, "alias") == 0) {
			const char *map = getenv("RACE_MEM_MAP"), *write = getenv("RACE_MEM_WRITE");
			int mfd;

			if (!map || !write || (race_mem_fd = open(write, O_RDWR | O_CLOEXEC)) < 0 ||
			    ftruncate(race_mem_fd, RACE_MEM_SIZE) < 0 ||
			    pwrite(race_mem_fd, init, len, 0) != (ssize_t)len)
				return NULL;
			mfd = open(map, O_RDONLY | O_CLOEXEC);
			if (mfd < 0)
				return NULL;
			race_mem_base = mmap(NULL, RACE_MEM_SIZE, PROT_READ, MAP_PRIVATE, mfd, 0);
			close(mfd);
			return race_mem_base == MAP_FAILED ? NULL : race_mem_base;
		} else {
			snprintf(path, sizeof(path), "%s/race-mem.XXXXXX",
				 dir && *dir ? dir : "/tmp");
			race_mem_fd = mkstemp(path);
			if (race_mem_fd < 0)
				return NULL;
			unlink(path);
		}
		if (ftruncate(race_mem_fd, RACE_MEM_SIZE) < 0 ||
		    pwrite(race_mem_fd, init, len, 0) != (ssize_t)len)
			return NULL;
		race_mem_base = mmap(NULL, RACE_MEM_SIZE, PROT_READ, MAP_PRIVATE, race_mem_fd, 0);
		return race_mem_base == MAP_FAILED ? NULL : race_mem_base;
	}
	return NULL;
}

/* N bytes at AT (in the mapped page) become BYTES, the way MODE's second
 * process changes them. */
static inline void race_mem_put(void *at, const void *bytes, size_t n)
{
	if (race_mem_fd >= 0) {
		off_t off = (off_t)((char *)at - (char *)race_mem_base);

		if (pwrite(race_mem_fd, bytes, n, off) != (ssize_t)n)
			_exit(3);
	} else {
		volatile char *d = at;

		for (size_t i = 0; i < n; i++)
			d[i] = ((const char *)bytes)[i];
	}
}

/* Flips the bytes in which GOOD and BAD (of one length) differ, in BUF,
 * to BAD's and back, until *STOP (for ever when STOP is NULL).  One
 * differing byte makes each flip atomic. */
static atomic_int race_mem_begun; /* a thread's race_mem_flip() has begun */

static inline void race_mem_flip(char *buf, const char *good, const char *bad,
				 atomic_int *stop)
{
	size_t n = strlen(good);

	atomic_store(&race_mem_begun, 1);
	while (!stop || !atomic_load_explicit(stop, memory_order_relaxed)) {
		for (size_t i = 0; i < n; i++)
			if (good[i] != bad[i])
				race_mem_put(buf + i, bad + i, 1);
		for (size_t i = 0; i < n; i++)
			if (good[i] != bad[i])
				race_mem_put(buf + i, good + i, 1);
	}
}

/* Returns once a thread of this process runs race_mem_flip(): a run
 * short enough to end before the thread is scheduled races nothing. */
static inline void race_mem_wait_begun(void)
{
	while (!atomic_load(&race_mem_begun))
		sched_yield();
}

/* FLIP run for ever in a second process, which dies with this one; its
 * pid, or -1.  Returns once the flipping has begun: a run short enough
 * to end before the second process is scheduled races nothing. */
static inline pid_t race_mem_fork(void (*flip)(void))
{
	int ready[2];
	char c = 0;
	pid_t pid;

	if (pipe(ready) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		close(ready[1]);
		flip();
		_exit(0);
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

static inline void race_mem_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

#endif
