/* race-orphan MODE TREE SAFE NAME ROUNDS TRIES: a process sharing
 * something with the caller C, where the clone that made C was never
 * seen, or seen only after its maker was dead.  C opens NAME for
 * appending TRIES times a round; what the open names leads now to
 * TREE/NAME, now to SAFE/NAME.
 *   vm         a process P clones a rewriter D (CLONE_VM), then C
 *              (CLONE_VM|CLONE_PARENT); D kills P at once, and rewrites
 *              the path C opens, in the memory the three had in common.
 *              D's delay before the kill varies by round.
 *   fs-thread  a thread T of the round's process, with a working
 *              directory of its own, starts a second thread T2 sharing
 *              it (CLONE_FS) and a process P sharing it (CLONE_VM|
 *              CLONE_FS) whose parent-death signal is SIGKILL; P clones
 *              C (CLONE_FS); T ends as soon as C exists, which kills P.
 *              T2 moves the shared directory between TREE and SAFE; C's
 *              open is relative.
 * Prints "tries=N ok=K inside=W": W opens that reached TREE/NAME (by
 * inode).  Exit 0, 2 on usage errors.  Built without sanitizers: it runs
 * under the filter. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One round's memory: private to P, D and C (CLONE_VM), nobody else's. */
struct orphan_round {
	char path[4096];
	char safe[4096], tree[4096];
	volatile int go, killed, c_started, c_done;
	volatile pid_t p, c;
	volatile int t_done;
	unsigned long done_before;
	long delay;
	unsigned long tries;
	char tree_dir[4096], safe_dir[4096], name[256];
	char stack_d[1 << 16], stack_c[1 << 16], stack_t[1 << 16], stack_t2[1 << 16];
};

/* The counts, across rounds: shared with the top process. */
struct orphan_counts {
	unsigned long tries, ok, inside;
	volatile unsigned long callers_done; /* fs-thread: C is no thread of the round's */
};

static struct orphan_counts *counts;
static struct stat target;

static long orphan_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* C's opens of PATH for appending, TRIES of them, counted. */
static void orphan_opens(const char *path, unsigned long tries)
{
	struct stat st;

	for (unsigned long i = 0; i < tries; i++) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

		__sync_fetch_and_add(&counts->tries, 1);
		if (fd < 0)
			continue;
		__sync_fetch_and_add(&counts->ok, 1);
		if (fstat(fd, &st) == 0 && st.st_ino == target.st_ino && st.st_dev == target.st_dev)
			__sync_fetch_and_add(&counts->inside, 1);
		close(fd);
	}
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
	/* P killed before it made C: no C, and no race, this round. */
	start = orphan_now_ms();
	while (!r->c_started)
		if (orphan_now_ms() - start > 300)
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

	r->c_started = 1;
	while (!r->killed)
		;
	nanosleep(&pause, NULL); /* P's end told to whoever watches */
	orphan_opens(r->path, r->tries);
	r->c_done = 1;
	_exit(0);
}

/* fs-thread: C, opening NAME relative to the directory it shares. */
static int orphan_fs_caller(void *arg)
{
	struct orphan_round *r = arg;

	r->c_started = 1;
	orphan_opens(r->name, r->tries);
	__sync_fetch_and_add(&counts->callers_done, 1);
	_exit(0);
}

/* fs-thread: whether this round's C is done (its memory is its own). */
static bool orphan_fs_done(const struct orphan_round *r)
{
	return counts->callers_done != r->done_before;
}

/* fs-thread: P, killed when T ends. */
static int orphan_fs_maker(void *arg)
{
	struct orphan_round *r = arg;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	clone(orphan_fs_caller, r->stack_c + sizeof(r->stack_c),
	      CLONE_FS | CLONE_PARENT_SETTID | SIGCHLD, r, (pid_t *)&r->c);
	pause();
	_exit(0);
}

/* fs-thread: T2, moving the directory it shares with T, P and C. */
static int orphan_fs_mover(void *arg)
{
	struct orphan_round *r = arg;
	long start = orphan_now_ms();

	while (!orphan_fs_done(r) && orphan_now_ms() - start < 5000) {
		if (chdir(r->tree_dir) < 0 || chdir(r->safe_dir) < 0)
			break;
	}
	syscall(SYS_exit, 0);
	return 0;
}

/* fs-thread: T. */
static int orphan_fs_thread(void *arg)
{
	struct orphan_round *r = arg;
	const int thread = CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;

	if (chdir(r->safe_dir) < 0 ||
	    clone(orphan_fs_mover, r->stack_t2 + sizeof(r->stack_t2), thread | CLONE_FS, r) < 0 ||
	    clone(orphan_fs_maker, r->stack_d + sizeof(r->stack_d), CLONE_VM | CLONE_FS | SIGCHLD,
		  r) < 0) {
		r->t_done = 1;
		syscall(SYS_exit, 0);
	}
	while (!r->c)
		;
	r->t_done = 1;
	syscall(SYS_exit, 0);
	return 0;
}

static void orphan_fs_round(const char *tree, const char *safe, const char *name,
			    unsigned long tries)
{
	struct orphan_round *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long start;

	if (r == MAP_FAILED)
		_exit(2);
	snprintf(r->tree_dir, sizeof(r->tree_dir), "%s", tree);
	snprintf(r->safe_dir, sizeof(r->safe_dir), "%s", safe);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->tries = tries;
	r->done_before = counts->callers_done;
	if (clone(orphan_fs_thread, r->stack_t + sizeof(r->stack_t),
		  CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, r) < 0)
		_exit(2);
	start = orphan_now_ms();
	while (!orphan_fs_done(r) && orphan_now_ms() - start < 5000)
		usleep(1000);
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

	bool fs;

	if (argc != 7 || (strcmp(argv[1], "vm") && strcmp(argv[1], "fs-thread")))
		return 2;
	fs = argv[1][0] == 'f';
	argv++;
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
		if (p == 0 && fs)
			orphan_fs_round(argv[1], argv[2], argv[3], tries);
		if (p == 0)
			orphan_round(argv[1], argv[2], argv[3], (long)(i * 7919 % 20000), tries);
		while (orphan_now_ms() - start < 3000 && waitpid(-1, NULL, __WALL) > 0)
			;
	}
	printf("tries=%lu ok=%lu inside=%lu\n", counts->tries, counts->ok, counts->inside);
	return 0;
}
