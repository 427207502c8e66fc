/* The command's masks: the decision, the namespace and the mounts
 * (mask.h; the set itself is mask-plan.c's). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/testknob.h"
#include "lib/xalloc.h"
#include "tracer/confine/mask.h"
#include "tracer/syscall/probe.h"

/* Where the child's setup stopped (its report). */
enum mask_stage {
	MASK_STAGE_DONE = 0,
	MASK_STAGE_UNSHARE,
	MASK_STAGE_MAPS,
	MASK_STAGE_PROPAGATION,
	MASK_STAGE_SOURCE,
	MASK_STAGE_MOUNT,
};

struct mask_report {
	int ns;           /* enum mask_ns: what was made */
	int stage;        /* enum mask_stage of the first failure */
	int err;          /* its errno */
	int first_failed; /* the entry of the first failed mount, -1 */
	unsigned applied;
	unsigned failed;
};

const char *mask_ns_name(enum mask_ns ns)
{
	return ns == MASK_NS_MOUNT ? "mount" : ns == MASK_NS_USER ? "user" : NULL;
}

bool mask_in_force(const struct mask *m)
{
	return m && m->ns != MASK_NS_NONE && m->applied > 0;
}

bool mask_complete(const struct mask *m)
{
	return mask_in_force(m) && !m->truncated && !m->failed;
}

bool mask_guards_reads(struct mask *m, const struct rules_policy *p)
{
	if (!mask_complete(m) || m->read_inexact)
		return false;
	if (m->read_alerts < 0)
		m->read_alerts = mask_plan_read_alerts_exist(p);
	return !m->read_alerts;
}

void mask_reads_named(struct mask *m, const struct rules_policy *p, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_READ, .path = path };
	struct rules_verdict v;

	/* Before the look as well: the call may land after it. */
	if (m && m->read_alerts != 1 && path && path[0] && rules_decide(p, &ev, &v) == 0 &&
	    v.action == RULES_ACTION_ALERT)
		m->read_alerts = 1;
}

bool mask_reads_unsettled(const struct mask *m)
{
	return m && m->read_alerts != 1;
}

void mask_reads_arrived(struct mask *m, const struct rules_policy *p, const char *path)
{
	struct stat st;

	if (m && m->read_alerts == 0 && path && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    rules_read_alert_reach(p, path))
		m->read_alerts = -1;
}

