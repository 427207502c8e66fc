/* The Landlock backstop and the race detector (landlock.h).
 *
 * Roots: for every write rule the policy lets through (allow and alert,
 * after layering and --allow-write), the literal directory prefix of its
 * pattern (everything up to the last '/' before the first glob or escape
 * character), or the path itself when the pattern is literal (/dev/null).
 * Landlock rules bind to inodes, so only roots that exist when the
 * session starts can be granted.  A fresh HOME (a CI runner's) often has
 * no ~/.cache or ~/.npm yet, and refusing the package managers their
 * caches would break the very builds agenttrace watches: missing roots
 * under ${HOME}, which the policy lets the command create anyway, are
 * created empty (0700) before the ruleset is built, and removed at the
 * end when they are still empty, so that HOME is left as it was found
 * (~/go/pkg, ~/.m2/repository and the like appeared in every fresh HOME
 * otherwise).  Nothing else would do: Landlock cannot grant a directory
 * that does not exist yet, nor widen a ruleset once in force, and
 * granting the nearest existing parent (HOME itself) would leave the
 * whole of HOME to the supervisor alone.  Elsewhere a write
 * beneath a root that did not exist yet is refused by the kernel, and the
 * supervisor refuses it first with a record that says why
 * (landlock.outside-roots) rather than let the program see an
 * unexplained EACCES.
 *
 * Rights: the write-class accesses of the probed ABI (1: WRITE_FILE,
 * REMOVE_*, MAKE_*; 2: REFER; 3: TRUNCATE).  Reads, exec and ioctl are not
 * handled: the policy's read rules stay with the supervisor.  A file root
 * (a device such as /dev/null) can only carry file rights (landlock(7)). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/syscall-open.h"
#include "lib/xalloc.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/ownpath.h"
#include "tracer/judge.h"
#include "tracer/syscall/mem.h"
#include "tracer/syscall/probe.h"
#include "tracer/record/record.h"
#include "tracer/syscall/table.h"

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

/* glibc has no wrappers for these: raw syscalls, named apart from the
 * kernel's own names. */
static int landlock_sys_create(const struct landlock_ruleset_attr *attr, size_t size,
			       uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static int landlock_sys_add(int fd, const struct landlock_path_beneath_attr *attr)
{
	return (int)syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, attr, 0);
}

static int landlock_sys_restrict(int fd)
{
	return (int)syscall(SYS_landlock_restrict_self, fd, 0);
}

static uint64_t landlock_dir_rights(int abi)
{
	uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return r;
}

static uint64_t landlock_file_rights(int abi)
{
	return LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
}

/* The coarse root of one pattern (malloc'ed), see the top of the file;
 * *LITERAL when it is the pattern itself (a file, such as /dev/null). */
static char *landlock_root_of(const char *text, size_t prefix_len, bool *literal)
{
	size_t len = strlen(text), cut;

	*literal = false;
	if (text[0] != '/')
		return NULL;
	*literal = prefix_len >= len;
	if (*literal)
		return xstrdup(text);
	cut = prefix_len;
	while (cut > 0 && text[cut - 1] != '/')
		cut--;
	/* cut is just past the last '/' of the literal part. */
	if (cut <= 1)
		return xstrdup("/");
	return xstrndup(text, cut - 1);
}

static bool landlock_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static void landlock_push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

