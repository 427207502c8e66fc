/* A task's file-system identity, and taking it (tracer/inspect/creds.h). */
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/inspect/creds.h"
#include "tracer/inspect/proc.h"

/* The four numbers of a "Uid:" or "Gid:" line: real, effective, saved
 * and fs ids. */
static bool creds_ids(const char *text, const char *key, unsigned long out[4])
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	p += strlen(key);
	for (int i = 0; i < 4; i++) {
		out[i] = strtoul(p, &end, 10);
		if (end == p)
			return false;
		p = end;
	}
	return true;
}

int creds_of_task(pid_t tid, struct creds *cr)
{
	char text[16384];
	unsigned long uid[4], gid[4];
	unsigned long long mask, caps;
	const char *g;

	if (proc_read(tid, "status", text, sizeof(text)) < 0)
		return -ESRCH;
	if (!creds_ids(text, "\nUid:", uid) || !creds_ids(text, "\nGid:", gid) ||
	    !proc_status_field(text, "\nUmask:", 8, &mask) ||
	    !proc_status_field(text, "\nCapEff:", 16, &caps))
		return -EPROTO;
	cr->cap_eff = (uint64_t)caps;
	for (int i = 0; i < 3; i++) {
		cr->uid[i] = (uid_t)uid[i];
		cr->gid[i] = (gid_t)gid[i];
	}
	cr->fsuid = (uid_t)uid[3];
	cr->fsgid = (gid_t)gid[3];
	cr->umask = (mode_t)mask;
	cr->n_groups = 0;
	g = strstr(text, "\nGroups:");
	if (g) {
		char *end;

		g += strlen("\nGroups:");
		while (*g != '\n' && *g && cr->n_groups < CREDS_GROUPS) {
			unsigned long v = strtoul(g, &end, 10);

			if (end == g)
				break;
			cr->groups[cr->n_groups++] = (gid_t)v;
			g = end;
		}
	}
	return 0;
}

/* This thread's capability sets (capget(2) of thread 0: the caller). */
static bool creds_caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) == 0;
}

/* This thread's capability sets made D. */
static void creds_caps_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	syscall(SYS_capset, &h, d);
}

static uint64_t creds_caps_effective_of(const struct __user_cap_data_struct d[2])
{
	return d[0].effective | (uint64_t)d[1].effective << 32;
}

/* The supervisor's own identity, as every thread of it has it between
 * two calls made for a caller. */
static struct {
	pthread_once_t once;
	struct creds ids;
	struct __user_cap_data_struct caps[2];
	bool caps_known;
	bool root;
} creds_own = { .once = PTHREAD_ONCE_INIT };

static void creds_own_read(void)
{
	struct creds *o = &creds_own.ids;

	o->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	o->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	o->n_groups = getgroups(CREDS_GROUPS, o->groups);
	if (o->n_groups < 0)
		o->n_groups = 0;
	creds_own.caps_known = creds_caps_get(creds_own.caps);
	o->cap_eff = creds_own.caps_known ? creds_caps_effective_of(creds_own.caps) : 0;
	creds_own.root = geteuid() == 0;
}

void creds_init(void)
{
	pthread_once(&creds_own.once, creds_own_read);
}

static bool creds_same_groups(const struct creds *a, const struct creds *b)
{
	return a->n_groups == b->n_groups &&
	       memcmp(a->groups, b->groups, (size_t)a->n_groups * sizeof(a->groups[0])) == 0;
}

void creds_become(const struct creds *cr, struct creds *saved)
{
	const struct creds *own = &creds_own.ids;
	struct __user_cap_data_struct d[2];
	bool have;

	creds_init();
	*saved = *own;
	saved->changed = 0;
	if (creds_own.root && !creds_same_groups(cr, own)) {
		syscall(SYS_setgroups, (size_t)cr->n_groups, cr->groups);
		saved->changed |= CREDS_CHANGED_GROUPS;
	}
	if (cr->fsgid != own->fsgid) {
		syscall(SYS_setfsgid, cr->fsgid);
		saved->changed |= CREDS_CHANGED_FSGID;
	}
	if (cr->fsuid != own->fsuid) {
		syscall(SYS_setfsuid, cr->fsuid);
		saved->changed |= CREDS_CHANGED_FSUID;
		/* A change from 0 clears the file capabilities itself: what
		 * is left is read again. */
		have = creds_caps_get(d);
	} else {
		memcpy(d, creds_own.caps, sizeof(d));
		have = creds_own.caps_known;
	}
	/* What is left is cut to the caller's. */
	if (have && (creds_caps_effective_of(d) & ~cr->cap_eff)) {
		d[0].effective &= (uint32_t)cr->cap_eff;
		d[1].effective &= (uint32_t)(cr->cap_eff >> 32);
		creds_caps_set(d);
		saved->changed |= CREDS_CHANGED_CAPS;
	}
}

void creds_restore(const struct creds *saved)
{
	if (saved->changed & CREDS_CHANGED_FSUID)
		syscall(SYS_setfsuid, saved->fsuid);
	if (saved->changed & CREDS_CHANGED_FSGID)
		syscall(SYS_setfsgid, saved->fsgid);
	/* The capabilities before the groups, which need CAP_SETGID back;
	 * after the fs uid, whose change back to 0 raises the file
	 * capabilities, maybe more of them than the supervisor had in
	 * effect. */
	if ((saved->changed & (CREDS_CHANGED_CAPS | CREDS_CHANGED_FSUID)) && creds_own.caps_known)
		creds_caps_set(creds_own.caps);
	if (saved->changed & CREDS_CHANGED_GROUPS)
		syscall(SYS_setgroups, (size_t)saved->n_groups, saved->groups);
}
