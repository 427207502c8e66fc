/* A task's file-system identity, and taking it (tracer/inspect/creds.h). */
#include <errno.h>
#include <linux/capability.h>
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

/* This thread's effective set made EFF (within what it permits). */
static void creds_caps_effective(uint64_t eff)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (!creds_caps_get(d))
		return;
	d[0].effective = (uint32_t)eff & d[0].permitted;
	d[1].effective = (uint32_t)(eff >> 32) & d[1].permitted;
	syscall(SYS_capset, &h, d);
}

void creds_become(const struct creds *cr, struct creds *saved)
{
	struct __user_cap_data_struct d[2];

	saved->fsuid = (uid_t)syscall(SYS_setfsuid, -1);
	saved->fsgid = (gid_t)syscall(SYS_setfsgid, -1);
	saved->n_groups = getgroups(CREDS_GROUPS, saved->groups);
	if (saved->n_groups < 0)
		saved->n_groups = 0;
	saved->cap_eff = creds_caps_get(d) ? d[0].effective | (uint64_t)d[1].effective << 32 : 0;
	if (geteuid() == 0)
		syscall(SYS_setgroups, (size_t)cr->n_groups, cr->groups);
	syscall(SYS_setfsgid, cr->fsgid);
	syscall(SYS_setfsuid, cr->fsuid);
	/* After the fs uid: a change from 0 clears the file capabilities
	 * itself; what is left is cut to the caller's. */
	if (creds_caps_get(d) && ((d[0].effective | (uint64_t)d[1].effective << 32) & ~cr->cap_eff))
		creds_caps_effective((d[0].effective | (uint64_t)d[1].effective << 32) & cr->cap_eff);
}

void creds_restore(const struct creds *saved)
{
	syscall(SYS_setfsuid, saved->fsuid);
	syscall(SYS_setfsgid, saved->fsgid);
	if (geteuid() == 0)
		syscall(SYS_setgroups, (size_t)saved->n_groups, saved->groups);
	creds_caps_effective(saved->cap_eff);
}
