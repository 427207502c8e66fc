/* A session's start and end: the policy with the command line's rules and
 * agenttrace's own protections, the log, --user, the shim's channel,
 * Landlock and private /tmp, ceilings; and the teardown of all of it. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/testknob.h"
#include "lib/xalloc.h"
#include "rules/generalise.h"
#include "rules/load.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/shim/channel.h"
#include "tracer/inspect/backtrace.h"
#include "tracer/inspect/pyframes.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/limits.h"
#include "tracer/confine/mask.h"
#include "tracer/confine/ownpath.h"
#include "tracer/confine/privtmp.h"
#include "tracer/session.h"
#include "tracer/record/record.h"
#include "tracer/shim/preload-mode.h"
#include "tracer/start.h"
#include "tracer/project-policy.h"
#include "tracer/syscall/probe.h"
#include "tracer/unotify/listener.h"
#include "tracer/confine/endpoints.h"
#include "tracer/confine/survive.h"
#include "tracer/confine/alerted.h"

/* A literal path as a policy pattern: glob characters escaped, '$'
 * doubled (patterns expand ${VARS}). */
static char *session_literal_pattern(const char *path)
{
	return xnonnull(rules_literal("", path, true, true));
}

/* The absolute form of a path whose last component may not exist yet. */
static char *session_abspath(const char *path)
{
	char *dir, *base, *slash, *rdir, *out;
	char *full, cwd[PATH_MAX];

	full = path[0] == '/' ? xstrdup(path) :
	       xasprintf("%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : ".", path);
	out = realpath(full, NULL);
	if (out) {
		free(full);
		return out;
	}
	slash = strrchr(full, '/');
	base = slash + 1;
	dir = slash == full ? xstrdup("/") : xstrndup(full, (size_t)(slash - full));
	rdir = realpath(dir, NULL);
	out = rdir ? xasprintf("%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base) : xstrdup(full);
	free(rdir);
	free(dir);
	free(full);
	return out;
}

static bool session_is_policy_file(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

struct session_extras {
	struct rules_extra *v;
	size_t n;
	char **owned; /* strings to free */
	size_t n_owned;
};

static void session_extra(struct session_extras *x, enum rules_kind kind,
			  enum rules_action action, const char *pattern, const char *id,
			  const char *why)
{
	x->v = xrealloc(x->v, (x->n + 1) * sizeof(*x->v));
	x->v[x->n++] = (struct rules_extra){ kind, action, pattern, id, why };
}

static const char *session_own(struct session_extras *x, char *s)
{
	x->owned = xrealloc(x->owned, (x->n_owned + 1) * sizeof(*x->owned));
	x->owned[x->n_owned++] = s;
	return s;
}

static void session_extras_free(struct session_extras *x)
{
	for (size_t i = 0; i < x->n_owned; i++)
		free(x->owned[i]);
	free(x->owned);
	free(x->v);
}

/* The shim and the run dir that hands it the policy (channel.c). */
static void session_protect_preload(struct session *s, struct session_extras *x)
{
	char *lib, *pat;

	if (s->run_dir) {
		pat = session_literal_pattern(s->run_dir);
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, xasprintf("%s/**", pat)), "write.agenttrace-run",
			      "the policy handed to the preload shim is agenttrace's");
		free(pat);
	}
	lib = s->preload_lib ? realpath(s->preload_lib, NULL) : NULL;
	if (lib)
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, session_literal_pattern(lib)), "write.agenttrace-preload",
			      "the preload shim may not be changed from inside the session");
	free(lib);
}

/* The project policy's name, whether there is one or not, and the file
 * it leads to: a session must not write the policy of the next one
 * (agenttrace(1), PROJECT POLICY). */
