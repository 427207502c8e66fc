/* agenttrace --doctor (tracer/doctor.h).  Every fact comes from the
 * probes a session itself uses (tracer/syscall/probe.h), or from doing
 * what a session does (a cgroup made and removed), so that what it says
 * a session will use is what a session uses; the test knobs that bend
 * the probes bend it too. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "tracer/confine/cgroup.h"
#include "tracer/doctor.h"
#include "tracer/syscall/probe.h"

#define DOCTOR_COL 32

static void doctor_line(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void doctor_line(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("  %-*s ", DOCTOR_COL, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *doctor_yes(bool v)
{
	return v ? "yes" : "no";
}

static void doctor_kernel(int landlock, int cg_version, const char *controllers, int scope,
			  int ptrace_err, int userns_err)
{
	char buf[256];

	printf("Kernel features:\n");
	doctor_line("seccomp user notification", "%s%s", doctor_yes(probe_notify()),
		    probe_notify() ? "" : " (needs Linux 5.6: the continue answer and pidfd_getfd)");
	doctor_line("  sync wake-up", "%s%s", doctor_yes(probe_notify_sync()),
		    probe_notify_sync() ? "" : " (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6)");
	doctor_line("  ADDFD", "%s%s", doctor_yes(probe_notify_addfd()),
		    probe_notify_addfd() ? "" : " (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.14)");
	doctor_line("  wait-killable", "%s%s", doctor_yes(probe_notify_wait_killable()),
		    probe_notify_wait_killable() ? "" :
		    " (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19)");
	if (landlock > 0) {
		snprintf(buf, sizeof(buf), "ABI %d", landlock);
		doctor_line("Landlock", "%s", buf);
	} else {
		doctor_line("Landlock", "no (%s)", strerror(-landlock));
	}
	if (cg_version) {
		snprintf(buf, sizeof(buf), "v%d, controllers: ", cg_version);
		doctor_line("cgroup", "%s%s", buf, *controllers ? controllers : "none");
	} else {
		doctor_line("cgroup", "none mounted");
	}
	if (scope >= 0) {
		static const char *const scopes[] = { "classic", "a process's descendants only",
						      "admin only", "no attach" };

		snprintf(buf, sizeof(buf), "%d (%s)", scope, scope <= 3 ? scopes[scope] : "?");
		doctor_line("yama ptrace_scope", "%s", buf);
	} else {
		doctor_line("yama ptrace_scope", "none (no yama)");
	}
	doctor_line("ptrace of a child", "%s%s", ptrace_err ? "refused: " : "allowed",
		    ptrace_err ? strerror(-ptrace_err) : "");
	doctor_line("unprivileged user namespaces", "%s%s", userns_err ? "no: " : "yes",
		    userns_err ? strerror(-userns_err) : "");
	doctor_line("pidfd", "%s%s", doctor_yes(probe_pidfd()),
		    probe_pidfd() ? "" : " (pidfd_open, Linux 5.3)");
	doctor_line("openat2", "%s%s", doctor_yes(probe_openat2()),
		    probe_openat2() ? "" : " (Linux 5.6; paths are resolved a component at a time)");
}

/* What mask_setup() would make: the same probe, and for a user that is
 * not root the same try of a user namespace the child would make.  What
 * only the child's mounts find out (a container without CAP_SYS_ADMIN)
 * the session says in its summary. */
static void doctor_masks(void)
{
	bool user = geteuid() != 0;
	const char *why = NULL;
	int r = probe_mask_namespace(user, &why);

	if (r == 0 && user)
		r = probe_userns();
	if (r == 0)
		doctor_line("masks (--mask auto)", "%s: what the policy denies is masked in the "
			    "command's view", user ? "a user namespace (others' files show as "
			    "nobody)" : "a mount namespace");
	else
		doctor_line("masks (--mask auto)", "none, %s: the supervisor's checks alone "
			    "(--mask on exits 125)", why ? why : strerror(-r));
}

static void doctor_session(int landlock, int ptrace_err)
{
	struct cgroup_session cg = { 0 };
	int r;
	char buf[128];

	printf("\nA session here:\n");
	if (ptrace_err)
		doctor_line("backend (auto)", "preload alone, bypassable: ptrace is refused "
			    "(--backend ptrace exits 125)");
	else
		doctor_line("backend (auto)", "ptrace, authoritative (with the preload shim "
			    "for host names)");
	if (probe_notify_preferred())
		doctor_line("engine (auto)", "notify (seccomp user notification%s)",
			    probe_notify_sync() ? " with the sync wake-up" :
			    "; no sync wake-up: a call costs about a ptrace stop");
	else
		doctor_line("engine (auto)", "ptrace (seccomp stops)%s",
			    probe_notify() ? "; --engine notify works, but cannot make a racing "
					     "caller's calls itself on this kernel" :
			    "; --engine notify exits 125");
	if (landlock >= 2) {
		snprintf(buf, sizeof(buf), "%d", landlock);
		doctor_line("Landlock backstop (auto)", "backs the write roots (ABI %s)%s", buf,
			    landlock < 3 ? "; truncate is not covered before ABI 3" : "");
	} else if (landlock == 1) {
		doctor_line("Landlock backstop (auto)", "not used: ABI 1 refuses cross-directory "
			    "renames (--landlock on forces it)");
	} else {
		doctor_line("Landlock backstop (auto)", "none: the supervisor alone enforces the "
			    "write rules (--landlock on exits 125)");
	}
	/* What limits_prepare() would do: a cgroup, made and removed. */
	r = cgroup_open(&cg, 1ull << 40, 1, 1u << 20);
	if (r == 0) {
		snprintf(buf, sizeof(buf), "%d", cg.version);
		doctor_line("--max-memory, --max-cpu", "for the whole session (cgroup v%s)", buf);
		doctor_line("--max-procs N%", "%s", cg.pids_dir ? "a task ceiling the kernel keeps "
			    "(pids controller)" : "not applied: no pids controller here");
		cgroup_close(&cg);
	} else {
		doctor_line("--max-memory, --max-cpu", "for each process (RLIMIT_AS, RLIMIT_CPU): "
			    "no usable cgroup (%s)", strerror(-r));
		doctor_line("--max-procs N%", "%s", "not applied: no usable cgroup");
	}
	doctor_masks();
	if (geteuid() == 0) {
		doctor_line("--private-tmp", "a private /tmp and a fresh TMPDIR");
		doctor_line("--user", "available (agenttrace runs as root)");
	} else {
		doctor_line("--private-tmp", "a fresh TMPDIR only; /tmp stays shared (not root)");
		doctor_line("--user", "not available (needs root)");
	}
}

int doctor_run(void)
{
	struct utsname u;
	char controllers[1024];
	int landlock = probe_landlock_abi();
	int cg_version = probe_cgroup(controllers, sizeof(controllers));
	int scope = probe_ptrace_scope();
	int ptrace_err = probe_ptrace_child();
	int userns_err = probe_userns();

	if (uname(&u) == 0)
		printf("agenttrace %s on %s %s (%s)\n\n", PACKAGE_VERSION, u.sysname, u.release,
		       u.machine);
	doctor_kernel(landlock, cg_version, controllers, scope, ptrace_err, userns_err);
	doctor_session(landlock, ptrace_err);
	return fflush(stdout) == 0 && !ferror(stdout) ? AT_EXIT_OK : AT_EXIT_FAILURE;
}
