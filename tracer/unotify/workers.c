/* A few threads for the notify engine's long calls (workers.h). */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/unotify/workers.h"

struct workers_job {
	void (*fn)(void *);
	void *arg;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct workers_job q[WORKERS_QUEUE];
	size_t head, n;
	int started; /* 0: not yet, 1: running, -1: could not start */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER };

static void *workers_thread(void *unused)
{
	(void)unused;
	for (;;) {
		struct workers_job j;

		pthread_mutex_lock(&pool.lock);
		while (pool.n == 0)
			pthread_cond_wait(&pool.ready, &pool.lock);
		j = pool.q[pool.head];
		pool.head = (pool.head + 1) % WORKERS_QUEUE;
		pool.n--;
		pthread_mutex_unlock(&pool.lock);
		j.fn(j.arg);
	}
	return NULL;
}

struct workers_start_report {
	sem_t done;
	int ok;
};

/* Each thread's own working directory and umask: a job sets the
 * caller's umask, which CLONE_FS would share with every other thread
 * of the supervisor.  A thread that cannot have them takes no job. */
static void *workers_start_thread(void *arg)
{
	struct workers_start_report *rep = arg;
	bool ok = unshare(CLONE_FS) == 0;

	rep->ok = ok;
	sem_post(&rep->done);
	return ok ? workers_thread(NULL) : NULL;
}

/* Under pool.lock. */
static void workers_start(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus < 2 ? 2 : cpus > WORKERS_MAX ? WORKERS_MAX : (int)cpus, up = 0;
	struct workers_start_report rep;

	if (sem_init(&rep.done, 0, 0) < 0) {
		pool.started = -1;
		return;
	}
	for (int i = 0; i < n; i++) {
		pthread_attr_t attr;
		pthread_t th;
		int r;

		rep.ok = 0;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&th, &attr, workers_start_thread, &rep);
		pthread_attr_destroy(&attr);
		if (r != 0)
			break;
		while (sem_wait(&rep.done) < 0)
			;
		up += rep.ok;
	}
	sem_destroy(&rep.done);
	pool.started = up > 0 ? 1 : -1;
	if (up == 0)
		warn_msg("the notify engine's worker threads did not start: "
			 "files are created one at a time");
}

bool workers_submit(void (*job)(void *arg), void *arg)
{
	bool taken = false;

	pthread_mutex_lock(&pool.lock);
	if (pool.started == 0)
		workers_start();
	if (pool.started > 0 && pool.n < WORKERS_QUEUE) {
		pool.q[(pool.head + pool.n) % WORKERS_QUEUE] = (struct workers_job){ job, arg };
		pool.n++;
		pthread_cond_signal(&pool.ready);
		taken = true;
	}
	pthread_mutex_unlock(&pool.lock);
	return taken;
}