static void session_protect_project(struct session *s, struct session_extras *x,
				    const char *project_root)
{
	char *lit = session_abspath(project_root), *name, *real;

	name = xasprintf("%s/%s", strcmp(lit, "/") == 0 ? "" : lit, PROJECT_POLICY_NAME);
	session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
		      session_own(x, session_literal_pattern(name)), "write.agenttrace-project-policy",
		      "the project's policy may not be written from inside a session");
	real = s->project_policy ? realpath(s->project_policy, NULL) : NULL;
	if (real && strcmp(real, name) != 0)
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, session_literal_pattern(real)),
			      "write.agenttrace-project-policy-file",
			      "the project's policy may not be written from inside a session");
	free(real);
	free(name);
	free(lit);
}

/* doc/THREAT-MODEL.md: nothing inside the session can switch the supervision off, so
 * the log, the policy files and agenttrace's own binary are protected
 * from the command by deny rules of their own. */
static void session_protect(struct session *s, struct session_extras *x, const char *log_abs,
			    const char *project_root)
{
	struct options *o = s->opt;
	unsigned n_policy = 0;
	struct stat st;

	/* A log that is a device (--log /dev/null to keep none, a terminal)
	 * is no file a record could be forged in: the command may write
	 * there as it would without agenttrace. */
	if (log_abs && !(stat(log_abs, &st) == 0 && S_ISCHR(st.st_mode)))
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, session_literal_pattern(log_abs)),
			      "write.agenttrace-log",
			      "the session log is written by agenttrace only");
	for (size_t i = 0; i < o->policies.n; i++) {
		char *abs;

		if (!session_is_policy_file(o->policies.v[i]))
			continue;
		abs = realpath(o->policies.v[i], NULL);
		if (!abs)
			continue; /* the loader reports the missing file */
		n_policy++;
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, session_literal_pattern(abs)),
			      session_own(x, n_policy == 1 ? xstrdup("write.agenttrace-policy") :
					  xasprintf("write.agenttrace-policy-%u", n_policy)),
			      "the policy in force may not be changed from inside the session");
		free(abs);
	}
	session_protect_project(s, x, project_root);
	if (o->evidence) {
		char *dir = session_abspath(o->evidence), *pat = session_literal_pattern(dir);

		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, xasprintf("%s/**", pat)), "write.agenttrace-evidence",
			      "the evidence kept of the session is written by agenttrace only");
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY, session_own(x, pat),
			      "write.agenttrace-evidence-dir",
			      "the evidence kept of the session is written by agenttrace only");
		free(dir);
	}
	if (s->self_exe)
		session_extra(x, RULES_KIND_WRITE, RULES_ACTION_DENY,
			      session_own(x, session_literal_pattern(s->self_exe)),
			      "write.agenttrace-self",
			      "agenttrace's own binary may not be changed from inside the session");
	session_protect_preload(s, x);
}

