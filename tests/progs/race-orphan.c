/* race-orphan TREE SAFE NAME ROUNDS TRIES: a process sharing memory with
 * the caller, where the clone that made the caller was never seen.  Each
 * round, a process P clones a rewriter D (CLONE_VM), then clones the
 * caller C (CLONE_VM|CLONE_PARENT); D kills P at once, so that P's clone
 * event may be lost with it, and then rewrites the path that C opens for
 * appending (TRIES times), in the memory the three had in common, now
 * TREE/NAME, now SAFE/NAME.  D's delay before the kill varies by round.
 * Prints "tries=N ok=K inside=W": W opens that reached TREE/NAME (by
 * inode).  Exit 0, 2 on usage errors.  Built without sanitizers: it runs
 * under the filter. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One round's memory: private to P, D and C (CLONE_VM), nobody else's. */
struct orphan_round {
	char path[4096];
	char safe[4096], tree[4096];
	volatile int go, killed, c_started, c_done;
	volatile pid_t p;
	long delay;
	unsigned long tries;
	char stack_d[1 << 16], stack_c[1 << 16];
};

/* The counts, across rounds: shared with the top process. */
struct orphan_counts {
	unsigned long tries, ok, inside;
};

static struct orphan_counts *counts;
static struct stat target;

static long orphan_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int orphan_rewriter(void *arg)
{
	struct orphan_round *r = arg;
	size_t ns = strlen(r->safe) + 1, nt = strlen(r->tree) + 1;
	long start;

	while (!r->go)
		;
	for (volatile long i = 0; i < r->delay; i++)
		;
	kill(r->p, SIGKILL);
	r->killed = 1;
	start = orphan_now_ms();
	while (!r->c_started)
		if (orphan_now_ms() - start > 2000)
			_exit(0);
	while (!r->c_done) {
		memcpy(r->path, r->tree, nt);
		__asm__ volatile("" ::: "memory");
		memcpy(r->path, r->safe, ns);
		__asm__ volatile("" ::: "memory");
	}
	_exit(0);
}

static int orphan_caller(void *arg)
{
	struct orphan_round *r = arg;
	struct timespec pause = { 0, 20000000 };
	struct stat st;

	r->c_started = 1;
	while (!r->killed)
		;
	nanosleep(&pause, NULL); /* P's end told to whoever watches */
	for (unsigned long i = 0; i < r->tries; i++) {
		int fd = open(r->path, O_WRONLY | O_APPEND | O_CLOEXEC);

		__sync_fetch_and_add(&counts->tries, 1);
		if (fd < 0)
			continue;
		__sync_fetch_and_add(&counts->ok, 1);
		if (fstat(fd, &st) == 0 && st.st_ino == target.st_ino && st.st_dev == target.st_dev)
			__sync_fetch_and_add(&counts->inside, 1);
		close(fd);
	}
	r->c_done = 1;
	_exit(0);
}

static void orphan_round(const char *tree, const char *safe, const char *name, long delay,
			 unsigned long tries)
{
	struct orphan_round *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		_exit(2);
	snprintf(r->tree, sizeof(r->tree), "%s/%s", tree, name);
	snprintf(r->safe, sizeof(r->safe), "%s/%s", safe, name);
	strcpy(r->path, r->safe);
	r->p = getpid();
	r->delay = delay;
	r->tries = tries;
	if (clone(orphan_rewriter, r->stack_d + sizeof(r->stack_d), CLONE_VM | SIGCHLD, r) < 0)
		_exit(2);
	r->go = 1;
	clone(orphan_caller, r->stack_c + sizeof(r->stack_c), CLONE_VM | CLONE_PARENT | SIGCHLD, r);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	unsigned long rounds, tries;
	char path[4096];

	if (argc != 6)
		return 2;
	rounds = strtoul(argv[4], NULL, 10);
	tries = strtoul(argv[5], NULL, 10);
	snprintf(path, sizeof(path), "%s/%s", argv[1], argv[3]);
	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	if (counts == MAP_FAILED || stat(path, &target) < 0 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return 2;
	for (unsigned long i = 0; i < rounds; i++) {
		long start = orphan_now_ms();
		pid_t p = fork();

		if (p < 0)
			return 2;
		if (p == 0)
			orphan_round(argv[1], argv[2], argv[3], (long)(i * 7919 % 20000), tries);
		while (orphan_now_ms() - start < 3000 && waitpid(-1, NULL, __WALL) > 0)
			;
	}
	printf("tries=%lu ok=%lu inside=%lu\n", counts->tries, counts->ok, counts->inside);
	return 0;
}