static void mask_why(struct mask *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mask_why(struct mask *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
}

static struct mask *mask_new(void)
{
	struct mask *m = xcalloc(1, sizeof(*m));

	m->status_fd[0] = m->status_fd[1] = -1;
	m->view_fd = -1;
	m->read_alerts = -1;
	return m;
}

static void mask_say_plan(const struct mask *m)
{
	for (size_t i = 0; i < m->n; i++)
		debug_msg("mask: %s %s%s%s", m->v[i].kind == MASK_PIN ? "pin" :
			  m->v[i].kind == MASK_READONLY ? "read-only" :
			  m->v[i].kind == MASK_EMPTY_DIR ? "empty directory over" : "empty file over",
			  m->v[i].path, m->v[i].rule[0] ? " by " : "", m->v[i].rule);
	if (m->truncated)
		info_msg("masks: the plan reached its bounds (doc/INTERNALS.md, \"Masks\"): "
			 "some denied objects stay the supervisor's alone");
}

int mask_setup(struct session *s)
{
	enum options_mask want = s->opt->mask;
	bool root = geteuid() == 0;
	const char *why = NULL;
	struct mask *m;
	char *proj;
	int r;

	s->mask = NULL;
	if (s->policy->mode == RULES_MODE_AUDIT && want == OPTIONS_MASK_ON) {
		error_msg("--mask on cannot be used in audit mode (audit lets every call through)");
		return AT_EXIT_FAILURE;
	}
	/* The plan is made whether or not masks are: the denied files it
	 * finds with other names are the supervisor's to know (linked.h). */
	m = mask_new();
	proj = realpath(s->opt->root ? s->opt->root : s->cwd, NULL);
	mask_plan(m, s->policy, proj ? proj : "", &s->linked);
	free(proj);
	/* The shim's copy is written before the command starts: nothing to
	 * overlap there. */
	if (!s->preload_only)
		linked_start(&s->linked);
	if (want == OPTIONS_MASK_OFF || s->policy->mode == RULES_MODE_AUDIT) {
		/* Audit lets every call through: a mask would change what the
		 * command sees. */
		info_msg(want == OPTIONS_MASK_OFF ? "masks: off (--mask off)" :
						    "masks: not used in audit mode");
		mask_free(m);
		return AT_GO_ON;
	}
	s->mask = m;
	mask_say_plan(m);
	if (!m->n) {
		/* No namespace to pay for. */
		mask_why(m, "nothing the policy denies exists here");
		info_msg("masks: none needed (%s)", m->why);
		return AT_GO_ON;
	}
	r = probe_mask_namespace(!root, &why);
	if (r < 0) {
		mask_why(m, "%s", why);
		if (want == OPTIONS_MASK_ON) {
			error_msg("--mask on: %s", why);
			hint_msg("--mask auto runs without the masks (the supervisor's checks "
				 "still hold; a second process can race them)");
			return AT_EXIT_FAILURE;
		}
		info_msg("masks: none (%s); the supervisor's checks alone guard the %u denied "
			 "objects, which a second process can race", why, m->n_read + m->n_write);
		return AT_GO_ON;
	}
	m->want = root ? MASK_NS_MOUNT : MASK_NS_USER;
	/* Where the namespace is made but refuses every mount (a
	 * container's seccomp profile, Ubuntu's restricted unprivileged user
	 * namespaces): only the child finds out. */
	m->no_mount = test_knob("MASK_MOUNT", 1, 0, 1) == 0;
	m->uid = geteuid();
	m->gid = getegid();
	return AT_GO_ON;
}

int mask_spawn_prepare(struct session *s)
{
	struct mask *m = s->mask;

	if (!m || m->want == MASK_NS_NONE)
		return 0;
	if (pipe2(m->status_fd, O_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* ---- in the child (no allocation: a fork of agenttrace) ---- */

static int mask_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n, len = (ssize_t)strlen(text);

	if (fd < 0)
		return -errno;
	n = write(fd, text, (size_t)len);
	if (n != len) {
		int e = n < 0 ? errno : EIO;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

/* The user namespace's one mapping: the user to itself, so that files
 * keep their owner; setgroups is denied, as the kernel requires of an
 * unprivileged gid_map. */
static int mask_maps(const struct mask *m)
{
	char line[64];
	int r;

	r = mask_write_file("/proc/self/setgroups", "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(line, sizeof(line), "%u %u 1", (unsigned)m->uid, (unsigned)m->uid);
	r = mask_write_file("/proc/self/uid_map", line);
	if (r < 0)
		return r;
	snprintf(line, sizeof(line), "%u %u 1", (unsigned)m->gid, (unsigned)m->gid);
	return mask_write_file("/proc/self/gid_map", line);
}

/* Entries replicated into the empty directories, all of them together:
 * names only, the listing of a credential directory stays what it was
 * (agenttrace(1): a listing is not a read). */
#define MASK_MAX_NAMES 4096
#define MASK_MAX_NAME_DEPTH 8

/* The names beneath directory FROM again in TO (both open): directories
 * with their mode, files empty and of mode 0, symlinks with their
 * target; each owned as the original where that may be done.  Nothing
 * of a file's bytes is read. */
static void mask_names(int from, int to, int depth, unsigned *budget)
{
	struct dirent *de;
	int dup_fd = dup(from);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	while ((de = readdir(d)) && *budget > 0) {
		struct stat st;
		char target[PATH_MAX];
		ssize_t n;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(from, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		--*budget;
		if (S_ISDIR(st.st_mode)) {
			int sub_from, sub_to;

			if (mkdirat(to, de->d_name, 0700) < 0)
				continue;
			sub_from = openat(from, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					  O_CLOEXEC);
			sub_to = openat(to, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub_from >= 0 && sub_to >= 0 && depth < MASK_MAX_NAME_DEPTH)
				mask_names(sub_from, sub_to, depth + 1, budget);
			if (sub_from >= 0)
				close(sub_from);
			if (sub_to >= 0)
				close(sub_to);
			(void)fchmodat(to, de->d_name, st.st_mode & 07777, 0);
		} else if (S_ISLNK(st.st_mode)) {
			n = readlinkat(from, de->d_name, target, sizeof(target) - 1);
			if (n < 0)
				continue;
			target[n] = '\0';
			if (symlinkat(target, to, de->d_name) < 0)
				continue;
		} else {
			int fd = openat(to, de->d_name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);

			if (fd < 0)
				continue;
			close(fd);
		}
		(void)fchownat(to, de->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
	}
	closedir(d);
}

/* The source of every empty mask, a detached tmpfs made read-only once
 * filled: "f", an empty file of mode 0 (not even its owner reads it
 * without a capability), and for entry I of M that is an empty
 * directory, "dI" with the names of the directory it masks. */
static int mask_source(const struct mask *m)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	unsigned budget = MASK_MAX_NAMES;
	int fs, mnt, fd;

	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", "1m", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int e = errno;

		close(fs);
		return -e;
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	close(fs);
	if (mnt < 0)
		return -errno;
	/* Closed before the mount is made read-only: a writer would make
	 * that EBUSY. */
	fd = openat(mnt, "f", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;

		close(mnt);
		return -e;
	}
	close(fd);
	for (size_t i = 0; i < m->n; i++) {
		char name[32];
		struct stat st;
		int from, to;

		if (m->v[i].kind != MASK_EMPTY_DIR)
			continue;
		snprintf(name, sizeof(name), "d%zu", i);
		if (mkdirat(mnt, name, 0700) < 0)
			continue;
		from = (int)syscall(SYS_openat2, AT_FDCWD, m->v[i].path, &how, sizeof(how));
		to = openat(mnt, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (from >= 0 && to >= 0 && fstat(from, &st) == 0) {
			mask_names(from, to, 0, &budget);
			(void)fchmod(to, st.st_mode & 07777);
			(void)fchown(to, st.st_uid, st.st_gid);
		}
		if (from >= 0)
			close(from);
		if (to >= 0)
			close(to);
	}
	if (mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0) {
		int e = errno;

		close(mnt);
		return -e;
	}
	return mnt;
}

static int mask_one(const struct mask_entry *e, size_t i, int src)
{
	char name[32];
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS };
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	int target, tree, r = 0;

	target = (int)syscall(SYS_openat2, AT_FDCWD, e->path, &how, sizeof(how));
	if (target < 0)
		return -errno;
	switch (e->kind) {
	case MASK_PIN:
	case MASK_READONLY:
		tree = open_tree(target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
				 AT_RECURSIVE);
		break;
	default:
		if (e->kind == MASK_EMPTY_DIR)
			snprintf(name, sizeof(name), "d%zu", i);
		else
			snprintf(name, sizeof(name), "f");
		tree = open_tree(src, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		break;
	}
	if (tree < 0) {
		r = -errno;
	} else if (e->kind == MASK_READONLY &&
		   mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0) {
		r = -errno;
	} else if (move_mount(tree, "", target, "",
			      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = -errno;
	}
	if (tree >= 0)
		close(tree);
	close(target);
	return r;
}

static void mask_report_send(struct mask *m, const struct mask_report *r)
{
	ssize_t n;

	do
		n = write(m->status_fd[1], r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	close(m->status_fd[1]);
	m->status_fd[1] = -1;
}

void mask_child_apply(struct session *s)
{
	struct mask *m = s->mask;
	struct mask_report r = { .ns = MASK_NS_NONE, .first_failed = -1 };
	int src = -1, e;

	if (!m || m->want == MASK_NS_NONE || m->status_fd[1] < 0)
		return;
	close(m->status_fd[0]);
	m->status_fd[0] = -1;
	if (unshare(m->want == MASK_NS_USER ? CLONE_NEWUSER | CLONE_NEWNS : CLONE_NEWNS) < 0) {
		r.stage = MASK_STAGE_UNSHARE;
		r.err = errno;
		goto out;
	}
	r.ns = m->want;
	if (m->want == MASK_NS_USER && (e = mask_maps(m)) < 0) {
		r.stage = MASK_STAGE_MAPS;
		r.err = -e;
		goto out;
	}
	/* Nothing mounted here may propagate back to the supervisor's view
	 * (systemd makes / shared). */
	if (m->no_mount)
		errno = EPERM;
	if (m->no_mount || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		r.stage = MASK_STAGE_PROPAGATION;
		r.err = errno;
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].kind >= MASK_EMPTY_DIR && src < 0) {
			src = mask_source(m);
			if (src < 0) {
				r.stage = MASK_STAGE_SOURCE;
				r.err = -src;
				goto out;
			}
		}
		e = mask_one(&m->v[i], i, src);
		if (e == -ENOENT)
			continue; /* gone since the plan: nothing to mask */
		if (e < 0) {
			if (!r.failed++) {
				r.stage = MASK_STAGE_MOUNT;
				r.err = -e;
				r.first_failed = (int)i;
			}
			continue;
		}
		if (m->v[i].kind != MASK_PIN)
			r.applied++;
	}
out:
	if (src >= 0)
		close(src);
	mask_report_send(m, &r);
}

/* ---- back in the supervisor ---- */

static const char *mask_stage_text(int stage)
{
	switch (stage) {
	case MASK_STAGE_UNSHARE:
		return "cannot create the namespace";
	case MASK_STAGE_MAPS:
		return "cannot map the user into the user namespace";
	case MASK_STAGE_PROPAGATION:
		return "cannot keep mounts from propagating";
	case MASK_STAGE_SOURCE:
		return "cannot make the empty file system of the masks";
	default:
		return "cannot mount";
	}
}

int mask_child_report(struct session *s)
{
	struct mask *m = s->mask;
	bool on = s->opt->mask == OPTIONS_MASK_ON;
	struct mask_report r;
	unsigned total;
	ssize_t n;

	if (!m || m->status_fd[0] < 0)
		return AT_GO_ON;
	close(m->status_fd[1]);
	m->status_fd[1] = -1;
	do
		n = read(m->status_fd[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(m->status_fd[0]);
	m->status_fd[0] = -1;
	if (n != (ssize_t)sizeof(r)) {
		/* The child died before it could say: spawn.c learns why. */
		memset(&r, 0, sizeof(r));
		r.stage = MASK_STAGE_UNSHARE;
		r.err = EPIPE;
	}
	m->ns = r.ns;
	m->applied = r.applied;
	m->failed = r.failed;
	total = (unsigned)m->n;
	if (r.stage != MASK_STAGE_DONE && r.stage != MASK_STAGE_MOUNT)
		mask_why(m, "%s: %s", mask_stage_text(r.stage), strerror(r.err));
	else if (r.failed && r.first_failed >= 0 && (size_t)r.first_failed < m->n)
		mask_why(m, "%u of %u could not be mounted, first %s: %s", r.failed, total,
			 m->v[r.first_failed].path, strerror(r.err));
	if (m->why[0] && on) {
		error_msg("--mask on: %s", m->why);
		hint_msg("--mask auto runs without what cannot be masked");
		return AT_EXIT_FAILURE;
	}
	if (m->ns == MASK_NS_USER && !m->applied) {
		/* A user namespace changes what the command sees (owners of
		 * others' files as nobody); without a mask it buys nothing. */
		info_msg("masks: none (%s); starting the command again without a namespace", m->why);
		m->want = MASK_NS_NONE;
		m->ns = MASK_NS_NONE;
		return AT_MASK_RETRY;
	}
	if (!m->applied) {
		m->ns = MASK_NS_NONE;
		info_msg("masks: none (%s); the supervisor's checks alone guard the %u denied "
			 "objects, which a second process can race", m->why, m->n_read + m->n_write);
		return AT_GO_ON;
	}
	info_msg("masks: %u credential%s hidden, %u protected object%s read-only, in a %s "
		 "namespace%s%s", m->n_read, m->n_read == 1 ? "" : "s", m->n_write,
		 m->n_write == 1 ? "" : "s", m->ns == MASK_NS_USER ? "user and mount" : "mount",
		 m->why[0] ? "; " : "", m->why);
	return AT_GO_ON;
}

int mask_view_fd(struct session *s, pid_t tid)
{
	struct mask *m = s->mask;
	char link[64];

	if (!mask_in_force(m))
		return AT_FDCWD;
	if (m->view_fd < 0) {
		snprintf(link, sizeof(link), "/proc/%d/root", (int)tid);
		m->view_fd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (m->view_fd < 0)
			return -errno;
	}
	return m->view_fd;
}

bool mask_covers(const struct mask *m, const char *path)
{
	if (!mask_in_force(m) || !path)
		return false;
	for (size_t i = 0; i < m->n; i++) {
		const struct mask_entry *e = &m->v[i];
		size_t n = strlen(e->path);

		if (strncmp(path, e->path, n) != 0)
			continue;
		if (path[n] == '\0' ||
		    (path[n] == '/' && (e->kind == MASK_EMPTY_DIR || e->kind == MASK_EMPTY_FILE)))
			return true;
	}
	return false;
}

const char *mask_summary_note(const struct mask *m)
{
	static char note[400];

	if (!m || mask_in_force(m) || !m->n)
		return NULL;
	snprintf(note, sizeof(note), "no masks (%s): %u denied object%s guarded by the "
		 "supervisor's checks alone, which a second process can race",
		 m->why, m->n_read + m->n_write, m->n_read + m->n_write == 1 ? "" : "s");
	return note;
}

void mask_free(struct mask *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	for (int i = 0; i < 2; i++)
		if (m->status_fd[i] >= 0)
			close(m->status_fd[i]);
	if (m->view_fd >= 0)
		close(m->view_fd);
	free(m);
}