static int session_load_policy(struct session *s, const char *log_abs)
{
	struct options *o = s->opt;
	struct session_extras x = { 0 };
	struct rules_vars vars;
	struct rules_error err;
	char *root_abs = NULL;
	const char **names;
	size_t n_names = 0;
	int ret = AT_GO_ON;

	if (o->root) {
		struct stat st;

		root_abs = realpath(o->root, NULL);
		if (!root_abs || stat(root_abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
			error_msg("--root %s: %s", o->root,
				root_abs ? "Not a directory" : strerror(errno));
			free(root_abs);
			return AT_EXIT_FAILURE;
		}
	}
	rules_vars_from_env(&vars, root_abs);
	/* The project's policy, checked before anything is loaded. */
	if (!o->no_project_policy) {
		int r = project_policy_find(root_abs ? root_abs : s->cwd, o->trust_project_policy,
					    &s->project_policy);

		if (r != 0 && r != 1) {
			free(root_abs);
			return r;
		}
	}
	for (size_t i = 0; i < o->allow_net.n; i++)
		session_extra(&x, RULES_KIND_NET, RULES_ACTION_ALLOW, o->allow_net.v[i], NULL, NULL);
	for (size_t i = 0; i < o->allow_write.n; i++)
		session_extra(&x, RULES_KIND_WRITE, RULES_ACTION_ALLOW, o->allow_write.v[i], NULL, NULL);
	for (size_t i = 0; i < o->allow_exec.n; i++)
		session_extra(&x, RULES_KIND_EXEC, RULES_ACTION_ALLOW, o->allow_exec.v[i], NULL, NULL);
	for (size_t i = 0; i < o->allow_read.n; i++)
		session_extra(&x, RULES_KIND_READ, RULES_ACTION_ALLOW, o->allow_read.v[i], NULL, NULL);
	session_protect(s, &x, log_abs, root_abs ? root_abs : s->cwd);

	/* A suggested layer extends the policy in force: the last --policy
	 * (which the others, if any, are given before), a file by its
	 * absolute path, since a relative extends is taken from the layer's
	 * own directory. */
	if (!o->policies.n)
		s->suggest_base = xstrdup("default");
	else if (!session_is_policy_file(o->policies.v[o->policies.n - 1]))
		s->suggest_base = xstrdup(o->policies.v[o->policies.n - 1]);
	else
		s->suggest_base = session_abspath(o->policies.v[o->policies.n - 1]);
	if (rules_anchors_set(&s->anchors, vars.root ? vars.root : vars.cwd,
			      vars.tmpdir ? vars.tmpdir : "/tmp", vars.home) < 0) {
		warn_msg("out of memory");
		session_extras_free(&x);
		free(root_abs);
		return AT_EXIT_FAILURE;
	}
	memset(&err, 0, sizeof(err));
	/* The project's policy is the last layer of policy files, over the
	 * --policy layers or the shipped default. */
	names = xcalloc(o->policies.n + 2, sizeof(*names));
	for (size_t i = 0; i < o->policies.n; i++)
		names[n_names++] = o->policies.v[i];
	if (s->project_policy) {
		if (!n_names)
			names[n_names++] = "default";
		names[n_names++] = s->project_policy;
	}
	if (rules_load(names, n_names, x.v, x.n, &vars, &s->policy, &err) < 0) {
		const char *root = vars.root ? vars.root : vars.cwd;
		char line[1536];

		rules_error_format(&err, line, sizeof(line));
		error_msg("%s", line);
		/* Every path lies under a ROOT of "/": the shipped policies'
		 * own tests, which expect a project directory, fail there. */
		if (root && strcmp(root, "/") == 0 && strncmp(err.keypath, "tests", 5) == 0)
			error_msg("ROOT is / (the current directory, or --root): the whole file system "
				  "would be the project; run from the project's directory or give --root DIR");
		ret = AT_EXIT_FAILURE;
	}
	session_extras_free(&x);
	free(names);
	free(root_abs);
	return ret;
}

/* Whether FD, opened by the name the user gave, is the file at PROTECTED
 * (session_abspath(): the name the policy's own rule keeps the command
 * from writing): so it is, unless a name changed between the two looks.
 * Not a regular file (a terminal, a pipe, /dev/null): nothing to keep. */
static bool session_opened_protected(int fd, const char *protected)
{
	struct stat st;
	char *real;
	bool same;

	if (fstat(fd, &st) < 0)
		return false;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return true;
	real = ownpath_name(fd);
	same = real && strcmp(real, protected) == 0;
	free(real);
	return same;
}

/* Whether the last component of PATH ("pkg/", "pkg/." as "pkg") is a
 * symbolic link. */
static bool session_last_is_link(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	struct stat st;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, path, n + 1);
	for (;;) {
		if (n > 1 && buf[n - 1] == '/')
			buf[--n] = '\0';
		else if (n > 2 && buf[n - 1] == '.' && buf[n - 2] == '/')
			buf[n -= 2] = '\0';
		else
			break;
	}
	return lstat(buf, &st) == 0 && S_ISLNK(st.st_mode);
}

