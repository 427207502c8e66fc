/* The capabilities of a command run as root (caps.h). */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/confine/caps.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define CAPS_BIT(n) ((caps_set)1 << (n))

/* Names by number, as capabilities(7) spells them (without CAP_). */
static const char *const caps_names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
	"setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
	"net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
	"sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
	"audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
	"block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
};
#define CAPS_N (sizeof(caps_names) / sizeof(caps_names[0]))

caps_set caps_default_keep(void)
{
	/* Files: chown, chmod and utime of others' files, set-id bits kept
	 * on write (package installs, `make install`).  Identity: setuid,
	 * setgid (apt's sandbox user, su-like helpers; NO_NEW_PRIVS still
	 * keeps set-id programs from gaining), setpcap (only lowers: the
	 * bounding set below bounds it), setfcap (file capabilities that
	 * packages set on install).  Processes: kill (the session's own,
	 * the filter keeps signals in it).  Network: binding ports below
	 * 1024 (a test server on :80).  sys_chroot (chroot itself is
	 * refused by the filter) and audit_write (PAM-using tools) as a
	 * container runtime grants them. */
	return CAPS_BIT(CAP_CHOWN) | CAPS_BIT(CAP_DAC_OVERRIDE) | CAPS_BIT(CAP_FOWNER) |
	       CAPS_BIT(CAP_FSETID) | CAPS_BIT(CAP_SETUID) | CAPS_BIT(CAP_SETGID) |
	       CAPS_BIT(CAP_SETPCAP) | CAPS_BIT(CAP_SETFCAP) | CAPS_BIT(CAP_KILL) |
	       CAPS_BIT(CAP_NET_BIND_SERVICE) | CAPS_BIT(CAP_SYS_CHROOT) |
	       CAPS_BIT(CAP_AUDIT_WRITE);
}

static int caps_lookup(const char *name, size_t len)
{
	if (len > 4 && strncasecmp(name, "cap_", 4) == 0) {
		name += 4;
		len -= 4;
	}
	for (size_t i = 0; i < CAPS_N; i++)
		if (strlen(caps_names[i]) == len && strncasecmp(caps_names[i], name, len) == 0)
			return (int)i;
	return -1;
}

int caps_parse(const char *list, caps_set *out, char *bad, size_t bad_size)
{
	caps_set set = caps_default_keep();
	const char *p = list;

	if (strcasecmp(list, "all") == 0) {
		*out = CAPS_ALL;
		return 0;
	}
	for (;;) {
		const char *end = strchrnul(p, ',');
		size_t len = (size_t)(end - p);
		int n = caps_lookup(p, len);

		if (n < 0) {
			snprintf(bad, bad_size, "%.*s", (int)(len < 64 ? len : 64), p);
			return -EINVAL;
		}
		set |= CAPS_BIT(n);
		if (!*end)
			break;
		p = end + 1;
	}
	*out = set;
	return 0;
}

void caps_text(caps_set set, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (set == CAPS_ALL) {
		snprintf(buf, size, "all");
		return;
	}
	for (size_t i = 0; i < CAPS_N; i++) {
		int n;

		if (!(set & CAPS_BIT(i)))
			continue;
		n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", caps_names[i]);
		if (n < 0 || (size_t)n >= size - used)
			return;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, size, "none");
}

int caps_drop_child(caps_set keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (keep == CAPS_ALL)
		return 0;
	/* Up to the kernel's last capability: PR_CAPBSET_READ fails past it. */
	for (int cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r < 0)
			break;
		if (r == 1 && !(keep & CAPS_BIT(cap)) &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return -errno;
	}
	/* Kernels before 4.3 have no ambient set: nothing to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		uint32_t k = (uint32_t)(keep >> (32 * i));

		d[i].effective &= k;
		d[i].permitted &= k;
		d[i].inheritable &= k;
	}
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}
