#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/testknob.h"
#include "tracer/inspect/vma.h"
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
	static int known; /* 0 not yet, 1 yes, -1 no */

	/* The kernel's answer needs a stopped tracee; arch_stop_read() falls
	 * back to the registers at its first EIO.  Asked at every stop: the
	 * knob is read once (a getenv() and a snprintf() were 11% of an
	 * allowed stop's instructions). */
	if (!known)
		known = test_knob_set("REGS_FALLBACK") ? -1 : 1;
	return known > 0;
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

bool probe_notify_preferred(void)
{
	return probe_notify_addfd() && probe_notify_wait_killable();
}

bool probe_notify_wait_killable(void)
{
	return probe_notify() && test_knob("NOTIFY_KILLABLE", 1, 0, 1) == 1 &&
	       probe_release() >= 5019;
}

bool probe_procmap_query(void)
{
	static int known; /* 0 not yet, 1 yes, -1 no */

	if (!known) {
		struct vma_procmap_query q = { .size = sizeof(q), .query_addr = (uintptr_t)&known };
		int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

		known = test_knob("PROCMAP_QUERY", 1, 0, 1) == 1 && fd >= 0 &&
			ioctl(fd, VMA_PROCMAP_QUERY, &q) == 0 ? 1 : -1;
		if (fd >= 0)
			close(fd);
	}
	return known > 0;
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

int probe_ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Runs FN in a child and returns 0 when it exits 0, else -(its status),
 * the errno it exits with. */
static int probe_in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn());
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(st))
		return WEXITSTATUS(st) ? -WEXITSTATUS(st) : 0;
	return -ECHILD;
}

static int probe_traceme(void)
{
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ? errno : 0;
}

int probe_ptrace_child(void)
{
	/* PTRACE_TRACEME is the child's own request: it is refused by the
	 * same checks (yama, a seccomp profile, an outer tracer) that would
	 * refuse the supervisor.  The child exits right after, untraced
	 * work being none. */
	return probe_in_child(probe_traceme);
}

static int probe_unshare_user(void)
{
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0))
		return errno;
	return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}

int probe_userns(void)
{
	return probe_in_child(probe_unshare_user);
}

bool probe_pidfd(void)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);

	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

static void probe_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

int probe_cgroup(char *controllers, size_t size)
{
	char line[4096], path[4200];
	FILE *f;
	size_t len = 0;
	int version = 0;

	controllers[0] = 0;
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		/* Unified: the controllers of this process's own cgroup. */
		f = fopen("/proc/self/cgroup", "re");
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0) {
				line[strcspn(line, "\n")] = 0;
				snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cgroup.controllers",
					 strcmp(line + 3, "/") == 0 ? "" : line + 3);
				probe_read_line(path, controllers, size);
			}
		if (f)
			fclose(f);
		return 2;
	}
	f = fopen("/proc/cgroups", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64];
		int hier, n, enabled;

		if (line[0] == '#' || sscanf(line, "%63s %d %d %d", name, &hier, &n, &enabled) != 4 ||
		    !enabled || !hier)
			continue;
		version = 1;
		if (len < size)
			len += (size_t)snprintf(controllers + len, size - len, "%s%s", len ? " " : "",
						name);
	}
	if (f)
		fclose(f);
	return version;
}