/* The project and the temp dir as they were named (--root or the shell's
 * working directory, $TMPDIR): the policy's write roots are where they
 * lead, so a symbolic link on the way that an earlier session could have
 * made (the temp dir renamed and replaced by a link to /usr/local/bin)
 * would make any directory one.  Refused as ownpath.h refuses a log. */
static int session_check_roots(struct session *s)
{
	char cwd[PATH_MAX], link[PATH_MAX];
	const char *named[2] = { s->opt->root, getenv("TMPDIR") };
	const char *what[2] = { "the project", "TMPDIR" };

	if (!named[0] && ownpath_cwd(cwd, sizeof(cwd)))
		named[0] = cwd;
	/* A project that is itself a link: a session rooted above it could
	 * have replaced the directory (a monorepo's package), and the new
	 * policy would not see that name as one a session may make. */
	if (named[0] && session_last_is_link(named[0])) {
		error_msg("the project %s is a symbolic link: give the path it leads to (a "
			  "session rooted above it could have made it)", named[0]);
		return AT_EXIT_FAILURE;
	}
	for (size_t i = 0; i < 2; i++) {
		int fd;

		if (!named[i] || !named[i][0])
			continue;
		fd = ownpath_open(s->policy, named[i], O_PATH | O_DIRECTORY, 0, link, sizeof(link));
		if (fd >= 0) {
			close(fd);
		} else if (fd == -ELOOP && link[0]) {
			error_msg("%s %s: %s is a symbolic link where the policy lets a session make "
				  "names, and the session's write roots would be where it leads (an "
				  "earlier session may have made it): give the path it leads to, or "
				  "remove it", what[i], named[i], link);
			return AT_EXIT_FAILURE;
		}
	}
	return AT_GO_ON;
}

static int session_open_log(struct session *s, const char *log_abs)
{
	char link[PATH_MAX];

	/* O_APPEND: each record is one write() at the end, so that lines of
	 * concurrent writers (two sessions, one log) never interleave.
	 * O_CLOEXEC: the command never holds the log open.  Opened by the
	 * name given, with no link a session could have planted followed
	 * (ownpath.h): LOG_ABS, where such links are followed, is only
	 * the name the policy protects. */
	s->log_fd = ownpath_open(s->policy, s->opt->log,
				 O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK, 0600, link,
				 sizeof(link));
	if (s->log_fd < 0) {
		ownpath_error("cannot open the log", s->opt->log, s->log_fd, link);
		s->log_fd = -1;
		return AT_EXIT_FAILURE;
	}
	/* Opened without waiting (a FIFO no one reads would hold the start
	 * before --timeout is armed: ENXIO), written as any file. */
	if (fcntl(s->log_fd, F_SETFL, O_APPEND) < 0) {
		error_msg("cannot open the log %s: %s", s->opt->log, strerror(errno));
		close(s->log_fd);
		s->log_fd = -1;
		return AT_EXIT_FAILURE;
	}
	if (!session_opened_protected(s->log_fd, log_abs)) {
		error_msg("cannot open the log %s: it changed while it was opened", s->opt->log);
		close(s->log_fd);
		s->log_fd = -1;
		return AT_EXIT_FAILURE;
	}
	return AT_GO_ON;
}

/* A user or group given by name or number. */
static bool session_parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && !*end && *out < (unsigned long)(uid_t)-1;
}

/* --user USER[:GROUP], resolved here (NSS lookups do not belong between
 * fork and exec): uid, primary gid, supplementary groups. */
