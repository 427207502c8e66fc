/* bt-helper [MODE [PATH]]: a known call chain for the backtrace tests,
 * main -> outer_fn -> inner_fn -> one syscall, where the tracer stops it:
 *
 *   write         inner_fn calls write(-1, ...) (the tests' seccomp filter
 *                 traces write on fd -1 only; EBADF is ignored)
 *   stop          inner_fn raises SIGSTOP (a signal-delivery stop)
 *   thread        a second thread runs thread_fn -> outer_fn -> inner_fn
 *                 -> write(-1)
 *   exec PATH     the write, then inner_fn execs "PATH write"
 *   open PATH     inner_fn opens PATH for writing (agenttrace's own filter
 *                 stops it; the integration tests deny it and read the
 *                 record's backtrace); exits 0 when the open succeeded
 *
 * Built without sanitizers, with -g, and for the CFLAGS the user gives
 * (maybe -O2): noinline/noclone keep each function its own frame and name,
 * and every call is followed by work so that none becomes a tail jump. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BT_KEEP __attribute__((noinline, noclone, used))

int inner_fn(const char *mode, const char *path);
int outer_fn(const char *mode, const char *path);
void *thread_fn(void *arg);

static volatile int bt_sink;

BT_KEEP int inner_fn(const char *mode, const char *path)
{
	int r = 0;

	if (strcmp(mode, "stop") == 0)
		r = raise(SIGSTOP);
	else if (strcmp(mode, "open") == 0 && path != NULL)
		r = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) < 0 ? 1 : 0;
	else
		r = (int)write(-1, "x", 1);
	if (strcmp(mode, "exec") == 0 && path != NULL) {
		execl(path, path, "write", (char *)NULL);
		perror(path);
		_exit(127);
	}
	bt_sink += r;
	return r + bt_sink;
}

BT_KEEP int outer_fn(const char *mode, const char *path)
{
	int r = inner_fn(mode, path);

	bt_sink += r;
	return r ^ bt_sink;
}

BT_KEEP void *thread_fn(void *arg)
{
	int r = outer_fn("write", NULL);

	bt_sink += r;
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "write";
	const char *path = argc > 2 ? argv[2] : NULL;
	int r;

	if (strcmp(mode, "thread") == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_fn, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
		return 0;
	}
	r = outer_fn(mode, path);
	bt_sink += r;
	if (strcmp(mode, "open") == 0)
		return bt_sink != 0;
	return 0;
}
