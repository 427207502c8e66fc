#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/testknob.h"
#include "tracer/syscall/probe.h"

int probe_landlock_abi(void)
{
	static int abi;

	if (abi)
		return abi;
	if (test_knob_set("LANDLOCK_ABI")) {
		long v = test_knob("LANDLOCK_ABI", 0, 0, 1000);

		abi = v > 0 ? (int)v : -EOPNOTSUPP;
		return abi;
	}
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi <= 0)
		abi = errno ? -errno : -EOPNOTSUPP;
	return abi;
}

bool probe_openat2(void)
{
	static int known; /* 0 not yet, 1 yes, -1 no */

	if (!known) {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC };
		long fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

		known = fd >= 0 || errno != ENOSYS ? 1 : -1;
		if (fd >= 0)
			close((int)fd);
	}
	return known > 0;
}

bool probe_syscall_info(void)
{
	/* The kernel's answer needs a stopped tracee; arch_stop_read() falls
	 * back to the registers at its first EIO. */
	return !test_knob_set("REGS_FALLBACK");
}

/* The kernel's release as major * 1000 + minor ("6.18.0-x" -> 6018), 0
 * when it cannot be read. */
static int probe_release(void)
{
	static int release = -1;

	if (release < 0) {
		struct utsname u;
		int major = 0, minor = 0;

		release = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 ?
			  major * 1000 + minor : 0;
	}
	return release;
}

bool probe_notify(void)
{
	static int known; /* 0 not yet, 1 yes, -1 no */

	if (!known) {
		unsigned int action = SECCOMP_RET_USER_NOTIF;

		known = test_knob("NOTIFY", 1, 0, 1) == 1 && probe_release() >= 5006 &&
			syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 1 : -1;
	}
	return known > 0;
}

bool probe_notify_sync(void)
{
	return probe_notify() && test_knob("NOTIFY_SYNC", 1, 0, 1) == 1 && probe_release() >= 6006;
}

bool probe_notify_addfd(void)
{
	return probe_notify() && test_knob("NOTIFY_ADDFD", 1, 0, 1) == 1 &&
	       probe_release() >= 5014;
}

bool probe_notify_wait_killable(void)
{
	return probe_notify() && probe_release() >= 5019;
}

/* A sysctl's number, -1 when the file is not there or holds none. */
static long probe_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int probe_mask_namespace(bool user, const char **why)
{
	*why = NULL;
	if (test_knob("MASK_NS", 1, 0, 1) == 0) {
		*why = "no namespace may be made here (AGENTTRACE_TEST_MASK_NS=0)";
		return -EPERM;
	}
	if (!user)
		return 0;
	if (probe_sysctl("/proc/sys/user/max_user_namespaces") == 0) {
		*why = "user namespaces are disabled (user.max_user_namespaces = 0)";
		return -ENOSPC;
	}
	/* Debian's and Ubuntu's switches for unprivileged users. */
	if (probe_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		*why = "unprivileged user namespaces are disabled "
		       "(kernel.unprivileged_userns_clone = 0)";
		return -EPERM;
	}
	if (probe_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
		*why = "AppArmor gives unprivileged user namespaces no capabilities "
		       "(kernel.apparmor_restrict_unprivileged_userns = 1)";
		return -EPERM;
	}
	return 0;
}