static int session_resolve_user(struct session *s)
{
	char *spec = xstrdup(s->opt->user), *group = strchr(spec, ':');
	struct passwd *pw;
	unsigned long id;
	int ret = AT_EXIT_FAILURE, n;

	if (group)
		*group++ = 0;
	if (geteuid() != 0) {
		error_msg("--user needs agenttrace to run as root");
		goto out;
	}
	pw = getpwnam(spec);
	if (pw) {
		s->uid = pw->pw_uid;
		s->gid = pw->pw_gid;
	} else if (session_parse_id(spec, &id)) {
		s->uid = (uid_t)id;
		s->gid = (gid_t)id;
	} else {
		error_msg("--user %s: no such user", spec);
		goto out;
	}
	if (group && *group) {
		struct group *gr = getgrnam(group);

		if (gr)
			s->gid = gr->gr_gid;
		else if (session_parse_id(group, &id))
			s->gid = (gid_t)id;
		else {
			error_msg("--user %s: no such group '%s'", s->opt->user,
				group);
			goto out;
		}
	}
	n = 0;
	if (pw) {
		getgrouplist(pw->pw_name, s->gid, NULL, &n);
		s->groups = xcalloc((size_t)n + 1, sizeof(gid_t));
		if (getgrouplist(pw->pw_name, s->gid, s->groups, &n) < 0)
			n = 0;
	}
	if (n <= 0) {
		free(s->groups);
		s->groups = xcalloc(1, sizeof(gid_t));
		s->groups[0] = s->gid;
		n = 1;
	}
	s->n_groups = (size_t)n;
	s->switch_user = true;
	ret = AT_GO_ON;
out:
	free(spec);
	return ret;
}

/* What survives (survive.h): writes beneath ${ROOT} and the temp dirs
 * are the session's business; the rest is listed in the summary. */
static void session_survive_setup(struct session *s)
{
	const char *dirs[] = { s->opt->root ? s->opt->root : s->cwd, getenv("TMPDIR"), "/tmp",
			       "/var/tmp", "/dev/shm" };

	s->survive = survive_new(dirs, sizeof(dirs) / sizeof(dirs[0]));
	s->alerted = xcalloc(1, sizeof(*s->alerted));
	s->endpoints = endpoints_new();
}

/* --engine: user notification where the kernel wakes the supervisor on
 * the caller's CPU (a round trip then costs a fraction of a ptrace stop,
 * doc/INTERNALS.md), else ptrace stops.  Test knob ENGINE=ptrace|notify
 * stands in for --engine when none is given, so that the suite runs under
 * either. */
static int session_pick_engine(struct session *s)
{
	enum options_engine want = s->opt->engine;
	const char *knob = test_knob_text("ENGINE");

	if (want == OPTIONS_ENGINE_AUTO && knob)
		want = strcmp(knob, "notify") == 0 ? OPTIONS_ENGINE_NOTIFY :
		       strcmp(knob, "ptrace") == 0 ? OPTIONS_ENGINE_PTRACE : OPTIONS_ENGINE_AUTO;
	switch (want) {
	case OPTIONS_ENGINE_NOTIFY:
		if (!probe_notify()) {
			error_msg("--engine notify: this kernel has no seccomp user notification "
				  "with the continue answer and pidfd_getfd (Linux 5.6)");
			return AT_EXIT_FAILURE;
		}
		s->engine = SESSION_ENGINE_NOTIFY;
		break;
	case OPTIONS_ENGINE_PTRACE:
		s->engine = SESSION_ENGINE_PTRACE;
		break;
	default:
		s->engine = probe_notify_preferred() ? SESSION_ENGINE_NOTIFY : SESSION_ENGINE_PTRACE;
		break;
	}
	return AT_GO_ON;
}

static uint64_t session_pick(uint64_t cmdline, uint64_t policy)
{
	return cmdline ? cmdline : policy;
}

