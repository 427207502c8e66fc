/* The session's cgroup: a directory agenttrace.<pid> below agenttrace's own
 * cgroup, so that --max-memory and --max-cpu count every process of the
 * session together, as rlimits (per process) cannot; and the pids
 * controller's task ceiling, which the kernel keeps without a stop at
 * each fork.
 *
 * Where agenttrace's cgroup is comes from /proc/self/cgroup, where the
 * hierarchy is mounted from /proc/self/mountinfo (a container sees its own
 * cgroup as the mount's root, hence the root prefix strip).  cgroup v2 is
 * tried first; its memory controller is often bound to v1 or not delegated,
 * and then v1's memory and cpuacct hierarchies are used.  A directory left
 * by a killed agenttrace is removed by the next one (rmdir only succeeds on
 * an empty cgroup, so a live session's is never touched). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/testknob.h"
#include "lib/xalloc.h"
#include "tracer/confine/cgroup.h"

#define CGROUP_PREFIX "agenttrace."

/* True when the comma-separated LIST has the item WORD. */
static bool cgroup_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void cgroup_unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* agenttrace's cgroup path in the hierarchy of CONTROLLER (v1) or in the
 * unified hierarchy (CONTROLLER NULL), from /proc/self/cgroup. */
static char *cgroup_own_path(const char *controller)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char *line = NULL, *found = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	while (!found && getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (controller ? cgroup_has_word(c1 + 1, controller)
			       : (strncmp(line, "0:", 2) == 0 && c1[1] == '\0')) {
			c2[1 + strcspn(c2 + 1, "\n")] = '\0';
			found = xstrdup(c2 + 1);
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* The directory of agenttrace's own cgroup for CONTROLLER (NULL: v2). */
static char *cgroup_own_dir(const char *controller)
{
	char *path = cgroup_own_path(controller), *line = NULL, *dir = NULL;
	size_t cap = 0;
	FILE *f;

	if (!path)
		return NULL;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		goto out;
	while (!dir && getline(&line, &cap, f) > 0) {
		char *field[6], *save = NULL, *dash, *fstype, *opts;
		int i;

		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = '\0';
		fstype = strtok_r(dash + 3, " ", &save);
		strtok_r(NULL, " ", &save); /* source */
		opts = strtok_r(NULL, " \n", &save);
		if (!fstype || !opts)
			continue;
		if (controller ? strcmp(fstype, "cgroup") != 0 || !cgroup_has_word(opts, controller)
			       : strcmp(fstype, "cgroup2") != 0)
			continue;
		save = NULL;
		for (i = 0; i < 6; i++)
			if (!(field[i] = strtok_r(i ? NULL : line, " ", &save)))
				break;
		if (i < 6)
			continue;
		cgroup_unescape(field[3]);
		cgroup_unescape(field[4]);
		const char *rest = path;
		size_t rl = strlen(field[3]);

		/* A mount of a sub-cgroup (containers): its root is a prefix of
		 * our path, which is then relative to the mount point. */
		if (strcmp(field[3], "/") != 0) {
			if (strncmp(path, field[3], rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
				continue;
			rest = path + rl;
		}
		dir = xasprintf("%s%s", field[4], strcmp(rest, "/") == 0 ? "" : rest);
	}
	fclose(f);
out:
	free(line);
	free(path);
	return dir;
}

static int cgroup_write(const char *dir, const char *file, const char *fmt, ...)
{
	char path[4096], buf[64];
	va_list ap;
	int fd, n, r = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* The number after KEY in DIR/FILE ("key value" lines); KEY NULL: the
 * file is one number. */
static int cgroup_read_key(const char *dir, const char *file, const char *key, uint64_t *v)
{
	char path[4096], line[256];
	FILE *f;
	int r = -ENOENT;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t kl = key ? strlen(key) : 0;

		if (key && (strncmp(line, key, kl) != 0 || line[kl] != ' '))
			continue;
		*v = strtoull(line + kl, NULL, 10);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static bool cgroup_exists(const char *dir, const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* Removes what killed sessions left in BASE: empty agenttrace.<pid>.<tag>
 * (and agenttrace.<pid>, as older versions named them) of pids that are
 * gone. */
static void cgroup_sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(CGROUP_PREFIX), &end, 10);
		if ((*end && *end != '.') || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* A tag no other session's cgroup has. */
static unsigned long long cgroup_tag(void)
{
	unsigned long long tag;
	struct timespec ts;

	if (getrandom(&tag, sizeof(tag), GRND_NONBLOCK) == (ssize_t)sizeof(tag))
		return tag;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Makes BASE/agenttrace.<pid>.<tag>, a directory of this session's own;
 * its path in *OUT.  The pid alone is not enough: a killed session's
 * cgroup under a pid that is reused would be taken over, and swept away
 * under the new session by a third one that saw the pid gone a moment
 * before (the new session's command then fails to enter it). */
static int cgroup_make(const char *base, char **out)
{
	cgroup_sweep(base);
	for (int tries = 0; tries < 8; tries++) {
		char *dir = xasprintf("%s/" CGROUP_PREFIX "%d.%llx", base, (int)getpid(),
				      cgroup_tag());

		if (mkdir(dir, 0755) == 0) {
			*out = dir;
			return 0;
		}
		free(dir);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The task ceiling in DIR, where the pids controller is there (v2: made
 * so when it can be): optional, the other ceilings apply without it. */
static void cgroup_limit_tasks(struct cgroup_session *cg, const char *base, const char *dir,
			       uint64_t max_tasks)
{
	if (!max_tasks)
		return;
	if (base && !cgroup_exists(dir, "pids.max"))
		cgroup_write(base, "cgroup.subtree_control", "+pids");
	if (cgroup_exists(dir, "pids.max") && cgroup_write(dir, "pids.max", "%" PRIu64, max_tasks) == 0)
		cg->pids_dir = xstrdup(dir);
}

static int cgroup_open_v2(struct cgroup_session *cg, uint64_t max_memory, int want_cpu,
			  uint64_t max_tasks)
{
	char *base = cgroup_own_dir(NULL), *dir = NULL;
	int r;

	if (!base)
		return -ENOENT;
	r = cgroup_make(base, &dir);
	if (r < 0)
		goto out;
	if (max_memory && !cgroup_exists(dir, "memory.max")) {
		/* Allowed only where the controller is delegated and the
		 * parent holds no process itself ("no internal processes"). */
		cgroup_write(base, "cgroup.subtree_control", "+memory");
		if (!cgroup_exists(dir, "memory.max")) {
			r = -ENOTSUP;
			goto out;
		}
	}
	if (max_memory) {
		r = cgroup_write(dir, "memory.max", "%" PRIu64, max_memory);
		if (r < 0)
			goto out;
		/* Swap would let the session hold more than the ceiling. */
		cgroup_write(dir, "memory.swap.max", "0");
		cg->mem_dir = xstrdup(dir);
	}
	if (want_cpu) {
		if (!cgroup_exists(dir, "cpu.stat")) {
			r = -ENOTSUP;
			goto out;
		}
		cg->cpu_dir = xstrdup(dir);
	}
	cgroup_limit_tasks(cg, base, dir, max_tasks);
	if (!cg->mem_dir && !cg->cpu_dir && !cg->pids_dir) {
		r = -ENOTSUP;
		goto out;
	}
	cg->version = 2;
out:
	if (r < 0 && dir) {
		free(cg->mem_dir);
		cg->mem_dir = NULL;
		free(cg->cpu_dir);
		cg->cpu_dir = NULL;
		rmdir(dir);
	}
	free(dir);
	free(base);
	return r;
}

/* The session's directory in BASE, a v1 hierarchy: the one made for an
 * earlier controller when that hierarchy holds both (co-mounted; *REUSED
 * set when REUSED is not NULL: the caller must not remove it), else a new
 * one.  0 or -errno. */
static int cgroup_make_v1(const char *base, char *const made_base[2], char *const made_dir[2],
			  char **out, bool *reused)
{
	bool found = false;

	for (int i = 0; i < 2 && !found; i++)
		if (made_base[i] && made_dir[i] && strcmp(made_base[i], base) == 0) {
			*out = xstrdup(made_dir[i]);
			found = true;
		}
	if (reused)
		*reused = found;
	return found ? 0 : cgroup_make(base, out);
}

static int cgroup_open_v1(struct cgroup_session *cg, uint64_t max_memory, int want_cpu,
			  uint64_t max_tasks)
{
	char *bases[2] = { NULL, NULL }, *dirs[2] = { NULL, NULL };
	char *base;
	int r = 0;

	if (max_memory) {
		base = cgroup_own_dir("memory");
		if (!base)
			return -ENOENT;
		r = cgroup_make(base, &cg->mem_dir);
		bases[0] = base;
		dirs[0] = cg->mem_dir;
		if (r < 0)
			goto out;
		r = cgroup_write(cg->mem_dir, "memory.limit_in_bytes", "%" PRIu64, max_memory);
		if (r < 0)
			goto out;
		/* Present with swap accounting only; must not stay above. */
		if (cgroup_exists(cg->mem_dir, "memory.memsw.limit_in_bytes"))
			cgroup_write(cg->mem_dir, "memory.memsw.limit_in_bytes", "%" PRIu64,
				     max_memory);
	}
	if (want_cpu) {
		base = cgroup_own_dir("cpuacct");
		if (!base) {
			r = -ENOENT;
			goto out;
		}
		/* Kept until the end either way: cgroup_close() removes it
		 * once, whichever controllers share it. */
		r = cgroup_make_v1(base, bases, dirs, &cg->cpu_dir, NULL);
		bases[1] = base;
		dirs[1] = cg->cpu_dir;
		if (r < 0)
			goto out;
		if (!cgroup_exists(cg->cpu_dir, "cpuacct.usage")) {
			r = -ENOTSUP;
			goto out;
		}
	}
	if (max_tasks && (base = cgroup_own_dir("pids"))) {
		char *dir = NULL;
		bool shared;

		if (cgroup_make_v1(base, bases, dirs, &dir, &shared) == 0) {
			cgroup_limit_tasks(cg, NULL, dir, max_tasks);
			if (!cg->pids_dir && !shared)
				rmdir(dir);
		}
		free(dir);
		free(base);
	}
	r = 0;
	if (!cg->mem_dir && !cg->cpu_dir && !cg->pids_dir)
		r = -ENOTSUP;
	else
		cg->version = 1;
out:
	free(bases[0]);
	free(bases[1]);
	return r;
}

int cgroup_open(struct cgroup_session *cg, uint64_t max_memory, int want_cpu, uint64_t max_tasks)
{
	int r;

	memset(cg, 0, sizeof(*cg));
	/* The tests' way to the rlimit fallback. */
	if (test_knob("NO_CGROUP", 0, 0, 1) == 1)
		return -ENOTSUP;
	if (!max_memory && !want_cpu && !max_tasks)
		return -EINVAL;
	r = cgroup_open_v2(cg, max_memory, want_cpu, max_tasks);
	if (r == 0)
		return 0;
	r = cgroup_open_v1(cg, max_memory, want_cpu, max_tasks);
	if (r < 0)
		cgroup_close(cg);
	return r;
}

/* The cgroup directories of CG, each once (v2: one for all). */
static size_t cgroup_dirs(const struct cgroup_session *cg, const char *dirs[3])
{
	const char *all[3] = { cg->mem_dir, cg->cpu_dir, cg->pids_dir };
	size_t n = 0;

	for (size_t i = 0; i < 3; i++) {
		size_t j = 0;

		while (all[i] && j < n && strcmp(dirs[j], all[i]) != 0)
			j++;
		if (all[i] && j == n)
			dirs[n++] = all[i];
	}
	return n;
}

/* Moving a process through cgroup.procs takes the cgroup threadgroup
 * lock for writing, which waits for an RCU grace period: 10-17 ms on a
 * 2-vCPU VM, most of a session's start.  A process made in its cgroup by
 * clone3, or a thread moving itself alone (0 into v1's "tasks": the
 * kernel skips the lock for the current thread) takes no such wait. */
pid_t cgroup_fork(const struct cgroup_session *cg, bool *entered)
{
	struct clone_args args;
	const char *dirs[3];
	long pid;
	int dir, e;

	*entered = false;
	if (cg->version != 2 || cgroup_dirs(cg, dirs) != 1 ||
	    test_knob("NO_CLONE_INTO_CGROUP", 0, 0, 1) == 1)
		return fork();
	dir = open(dirs[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return fork();
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)dir;
	/* agenttrace has no other thread yet: a child made without glibc's
	 * fork() has no lock of another thread to reset. */
	pid = syscall(SYS_clone3, &args, sizeof(args));
	e = errno;
	close(dir);
	if (pid < 0) {
		errno = e;
		return fork();
	}
	*entered = true;
	return (pid_t)pid;
}

int cgroup_enter_self(const struct cgroup_session *cg)
{
	const char *dirs[3];
	size_t n = cgroup_dirs(cg, dirs);
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++)
		r = cgroup_write(dirs[i], cg->version == 1 ? "tasks" : "cgroup.procs", "0");
	return r;
}

int cgroup_cpu_usec(const struct cgroup_session *cg, uint64_t *usec)
{
	uint64_t ns;
	int r;

	if (!cg->cpu_dir)
		return -ENOENT;
	if (cg->version == 2)
		return cgroup_read_key(cg->cpu_dir, "cpu.stat", "usage_usec", usec);
	r = cgroup_read_key(cg->cpu_dir, "cpuacct.usage", NULL, &ns);
	if (r == 0)
		*usec = ns / 1000;
	return r;
}

int cgroup_oom_kills(const struct cgroup_session *cg, uint64_t *n)
{
	if (!cg->mem_dir)
		return -ENOENT;
	/* v1 has the count since Linux 4.13; before, no kill is told. */
	return cgroup_read_key(cg->mem_dir, cg->version == 2 ? "memory.events" : "memory.oom_control",
			       "oom_kill", n);
}

int cgroup_task_ceiling_hits(const struct cgroup_session *cg, uint64_t *n)
{
	if (!cg->pids_dir)
		return -ENOENT;
	return cgroup_read_key(cg->pids_dir, "pids.events", "max", n);
}

void cgroup_kill_all(const struct cgroup_session *cg)
{
	/* A fork bomb forks again as fast as it is killed: v2's cgroup.kill
	 * (Linux 5.14) takes the whole cgroup at once; else rounds of
	 * SIGKILL, each of which the ceiling keeps finite. */
	if (cg->version == 2 && cg->pids_dir && cgroup_exists(cg->pids_dir, "cgroup.kill") &&
	    cgroup_write(cg->pids_dir, "cgroup.kill", "1") == 0)
		return;
	for (int i = 0; i < 100 && cgroup_signal(cg, SIGKILL) > 0; i++)
		;
}

int cgroup_signal(const struct cgroup_session *cg, int sig)
{
	const char *dir = cg->pids_dir ? cg->pids_dir : cg->cpu_dir ? cg->cpu_dir : cg->mem_dir;
	char path[4096];
	long pid;
	int n = 0;
	FILE *f;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	fclose(f);
	return n;
}

/* Processes just reaped may still be leaving the cgroup: a few tries. */
static void cgroup_remove(const char *dir)
{
	struct timespec ts = { 0, 2000000 };

	for (int i = 0; i < 100; i++) {
		if (rmdir(dir) == 0 || errno != EBUSY)
			return;
		nanosleep(&ts, NULL);
	}
}

void cgroup_close(struct cgroup_session *cg)
{
	const char *dirs[3];
	size_t n = cgroup_dirs(cg, dirs);

	for (size_t i = 0; i < n; i++)
		cgroup_remove(dirs[i]);
	free(cg->mem_dir);
	free(cg->cpu_dir);
	free(cg->pids_dir);
	memset(cg, 0, sizeof(*cg));
}
