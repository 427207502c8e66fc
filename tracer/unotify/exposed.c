/* Whether a call's judged arguments can change under the supervisor
 * (tracer/unotify/exposed.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "rules/rules.h"
#include "tracer/confine/mask.h"
#include "tracer/inspect/vma.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/session.h"
#include "tracer/syscall/call.h"
#include "tracer/unotify/emulate-internal.h"
#include "tracer/unotify/exposed.h"

#define EXPOSED_INHERITED_MAX 64
#define EXPOSED_CACHE 16
#define EXPOSED_MOUNTINFO_MAX (8u << 20)

/* A regular file the command inherited open for writing. */
struct exposed_file {
	dev_t dev;
	uint64_t ino;
	char *path;
};

/* One mount of the command's view (/proc/TID/mountinfo). */
struct exposed_mount {
	dev_t dev;
	char *root;   /* the directory of its file system it shows */
	char *point;  /* where */
	bool ro;
};

/* A file's answer, by identity: the libraries' constants are asked for
 * again and again. */
struct exposed_fixed {
	dev_t dev;
	uint64_t ino;
	bool fixed;
	bool used;
};

struct exposed {
	struct vma_reader vmas;
	struct exposed_file *inherited;
	size_t n_inherited;
	bool inherited_cut;
	struct exposed_mount *mounts;
	size_t n_mounts;
	int mounts_state; /* 0 not read yet, 1 read, -1 unreadable */
	struct exposed_fixed cache[EXPOSED_CACHE];
	unsigned cache_next;
	char name[PATH_MAX];
};

static struct exposed *exposed_of(struct session *s)
{
	if (!s->exposed) {
		s->exposed = xcalloc(1, sizeof(*s->exposed));
		vma_reader_init(&s->exposed->vmas);
	}
	return s->exposed;
}

void exposed_free(struct session *s)
{
	struct exposed *x = s->exposed;

	if (!x)
		return;
	vma_reader_close(&x->vmas);
	for (size_t i = 0; i < x->n_inherited; i++)
		free(x->inherited[i].path);
	free(x->inherited);
	for (size_t i = 0; i < x->n_mounts; i++) {
		free(x->mounts[i].root);
		free(x->mounts[i].point);
	}
	free(x->mounts);
	free(x);
	s->exposed = NULL;
}

void exposed_note_inherited(struct session *s)
{
	struct exposed *x = exposed_of(s);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d) {
		x->inherited_cut = true;
		return;
	}
	while ((de = readdir(d))) {
		char link[64], path[PATH_MAX];
		int fd = atoi(de->d_name), fdfl, fl;
		struct stat st;
		ssize_t n;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd == dirfd(d))
			continue;
		fdfl = fcntl(fd, F_GETFD);
		fl = fcntl(fd, F_GETFL);
		if (fdfl < 0 || (fdfl & FD_CLOEXEC) || fl < 0 || (fl & O_ACCMODE) == O_RDONLY ||
		    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (x->n_inherited == EXPOSED_INHERITED_MAX) {
			x->inherited_cut = true;
			break;
		}
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		x->inherited = xrealloc(x->inherited, (x->n_inherited + 1) * sizeof(*x->inherited));
		x->inherited[x->n_inherited].dev = st.st_dev;
		x->inherited[x->n_inherited].ino = (uint64_t)st.st_ino;
		x->inherited[x->n_inherited].path = xstrdup(path);
		x->n_inherited++;
	}
	closedir(d);
}

/* ---- the command's mounts ---- */