int session_start(struct session *s, struct options *opt)
{
	char *log_abs = NULL;
	int ret;

	memset(s, 0, sizeof(*s));
	s->opt = opt;
	s->log_fd = -1;
	s->child_pipe = -1;
	s->stderr_orig = log_own_stderr();
	s->channel_fd = -1;
	s->endpoint_copy = -1;
	s->listener_fd = s->listener_sock = s->sigchld_fd = -1;
	evidence_init(&s->evidence);
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	clock_gettime(CLOCK_REALTIME, &s->started_real);
	clock_gettime(CLOCK_REALTIME_COARSE, &s->started_coarse);
	session_token(s->id);
	s->context = opt->context ? xstrdup(opt->context) : context_default();
	notify_init(&s->notify, opt->syslog);
	s->self_exe = realpath("/proc/self/exe", NULL);
	s->cwd = getcwd(NULL, 0);
	tracee_table_init(&s->tasks);
	/* The project is the working directory unless --root says: one that
	 * was removed (or cannot be read) leaves none. */
	if (!s->cwd && !opt->root) {
		error_msg("the current directory: %s; give the project with --root DIR",
			  strerror(errno));
		ret = AT_EXIT_FAILURE;
		goto out;
	}

	if (opt->user) {
		ret = session_resolve_user(s);
		if (ret != AT_GO_ON)
			goto out;
	}
	if (opt->private_tmp && !opt->explain) {
		ret = privtmp_create(s);
		if (ret != AT_GO_ON)
			goto out;
	}
	if (opt->log)
		log_abs = session_abspath(opt->log);
	s->preload_only = opt->backend == OPTIONS_BACKEND_PRELOAD;
	if (channel_prepare(s) < 0) {
		error_msg("--backend preload: %s", s->preload_lib ?
			"cannot create the run dir" : "the shim " CHANNEL_PRELOAD_NAME " was not found");
		ret = AT_EXIT_FAILURE;
		goto out;
	}
	ret = session_load_policy(s, log_abs);
	if (ret != AT_GO_ON)
		goto out;
	ret = session_check_roots(s);
	if (ret != AT_GO_ON)
		goto out;
	ret = session_pick_engine(s);
	if (ret != AT_GO_ON)
		goto out;
	if (opt->mode >= 0)
		s->policy->mode = (uint8_t)opt->mode;
	if (opt->explain) {
		char *text = rules_explain(s->policy);

		if (!text) {
			warn_msg("cannot print the policy (out of memory?)");
			ret = AT_EXIT_FAILURE;
			goto out;
		}
		fputs(text, stdout);
		free(text);
		ret = fflush(stdout) == 0 ? AT_EXIT_OK : AT_EXIT_FAILURE;
		goto out;
	}
	s->record_all = opt->record || s->policy->record;
	if (opt->max_procs || opt->max_procs_percent) {
		s->max_procs = opt->max_procs;
		s->max_procs_percent = opt->max_procs_percent;
	} else {
		s->max_procs = s->policy->limits.max_procs;
		s->max_procs_percent = s->policy->limits.max_procs_percent;
	}
	if (s->max_procs_percent)
		s->max_procs = limits_task_share(s->max_procs_percent);
	s->timeout_ms = opt->timeout_ms ? opt->timeout_ms : s->policy->limits.timeout_sec * 1000u;
	if (opt->max_memory || opt->max_memory_percent) {
		s->max_memory = opt->max_memory;
		s->max_memory_percent = opt->max_memory_percent;
	} else {
		s->max_memory = s->policy->limits.max_memory;
		s->max_memory_percent = s->policy->limits.max_memory_percent;
	}
	if (s->max_memory_percent)
		s->max_memory = limits_machine_share(s->max_memory_percent);
	s->max_cpu = session_pick(opt->max_cpu, s->policy->limits.max_cpu_sec);
	if (log_abs) {
		ret = session_open_log(s, log_abs);
		if (ret != AT_GO_ON)
			goto out;
	}
	if (opt->evidence) {
		char *protected = session_abspath(opt->evidence);

		ret = evidence_open(&s->evidence, s->policy, opt->evidence);
		if (ret == AT_GO_ON && !session_opened_protected(s->evidence.dir_fd, protected)) {
			error_msg("--evidence %s: it changed while it was opened", opt->evidence);
			ret = AT_EXIT_FAILURE;
		}
		free(protected);
		if (ret != AT_GO_ON)
			goto out;
		info_msg("evidence: copies of the scripts run and the programs written and run "
			 "in %s", s->evidence.dir);
	}
	s->call = xmalloc(sizeof(*s->call));
	ret = channel_open(s);
	if (ret < 0 && s->preload_only) {
		error_msg("--backend preload: cannot set up the channel: %s",
			strerror(-ret));
		ret = AT_EXIT_FAILURE;
		goto out;
	}
	if (ret < 0)
		warn_msg("no preload shim (channel: %s); host names come from agenttrace's own lookups",
			 strerror(-ret));
	if (s->preload_only)
		info_msg("backend preload only (%s): decisions inside the programs; bypassable by "
			 "static binaries and raw syscalls", s->preload_lib);
	else
		info_msg("backend ptrace (seccomp-bpf + supervisor, authoritative), engine %s; "
			 "preload shim: %s", s->engine == SESSION_ENGINE_NOTIFY ?
			 "notify (seccomp user notification)" : "ptrace (seccomp stops)",
			 s->preload_lib ? s->preload_lib : "none (host names from agenttrace's lookups)");
	if (s->project_policy)
		info_msg("project policy %s: %s", s->project_policy, opt->trust_project_policy ?
			 "trusted (--trust-project-policy), used as written" :
			 "its deny and alert rules added (--trust-project-policy to use it as written)");
	info_msg("policy %s, mode %s%s", rules_string(s->policy, s->policy->layers),
		 s->policy->mode == RULES_MODE_AUDIT ? "audit" : "enforce",
		 s->record_all ? ", recording every event" : "");
	session_survive_setup(s);
	/* Before the command runs: what its dependency files were. */
	depsnap_take(&s->deps_before, s->opt->root ? s->opt->root : s->cwd, NULL);
	cichannel_start(&s->cichannels, s->anchors.dir[RULES_ANCHOR_ROOT]);
	gitfind_start(&s->gitfind, s->anchors.dir[RULES_ANCHOR_ROOT]);
	/* From here on the supervisor sees the command's /tmp... */
	privtmp_isolate(s);
	/* ...which Landlock must grant: its rules bind to inodes. */
	ret = landlock_setup(s);
	if (ret != AT_GO_ON)
		goto out;
	/* The command's own view, made in the child (composes with the
	 * private /tmp above, which it inherits). */
	ret = mask_setup(s);
	if (ret != AT_GO_ON)
		goto out;
	if (channel_write_linked(s) < 0) {
		error_msg("--backend preload: cannot write the run dir");
		ret = AT_EXIT_FAILURE;
		goto out;
	}
	if (s->switch_user)
		info_msg("the command runs as uid %u gid %u", (unsigned)s->uid, (unsigned)s->gid);
	if (s->max_procs || s->timeout_ms || s->max_memory || s->max_cpu)
		info_msg("limits: max-procs %llu%s, timeout %llu ms, max-memory %llu bytes%s, "
			 "max-cpu %llu s (0 = none)",
			 (unsigned long long)s->max_procs,
			 s->max_procs_percent ? " (tasks, a share of the kernel's limit)" : "",
			 (unsigned long long)s->timeout_ms,
			 (unsigned long long)s->max_memory,
			 s->max_memory_percent ? " (a share of the machine's memory)" : "",
			 (unsigned long long)s->max_cpu);
	ret = AT_GO_ON;
out:
	free(log_abs);
	return ret;
}