/* Remembers directory NAME made in PARENT_FD, to remove it at the end. */
static void landlock_made_push(struct landlock *l, int parent_fd, const char *name)
{
	struct landlock_made *m;
	struct stat st;
	int fd;

	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return;
	fd = fcntl(parent_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return;
	l->made = xrealloc(l->made, (l->n_made + 1) * sizeof(*l->made));
	m = &l->made[l->n_made++];
	m->parent_fd = fd;
	m->name = xstrdup(name);
	m->dev = st.st_dev;
	m->ino = st.st_ino;
}

/* mkdir -p of ROOT when it lies strictly beneath $HOME (see the comment at
 * the top).  Each component is made with mkdirat relative to its parent's
 * descriptor, never following a symlink planted on the way. */
static void landlock_make_home_root(struct landlock *l, const char *root)
{
	const char *home = getenv("HOME");
	char *real_home, buf[PATH_MAX];
	size_t hl;
	int dfd;

	if (!home || home[0] != '/' || !(real_home = realpath(home, NULL)))
		return;
	hl = strlen(real_home);
	if (strncmp(root, real_home, hl) != 0 || root[hl] != '/' || hl <= 1 ||
	    strlen(root) >= sizeof(buf)) {
		free(real_home);
		return;
	}
	dfd = open(real_home, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(real_home);
	snprintf(buf, sizeof(buf), "%s", root + hl + 1);
	for (char *c = strtok(buf, "/"); c && dfd >= 0; c = strtok(NULL, "/")) {
		int next;

		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			close(dfd);
			return;
		}
		if (mkdirat(dfd, c, 0700) == 0)
			landlock_made_push(l, dfd, c);
		else if (errno != EEXIST)
			break;
		next = openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		dfd = next;
	}
	if (dfd >= 0)
		close(dfd);
}

/* ROOT opened (O_PATH) and its canonical name, read back from the
 * descriptor.  No symbolic link a session could have made is followed
 * (tracer/confine/ownpath.h): a cache root replaced by a link to /etc/cron.d
 * must not have the kernel grant writes there.  -1 when ROOT cannot be
 * opened so (errno set). */
static int landlock_open_root(const struct rules_policy *p, const char *root, char **real)
{
	char link[PATH_MAX];
	int fd = ownpath_open(p, root, O_PATH, 0, link, sizeof(link));

	*real = NULL;
	if (fd < 0) {
		if (fd == -ELOOP && link[0])
			info_msg("landlock: %s not covered: %s is a symbolic link where the policy "
				 "lets a session make names", root, link);
		errno = -fd;
		return -1;
	}
	if (!(*real = ownpath_name(fd))) {
		close(fd);
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* Adds the root of one rule: resolved, granted when it exists.  A missing
 * directory root under $HOME is made first; a missing literal one (a file
 * a rule names) is not: it names a file, not a directory to make. */
static int landlock_add_root(struct landlock *l, const struct rules_policy *p, const char *root,
			     bool literal)
{
	struct landlock_path_beneath_attr pb = { 0 };
	char *real;
	struct stat st;
	int fd, ret = 0;

	fd = landlock_open_root(p, root, &real);
	if (fd < 0 && errno == ENOENT && !literal) {
		landlock_make_home_root(l, root);
		fd = landlock_open_root(p, root, &real);
	}
	if (fd < 0) {
		if (!landlock_has(l->missing, l->n_missing, root))
			landlock_push(&l->missing, &l->n_missing, xstrdup(root));
		return 0;
	}
	if (landlock_has(l->roots, l->n_roots, real)) {
		close(fd);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		if (!landlock_has(l->missing, l->n_missing, root))
			landlock_push(&l->missing, &l->n_missing, xstrdup(root));
		goto out;
	}
	pb.parent_fd = fd;
	pb.allowed_access = S_ISDIR(st.st_mode) ? landlock_dir_rights(l->abi) :
			    landlock_file_rights(l->abi);
	if (landlock_sys_add(l->ruleset_fd, &pb) < 0)
		ret = -errno;
	close(fd);
	if (ret == 0) {
		l->root_is_dir = xrealloc(l->root_is_dir, (l->n_roots + 1) * sizeof(bool));
		l->root_is_dir[l->n_roots] = S_ISDIR(st.st_mode);
		landlock_push(&l->roots, &l->n_roots, real);
		real = NULL;
	}
out:
	free(real);
	return ret;
}

static int landlock_build(struct landlock *l, const struct rules_policy *p)
{
	struct landlock_ruleset_attr attr = { 0 };
	static const enum rules_action actions[] = { RULES_ACTION_ALLOW, RULES_ACTION_ALERT };

	attr.handled_access_fs = landlock_dir_rights(l->abi);
	/* Only the first field: the size every ABI understands. */
	l->ruleset_fd = landlock_sys_create(&attr, sizeof(attr.handled_access_fs), 0);
	if (l->ruleset_fd < 0)
		return -errno;
	for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++) {
		const struct rules_span *sp = &p->span[RULES_KIND_WRITE][actions[a]];

		for (uint32_t i = 0; i < sp->count; i++) {
			const struct rules_rule *r = rules_rule_at(p, sp->first + i);
			bool literal;
			char *root = landlock_root_of(rules_string(p, r->pat.text), r->pat.prefix_len,
						      &literal);
			int e;

			if (!root)
				continue;
			e = landlock_add_root(l, p, root, literal);
			free(root);
			if (e < 0)
				return e;
		}
	}
	return 0;
}

static void landlock_say(const struct landlock *l)
{
	char buf[2048];
	size_t n = 0;

	for (size_t i = 0; i < l->n_roots && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", l->roots[i]);
	info_msg("landlock: ABI %d, writes allowed by the kernel only beneath: %s", l->abi, buf);
	if (l->n_missing) {
		n = 0;
		for (size_t i = 0; i < l->n_missing && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
					      l->missing[i]);
		info_msg("landlock: not covered (did not exist at start, writes there are refused): %s",
			 buf);
	}
}

int landlock_setup(struct session *s)
{
	enum options_landlock want = s->opt->landlock;
	struct landlock *l;
	int abi, e;

	s->landlock = NULL;
	if (want == OPTIONS_LANDLOCK_OFF) {
		info_msg("landlock: off (--landlock off)");
		return AT_GO_ON;
	}
	if (s->preload_only) {
		/* Without the supervisor nothing would explain the kernel's
		 * refusals (no outside-roots or race records). */
		if (want == OPTIONS_LANDLOCK_ON) {
			error_msg("--landlock on needs the ptrace backend");
			return AT_EXIT_FAILURE;
		}
		info_msg("landlock: not used with the preload backend alone");
		return AT_GO_ON;
	}
	if (s->policy->mode == RULES_MODE_AUDIT) {
		/* Audit mode lets every write through; a kernel refusal would
		 * change what the command does. */
		if (want == OPTIONS_LANDLOCK_ON) {
			error_msg("--landlock on cannot be used in audit mode "
				"(audit lets every write through)");
			return AT_EXIT_FAILURE;
		}
		info_msg("landlock: not used in audit mode");
		return AT_GO_ON;
	}
	abi = probe_landlock_abi();
	if (abi <= 0) {
		if (want == OPTIONS_LANDLOCK_ON) {
			error_msg("--landlock on: Landlock is not available "
				"on this kernel: %s", strerror(-abi));
			hint_msg("Landlock needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK and "
				 "\"landlock\" in the lsm= boot list; --landlock auto runs without it");
			return AT_EXIT_FAILURE;
		}
		info_msg("landlock: not available on this kernel (%s); the supervisor alone "
			 "enforces the write rules", strerror(-abi));
		return AT_GO_ON;
	}
	if (abi < 2 && want == OPTIONS_LANDLOCK_AUTO) {
		/* ABI 1 refuses every rename or link across directories
		 * (no LANDLOCK_ACCESS_FS_REFER): too many programs break. */
		info_msg("landlock: ABI 1 only (no cross-directory rename); not used "
			 "(--landlock on forces it)");
		return AT_GO_ON;
	}
	l = xcalloc(1, sizeof(*l));
	l->abi = abi;
	e = landlock_build(l, s->policy);
	if (e < 0) {
		landlock_free(l);
		if (want == OPTIONS_LANDLOCK_ON) {
			error_msg("--landlock on: cannot build the ruleset: %s",
				strerror(-e));
			return AT_EXIT_FAILURE;
		}
		warn_msg("landlock: cannot build the ruleset (%s); running without it",
			 strerror(-e));
		return AT_GO_ON;
	}
	s->landlock = l;
	landlock_say(l);
	return AT_GO_ON;
}

int landlock_child_apply(const struct session *s)
{
	int fd;

	if (!s->landlock || s->landlock->ruleset_fd < 0)
		return 0;
	fd = s->landlock->ruleset_fd;
	if (landlock_sys_restrict(fd) < 0)
		return -errno;
	close(fd);
	return 0;
}

bool landlock_covers(const struct landlock *l, const char *path)
{
	if (!l)
		return true;
	for (size_t i = 0; i < l->n_roots; i++) {
		const char *r = l->roots[i];
		size_t n = strlen(r);

		if (!l->root_is_dir[i]) {
			if (strcmp(path, r) == 0)
				return true;
			continue;
		}
		if (n == 1 && r[0] == '/')
			return true;
		/* Strictly beneath: creating or removing the root itself
		 * needs the right on its parent. */
		if (strncmp(path, r, n) == 0 && path[n] == '/' && path[n + 1])
			return true;
	}
	return false;
}

bool landlock_governs(const char *name)
{
	static const char *const names[] = {
		"open", "openat", "openat2", "creat", "truncate", "mkdir", "mkdirat",
		"mknod", "mknodat", "unlink", "unlinkat", "rmdir", "rename", "renameat",
		"renameat2", "link", "linkat", "symlink", "symlinkat", "bind",
	};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool landlock_creates_only(const char *name)
{
	static const char *const names[] = {
		"mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* An O_TMPFILE open names the directory its unnamed file is made in: the
 * file lies beneath that directory, so Landlock lets it through when the
 * directory is a granted root or lies beneath one (the file gets a name
 * only by linkat(2), which is judged and governed on that name). */
static bool landlock_covers_tmpfile(const struct landlock *l, const char *dir)
{
	for (size_t i = 0; i < l->n_roots; i++)
		if (l->root_is_dir[i] && strcmp(dir, l->roots[i]) == 0)
			return true;
	return landlock_covers(l, dir);
}

int landlock_uncovered(const struct session *s, const struct call *c)
{
	bool is_open;

	if (!s->landlock || !landlock_governs(c->name))
		return -1;
	is_open = strncmp(c->name, "open", 4) == 0 || strcmp(c->name, "creat") == 0;
	for (size_t i = 0; i < c->n_events && i < 2; i++) {
		const char *p = c->events[i].path;
		struct stat st;

		if (c->events[i].kind != RULES_KIND_WRITE || !p || landlock_covers(s->landlock, p))
			continue;
		if (is_open && (c->flags & SYSCALL_TMPFILE_BIT) &&
		    landlock_covers_tmpfile(s->landlock, p))
			continue;
		/* A call that only creates fails with EEXIST on an existing
		 * name before any security hook runs (mkdir -p walks every
		 * ancestor): the kernel's answer, not Landlock's.  So does an
		 * open without O_CREAT of a missing name, with ENOENT. */
		if (landlock_creates_only(c->name) && lstat(p, &st) == 0)
			continue;
		if (is_open && syscall_open_missing(c->flags, p))
			continue;
		return (int)i;
	}
	return -1;
}

int landlock_abi_in_force(const struct landlock *l)
{
	return l ? l->abi : 0;
}

/* The directories made at start, deepest first: removed when they are
 * still the very directory made (a command may have replaced it) and
 * empty (rmdir fails otherwise: what the command put there stays, and so
 * does the directory).  unlinkat() never follows a link, and each name
 * is taken relative to the descriptor of the directory it was made in. */
static void landlock_unmake(struct landlock *l)
{
	for (size_t i = l->n_made; i-- > 0;) {
		struct landlock_made *m = &l->made[i];
		struct stat st;

		if (fstatat(m->parent_fd, m->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_dev == m->dev && st.st_ino == m->ino &&
		    unlinkat(m->parent_fd, m->name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY &&
		    errno != EEXIST)
			debug_msg("landlock: cannot remove %s made at start: %s", m->name,
				  strerror(errno));
		close(m->parent_fd);
		free(m->name);
	}
	free(l->made);
	l->made = NULL;
	l->n_made = 0;
}

void landlock_free(struct landlock *l)
{
	if (!l)
		return;
	landlock_unmake(l);
	if (l->ruleset_fd >= 0)
		close(l->ruleset_fd);
	for (size_t i = 0; i < l->n_roots; i++)
		free(l->roots[i]);
	for (size_t i = 0; i < l->n_missing; i++)
		free(l->missing[i]);
	free(l->roots);
	free(l->root_is_dir);
	free(l->missing);
	free(l);
}

/* ---- the race detector ---- */

/* In-flight checks: one per task at most, and few tasks are ever inside
 * an allowed write at once; when the slots are full a call goes
 * unchecked (Landlock still refuses it, only the record is missed). */
#define LANDLOCK_RACE_SLOTS 64
/* A racing loop retries; its first records say all there is to say. */
#define LANDLOCK_RACE_RECORDS 20

struct landlock_race {
	pid_t tid;                /* 0: free */
	long nr;
	bool is_open;
	unsigned n;
	unsigned long ptr[2];
	uint64_t hash[2];         /* FNV-1a of the path bytes at the check */
};

static struct landlock_race landlock_races[LANDLOCK_RACE_SLOTS];
/* Slots in use: every stop asks landlock_race_armed(), and almost always
 * none is. */
static unsigned landlock_races_used;
static unsigned landlock_race_records;

static struct landlock_race *landlock_race_find(pid_t tid)
{
	for (size_t i = 0; i < LANDLOCK_RACE_SLOTS; i++)
		if (landlock_races[i].tid == tid)
			return &landlock_races[i];
	return NULL;
}

/* More than one thread shares the memory the path was read from: the
 * kernel's thread count of TID's group (/proc/TGID/task has 2 + threads
 * links, fs/proc/base.c proc_task_getattr()), which the task table keeps
 * for every traced group (tracee_group_tasks()).  A task the table does
 * not hold (never at a stop the loop has seen) asks /proc. */
static bool landlock_multithreaded(const struct session *s, pid_t tid)
{
	const struct tracee *t = tracee_find(&s->tasks, tid);
	char p[64];
	struct stat st;

	if (t && t->group)
		return t->group->tasks > 1;
	snprintf(p, sizeof(p), "/proc/%d/task", (int)tid);
	return stat(p, &st) == 0 && st.st_nlink > 3;
}

void landlock_race_arm(struct session *s, pid_t tid, const struct call *c)
{
	static char buf[PATH_MAX];
	const struct syscall_entry *e;
	struct landlock_race *r;

	if (c->audit_arch != arch_native() || c->x32 || !landlock_governs(c->name))
		return;
	e = syscall_lookup(c->nr);
	if (!e || !landlock_multithreaded(s, tid))
		return;
	r = landlock_race_find(tid);
	if (!r) {
		r = landlock_race_find(0);
		if (!r)
			return;
		landlock_races_used++;
	}
	memset(r, 0, sizeof(*r));
	r->nr = c->nr;
	r->is_open = strncmp(c->name, "open", 4) == 0 || strcmp(c->name, "creat") == 0;
	for (unsigned i = 0; i < e->n_paths && i < 2; i++) {
		long len;

		if (!e->paths[i].name)
			continue;
		r->ptr[r->n] = c->args[e->paths[i].name - 1];
		len = mem_read_string(tid, r->ptr[r->n], buf, sizeof(buf));
		r->hash[r->n] = len < 0 ? 0 : hash_fnv1a(buf, (size_t)len);
		r->n++;
	}
	r->tid = tid;
}

bool landlock_race_armed(pid_t tid)
{
	return landlock_races_used > 0 && tid > 0 && landlock_race_find(tid) != NULL;
}

static void landlock_race_free(struct landlock_race *r)
{
	r->tid = 0;
	landlock_races_used--;
}

void landlock_race_forget(pid_t tid)
{
	struct landlock_race *r;

	if (landlock_races_used == 0 || tid <= 0)
		return;
	r = landlock_race_find(tid);
	if (r)
		landlock_race_free(r);
}

static bool landlock_race_changed(pid_t tid, const struct landlock_race *r)
{
	static char buf[PATH_MAX];

	for (unsigned i = 0; i < r->n; i++) {
		long len = mem_read_string(tid, r->ptr[i], buf, sizeof(buf));

		if ((len < 0 ? 0 : hash_fnv1a(buf, (size_t)len)) != r->hash[i])
			return true;
	}
	return false;
}

static void landlock_race_record(struct session *s, struct tracee *t, const char *syscall,
				 const char *path, bool refused)
{
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct judge_call c = { .syscall = syscall, .events = &ev, .n_events = 1 };
	struct judge_verdict v;
	struct judge_who w;

	if (landlock_race_records++ >= LANDLOCK_RACE_RECORDS) {
		/* Counted, not recorded: see LANDLOCK_RACE_RECORDS. */
		session_count(s, SESSION_KIND_WRITE, refused ? RULES_ACTION_DENY : RULES_ACTION_ALERT,
			      refused ? "landlock.race" : "race.toctou");
		return;
	}
	if (refused)
		judge_own(&v, SESSION_KIND_WRITE, 0, RULES_ACTION_DENY, "landlock.race",
			  "the path changed after the supervisor's check (another thread "
			  "rewrote it): the kernel's Landlock backstop refused the call", EACCES);
	else
		judge_own(&v, SESSION_KIND_WRITE, 0, RULES_ACTION_ALERT, "race.toctou",
			  "the path changed after the supervisor's check (another thread "
			  "rewrote it): the write reached a path the policy denies", 0);
	judge_who_of_task(&w, t);
	/* The call has returned: its stop is over, nothing to unwind. */
	w.stopped_tid = 0;
	judge_record(s, &w, &c, &v);
}

void landlock_race_exit(struct session *s, struct tracee *t)
{
	struct landlock_race *r;
	struct __ptrace_syscall_info info;
	struct landlock_race copy;
	char name[32];

	if (landlock_races_used == 0 || t->pid <= 0)
		return;
	r = landlock_race_find(t->pid);
	if (!r)
		return;
	copy = *r;
	landlock_race_free(r);
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->pid, (void *)sizeof(info), &info) < 0 ||
	    info.op != PTRACE_SYSCALL_INFO_EXIT)
		return;
	{
		const struct syscall_entry *e = syscall_lookup(copy.nr);

		snprintf(name, sizeof(name), "%s", e && e->name ? e->name : "write");
	}
	if (copy.is_open && !info.exit.is_error) {
		/* Precise: what the descriptor really is. */
		char link[64], path[PATH_MAX];
		struct rules_event ev = { 0 };
		struct rules_verdict v;
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/fd/%lld", (int)t->pid,
			 (long long)info.exit.rval);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0 || path[0] != '/')
			return;
		path[n] = 0;
		ev.kind = RULES_KIND_WRITE;
		ev.path = path;
		if (rules_decide(s->policy, &ev, &v) == 0 && v.action == RULES_ACTION_DENY)
			landlock_race_record(s, t, name, path, false);
		return;
	}
	if (info.exit.is_error && info.exit.rval == -EACCES && s->landlock &&
	    landlock_race_changed(t->pid, &copy)) {
		static char now[PATH_MAX];

		if (mem_read_string(t->pid, copy.ptr[0], now, sizeof(now)) < 0)
			snprintf(now, sizeof(now), "?");
		landlock_race_record(s, t, name, now, true);
	}
}