/* A mountinfo field with its octal escapes (\040 for a space) undone. */
static char *exposed_unescape(const char *f, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (f[i] == '\\' && i + 3 < n && f[i + 1] >= '0' && f[i + 1] <= '3' &&
		    f[i + 2] >= '0' && f[i + 2] <= '7' && f[i + 3] >= '0' && f[i + 3] <= '7') {
			*o++ = (char)((f[i + 1] - '0') * 64 + (f[i + 2] - '0') * 8 + (f[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = f[i];
		}
	}
	*o = '\0';
	return out;
}

/* Whether the comma-separated options OPTS (N bytes) hold "ro". */
static bool exposed_opts_ro(const char *opts, size_t n)
{
	return (n == 2 && strncmp(opts, "ro", 2) == 0) || (n > 2 && strncmp(opts, "ro,", 3) == 0) ||
	       memmem(opts, n, ",ro,", 4) || (n > 3 && strncmp(opts + n - 3, ",ro", 3) == 0);
}

/* One line: "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] - TYPE SOURCE SUPER". */
static bool exposed_mount_line(const char *line, struct exposed_mount *m)
{
	const char *f[6], *dash, *super;
	size_t len[6];
	const char *p = line;
	unsigned maj, min;

	for (int i = 0; i < 6; i++) {
		while (*p == ' ')
			p++;
		f[i] = p;
		while (*p && *p != ' ')
			p++;
		len[i] = (size_t)(p - f[i]);
		if (!len[i])
			return false;
	}
	dash = strstr(p, " - ");
	if (!dash || sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return false;
	super = strrchr(dash + 3, ' ');
	m->dev = makedev(maj, min);
	m->root = exposed_unescape(f[3], len[3]);
	m->point = exposed_unescape(f[4], len[4]);
	m->ro = exposed_opts_ro(f[5], len[5]) || (super && exposed_opts_ro(super + 1, strlen(super + 1)));
	return true;
}

/* The command's mounts, read once (the session cannot mount or make a
 * namespace of its own).  0, or -1 when they cannot be read. */
static int exposed_mounts(struct exposed *x, pid_t tid)
{
	char path[64], *buf, *line, *save = NULL;
	size_t len;

	if (x->mounts_state)
		return x->mounts_state > 0 ? 0 : -1;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)tid);
	if (readfile_at(AT_FDCWD, path, EXPOSED_MOUNTINFO_MAX, &buf, &len, NULL) < 0) {
		x->mounts_state = -1;
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct exposed_mount m;

		if (!exposed_mount_line(line, &m))
			continue;
		x->mounts = xrealloc(x->mounts, (x->n_mounts + 1) * sizeof(*x->mounts));
		x->mounts[x->n_mounts++] = m;
	}
	free(buf);
	x->mounts_state = x->n_mounts ? 1 : -1;
	return x->mounts_state > 0 ? 0 : -1;
}

/* The rest of PATH below DIR ("" for DIR itself, "/..." below it), or
 * NULL when PATH is not DIR or below it. */
static const char *exposed_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path;
	if (strncmp(path, dir, n) != 0 || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

static bool exposed_refused(const struct session *s, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct rules_verdict v;

	return rules_decide(s->policy, &ev, &v) == 0 && v.action == RULES_ACTION_DENY;
}

/* Whether every other name a mount gives the file at NAME (on device DEV)
 * is one the policy refuses: another writable mount of the same file
 * system whose root holds it (a bind mount of the project elsewhere). */
static bool exposed_mount_names_refused(const struct session *s, struct exposed *x, pid_t tid,
					const char *name, dev_t dev)
{
	const struct exposed_mount *at = NULL;
	const char *rest = NULL;
	char inner[PATH_MAX], alias[PATH_MAX];

	if (exposed_mounts(x, tid) < 0)
		return false;
	/* The mount NAME is on: the deepest that holds it, the last of
	 * those (a mount over another hides it). */
	for (size_t i = 0; i < x->n_mounts; i++) {
		const char *r = exposed_below(name, x->mounts[i].point);

		if (r && (!at || strlen(x->mounts[i].point) >= strlen(at->point))) {
			at = &x->mounts[i];
			rest = r;
		}
	}
	if (!at || at->dev != dev)
		return false; /* not where the maps say: nothing can be told */
	if ((size_t)snprintf(inner, sizeof(inner), "%s%s", strcmp(at->root, "/") ? at->root : "",
			     rest) >= sizeof(inner))
		return false;
	if (!inner[0])
		strcpy(inner, "/");
	for (size_t i = 0; i < x->n_mounts; i++) {
		const struct exposed_mount *m = &x->mounts[i];
		const char *r;

		if (m == at || m->dev != dev || m->ro || !(r = exposed_below(inner, m->root)))
			continue;
		if ((size_t)snprintf(alias, sizeof(alias), "%s%s", strcmp(m->point, "/") ? m->point : "",
				     r) >= sizeof(alias))
			return false;
		if (!exposed_refused(s, alias[0] ? alias : "/"))
			return false;
	}
	return true;
}

static bool exposed_inherited(const struct exposed *x, const char *name, dev_t dev, uint64_t ino)
{
	if (x->inherited_cut)
		return true;
	for (size_t i = 0; i < x->n_inherited; i++)
		if ((x->inherited[i].dev == dev && x->inherited[i].ino == ino) ||
		    strcmp(x->inherited[i].path, name) == 0)
			return true;
	return false;
}

/* Whether the pages of the file at NAME (device DEV, inode INO) stay as
 * they are (exposed.h). */
static bool exposed_file_fixed(struct session *s, struct exposed *x, pid_t tid, const char *name,
			       dev_t dev, uint64_t ino)
{
	struct exposed_fixed *e;
	struct stat st;
	int view;
	bool fixed;

	for (unsigned i = 0; i < EXPOSED_CACHE; i++)
		if (x->cache[i].used && x->cache[i].dev == dev && x->cache[i].ino == ino)
			return x->cache[i].fixed;
	view = mask_view_fd(s, tid);
	fixed = !exposed_inherited(x, name, dev, ino) && exposed_refused(s, name) &&
		(view >= 0 || view == AT_FDCWD) &&
		fstatat(view, view == AT_FDCWD ? name : name + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		st.st_dev == dev && (uint64_t)st.st_ino == ino && st.st_nlink == 1 &&
		exposed_mount_names_refused(s, x, tid, name, dev);
	e = &x->cache[x->cache_next++ % EXPOSED_CACHE];
	*e = (struct exposed_fixed){ .dev = dev, .ino = ino, .fixed = fixed, .used = true };
	return fixed;
}

/* Whether SP's bytes in the process of task TID lie where another process
 * can change them; true when that cannot be told. */
static bool exposed_span(struct session *s, struct exposed *x, pid_t tgid, pid_t tid,
			 const struct call_span *sp)
{
	unsigned long addr = sp->addr, end = sp->addr + sp->len;

	if (end < addr)
		return true;
	while (addr < end) {
		struct vma_region v;

		if (vma_at(&x->vmas, tgid, addr, &v, x->name, sizeof(x->name)) < 0)
			return true;
		if (v.kind == VMA_UNMAPPED)
			return false; /* the kernel's own read faults */
		if (v.kind == VMA_SHARED ||
		    (v.kind == VMA_FILE && !exposed_file_fixed(s, x, tid, x->name, v.dev, v.ino)))
			return true;
		addr = v.end;
	}
	return false;
}

bool exposed_can_race(struct session *s, const struct tracee *t, const struct call *c)
{
	struct exposed *x;

	if (t->group && (t->group->tasks > 1 || tracee_shares(t->group)))
		return true;
	if (c->spans_cut)
		return true;
	x = exposed_of(s);
	for (unsigned i = 0; i < c->n_spans; i++)
		if (exposed_span(s, x, t->tgid, t->pid, &c->spans[i]))
			return true;
	return false;
}