void session_summary(struct session *s, int exit_code, int signal, const pid_t *left,
		     size_t n_left)
{
	struct summary_facts f = {
		.exit_code = exit_code,
		.signal = signal,
		.left = left,
		.n_left = n_left,
		.changed_outside_collapsed = survive_collapsed(s->survive),
		.state = s->survive,
		.as_root = s->switch_user ? s->uid == 0 : geteuid() == 0,
		.landlock_abi = landlock_abi_in_force(s->landlock),
		.private_tmp = s->private_tmp,
		.masks_wanted = s->mask != NULL,
		.masks_ns = s->mask && mask_in_force(s->mask) ? mask_ns_name(s->mask->ns) : NULL,
		.masks_read = s->mask ? s->mask->n_read : 0,
		.masks_write = s->mask ? s->mask->n_write : 0,
		.masks_in_force = mask_in_force(s->mask) ? s->mask->applied : 0,
		.masks_why = s->mask && s->mask->why[0] ? s->mask->why : NULL,
		.masks_note = mask_summary_note(s->mask),
		.preload_note = s->preload_only ? PRELOAD_MODE_NOTE : NULL,
		.engine = session_engine_name(s->engine),
		.unseen = s->unseen,
		.n_unseen = s->n_unseen,
		.egress = &s->egress,
		.project_policy = s->project_policy,
		.project_policy_trusted = s->opt->trust_project_policy,
		.evidence = s->evidence.dir_fd >= 0 ? &s->evidence : NULL,
	};
	char **changed;
	struct alerted_change alerted[ALERTED_MAX];
	struct depsnap deps_after;
	struct depsnap_changes deps;
	struct install_list installed;

	/* Every process of the session is gone: what it handed to the CI's
	 * later steps is judged before the runner reads it. */
	cichannel_finish(s, &s->cichannels, s->anchors.dir[RULES_ANCHOR_ROOT]);
	/* ...and where git will find a repository in the project. */
	gitfind_finish(s, &s->gitfind);
	changed = survive_list(s->survive, &f.n_changed_outside);
	/* The command is done with the project: what its dependency files
	 * became. */
	depsnap_take(&deps_after, s->opt->root ? s->opt->root : s->cwd, &s->deps_before);
	depsnap_settle(&s->deps_before, &deps_after);
	depsnap_compare(&s->deps_before, &deps_after, &deps);
	installs_collect(&s->installs, s->opt->root ? s->opt->root : s->cwd, &s->deps_before,
			 &installed);
	f.deps = &deps;
	f.installed = &installed;
	f.installs = &s->installs;
	f.changed_outside = changed;
	f.alerted = alerted;
	f.n_alerted = s->alerted ? alerted_compare(s->alerted, alerted) : 0;
	f.alerted_other = s->alerted ? s->alerted->other : 0;
	egress_sort(&s->egress);
	record_summary(s, &f);
	survive_list_free(changed, f.n_changed_outside);
	install_list_free(&installed);
	depsnap_changes_free(&deps);
	depsnap_free(&deps_after);
}

void session_end(struct session *s)
{
	if (s->log_fd >= 0)
		close(s->log_fd);
	if (s->child_pipe >= 0)
		close(s->child_pipe);
	if (s->stderr_orig >= 0)
		close(s->stderr_orig);
	unotify_close(s);
	privtmp_remove(s->privtmp);
	free(s->private_tmp);
	landlock_free(s->landlock);
	mask_free(s->mask);
	linked_free(&s->linked);
	survive_free(s->survive);
	gitfind_free(&s->gitfind);
	if (s->alerted)
		alerted_free(s->alerted);
	free(s->alerted);
	endpoints_free(s->endpoints);
	if (s->endpoint_copy >= 0)
		close(s->endpoint_copy);
	egress_free(&s->egress);
	evidence_close(&s->evidence);
	depsnap_free(&s->deps_before);
	installs_free(&s->installs);
	cichannel_free(&s->cichannels);
	free(s->groups);
	channel_close(s);
	tracee_info_unref(s->main_info);
	tracee_table_free(&s->tasks);
	backtrace_forget_all();
	pyframes_forget_all();
	elfinfo_forget_all();
	notify_close(&s->notify);
	free(s->call);
	free(s->policy);
	rules_anchors_free(&s->anchors);
	free(s->suggest_base);
	free(s->project_policy);
	free(s->context);
	free(s->self_exe);
	free(s->command_exe);
	free(s->cwd);
	memset(s, 0, sizeof(*s));
	s->log_fd = -1;
	s->child_pipe = -1;
	s->endpoint_copy = -1;
	s->listener_fd = s->listener_sock = s->sigchld_fd = -1;
}
