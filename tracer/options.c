#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "rules/load.h"
#include "rules/rules.h"
#include "tracer/confine/caps.h"
#include "tracer/options.h"

enum {
	OPT_RECORD = 256,
	OPT_ALLOW_NET,
	OPT_ALLOW_WRITE,
	OPT_ALLOW_EXEC,
	OPT_ALLOW_READ,
	OPT_ROOT,
	OPT_BACKEND,
	OPT_FAIL_ON_ALERT,
	OPT_SYSLOG,
	OPT_TIMEOUT,
	OPT_MAX_PROCS,
	OPT_MAX_MEMORY,
	OPT_MAX_CPU,
	OPT_USER,
	OPT_KEEP_CAPS,
	OPT_PRIVATE_TMP,
	OPT_LANDLOCK,
	OPT_MASK,
	OPT_ENGINE,
	OPT_EXPLAIN,
	OPT_DOCTOR,
	OPT_NO_PROJECT_POLICY,
	OPT_TRUST_PROJECT_POLICY,
	OPT_EVIDENCE,
	OPT_CONTEXT,
};

static const struct option options_table[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "mode", required_argument, NULL, 'm' },
	{ "log", required_argument, NULL, 'o' },
	{ "record", no_argument, NULL, OPT_RECORD },
	{ "allow-net", required_argument, NULL, OPT_ALLOW_NET },
	{ "allow-write", required_argument, NULL, OPT_ALLOW_WRITE },
	{ "allow-exec", required_argument, NULL, OPT_ALLOW_EXEC },
	{ "allow-read", required_argument, NULL, OPT_ALLOW_READ },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "fail-on-alert", optional_argument, NULL, OPT_FAIL_ON_ALERT },
	{ "syslog", no_argument, NULL, OPT_SYSLOG },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-procs", required_argument, NULL, OPT_MAX_PROCS },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "max-cpu", required_argument, NULL, OPT_MAX_CPU },
	{ "user", required_argument, NULL, OPT_USER },
	{ "keep-caps", required_argument, NULL, OPT_KEEP_CAPS },
	{ "private-tmp", no_argument, NULL, OPT_PRIVATE_TMP },
	{ "landlock", required_argument, NULL, OPT_LANDLOCK },
	{ "mask", required_argument, NULL, OPT_MASK },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "doctor", no_argument, NULL, OPT_DOCTOR },
	{ "no-project-policy", no_argument, NULL, OPT_NO_PROJECT_POLICY },
	{ "trust-project-policy", no_argument, NULL, OPT_TRUST_PROJECT_POLICY },
	{ "evidence", required_argument, NULL, OPT_EVIDENCE },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void options_usage(FILE *f)
{
	fputs("Usage: agenttrace [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       agenttrace [OPTIONS] --explain\n"
	      "       agenttrace --doctor\n"
	      "Run COMMAND and every process it starts under a ptrace + seccomp-bpf\n"
	      "supervisor that checks exec, writes, credential reads and connects\n"
	      "against a policy.\n"
	      "\n"
	      "  -p, --policy NAME|FILE    shipped policy (default strict ci audit agent) or\n"
	      "                            a JSON file; repeatable, later layers on earlier\n"
	      "      --no-project-policy   ignore the project's .agenttrace.json\n"
	      "      --trust-project-policy  use the project's .agenttrace.json as written\n"
	      "                            (without it: only its deny and alert rules)\n"
	      "  -m, --mode enforce|audit  override the policy's mode\n"
	      "  -o, --log FILE            append JSON Lines records to FILE\n"
	      "      --record              log every intercepted event, not only alerts\n"
	      "      --evidence DIR        keep a copy of every script run and of every\n"
	      "                            program the session wrote and ran, in DIR\n"
	      "      --allow-net HOST[:PORT], --allow-write PATH, --allow-read PATH,\n"
	      "      --allow-exec PROGRAM  add one allow rule, exempted from the policy's\n"
	      "                            denies of its kind; repeatable; single-quote\n"
	      "                            ${ROOT}/... so that the shell leaves it alone\n"
	      "      --root DIR            the project root, ${ROOT}; default: the cwd\n"
	      "      --backend ptrace|preload|auto\n"
	      "                            auto: ptrace plus the preload shim for host\n"
	      "                            names (shim alone if ptrace cannot start);\n"
	      "                            preload: the shim alone, bypassable\n"
	      "      --engine auto|notify|ptrace  how the supervisor gets the calls it decides:\n"
	      "                            seccomp user notification or ptrace stops\n"
	      "      --fail-on-alert[=LIST]  exit 113 when the command exited 0 but something\n"
	      "                            was denied (LIST: deny, alert, rule-id globs such\n"
	      "                            as exec.install.*; comma-separated)\n"
	      "      --syslog              send alerts to syslog as well\n"
	      "      --timeout SEC         stop the command after SEC seconds\n"
	      "      --max-procs N         at most N live processes\n"
	      "      --max-memory SIZE     memory of the whole session (512M, 2G, 75%)\n"
	      "      --max-cpu SEC         CPU seconds of the whole session\n"
	      "      --user USER[:GROUP]   run the command as USER (agenttrace run as root)\n"
	      "      --keep-caps LIST|all  capabilities a root command keeps beyond the\n"
	      "                            default set (names, comma-separated)\n"
	      "      --private-tmp         a fresh TMPDIR for the command, removed at the end\n"
	      "      --landlock auto|on|off  kernel backstop (Landlock) for the write roots;\n"
	      "                            on: fail (125) where the kernel lacks it\n"
	      "      --mask auto|on|off    hide denied credentials and bind protected project\n"
	      "                            files read-only in the command's own mount\n"
	      "                            namespace; on: fail (125) where none can be made\n"
	      "      --explain             print the effective policy and exit\n"
	      "      --doctor              print which kernel features this machine has and\n"
	      "                            what a session here uses, and exit\n"
	      "      --context TEXT        label copied into every record\n"
	      "  -q, --quiet               no summary line (and no alert lines with --log)\n"
	      "  -v, --verbose             say which backend and policy layers are active\n"
	      "  -h, --help                this text\n"
	      "  -V, --version             the version\n"
	      "\n"
	      "Exit status: the command's; 128+N when it was killed by signal N;\n"
	      "113 with --fail-on-alert; 125 agenttrace failed; 126 command not\n"
	      "executable; 127 command not found.\n", f);
}

/* Usage errors: one line naming the problem, then the hint, 125. */
static int options_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int options_bad(const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	error_msg("%s", text);
	fputs("Try 'agenttrace --help' for more information.\n", stderr);
	return AT_EXIT_FAILURE;
}

/* What a shell leaves of a pattern whose variable it expanded to nothing:
 * --allow-write "${ROOT}/.git/config" in double quotes is "/.git/config"
 * (agenttrace expands ${ROOT} itself, but an unset shell variable ROOT
 * expands first).  A dot-name right under "/" is that shape; "/" and
 * "/" followed by "**" (what is left of "${ROOT}/" and "**") would allow
 * everything.  True after saying so. */
static bool options_bad_expansion(const char *opt, const char *v)
{
	const char *p = v;

	if (strncmp(p, "unix:", 5) == 0)
		p += 5;
	if (p[0] != '/')
		return false;
	if ((p[1] == '.' && p[2] && p[2] != '/' && !(p[2] == '.' && (p[3] == '/' || !p[3]))) ||
	    strcmp(p, "/") == 0 || strcmp(p, "/**") == 0) {
		error_msg("%s '%s': this is what a shell leaves of a pattern whose variable it "
			  "expanded to nothing (\"${ROOT}%s\" in double quotes)", opt, v, p);
		hint_msg("write the variable in single quotes, %s '${ROOT}%s', so that agenttrace "
			 "expands it", opt, p);
		return true;
	}
	return false;
}

static void options_push(struct options_list *l, const char *v)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = v;
}

/* A positive integer, no sign, no trailing junk. */
static int options_parse_uint(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Seconds, decimals allowed as in timeout(1): "1", "0.5", "90". */
static int options_parse_seconds(const char *s, uint64_t *ms)
{
	char *end;
	double d;

	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !isfinite(d) || d <= 0 || d > 1e9)
		return -EINVAL;
	*ms = (uint64_t)(d * 1000.0 + 0.5);
	if (*ms == 0)
		*ms = 1;
	return 0;
}

int options_parse(int argc, char **argv, struct options *o)
{
	int c;
	uint64_t n;

	memset(o, 0, sizeof(*o));
	o->mode = -1;
	o->verbosity = 1;
	/* '+': stop at the first non-option, so that the command's own
	 * options need no "--" (as env(1) and timeout(1)). */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:p:m:o:qvhV", options_table, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!*optarg)
				return options_bad("--policy needs a name or a file");
			options_push(&o->policies, optarg);
			break;
		case 'm':
			if (strcmp(optarg, "enforce") == 0)
				o->mode = RULES_MODE_ENFORCE;
			else if (strcmp(optarg, "audit") == 0)
				o->mode = RULES_MODE_AUDIT;
			else
				return options_bad("invalid --mode '%s' (enforce or audit)", optarg);
			break;
		case 'o':
			if (!*optarg)
				return options_bad("--log needs a file name");
			o->log = optarg;
			break;
		case OPT_RECORD:
			o->record = true;
			break;
		case OPT_ALLOW_NET:
			if (!*optarg)
				return options_bad("--allow-net needs HOST[:PORT]");
			if (options_bad_expansion("--allow-net", optarg))
				return AT_EXIT_FAILURE;
			options_push(&o->allow_net, optarg);
			break;
		case OPT_ALLOW_WRITE:
			if (!*optarg)
				return options_bad("--allow-write needs a path");
			if (options_bad_expansion("--allow-write", optarg))
				return AT_EXIT_FAILURE;
			options_push(&o->allow_write, optarg);
			break;
		case OPT_ALLOW_EXEC:
			if (!*optarg)
				return options_bad("--allow-exec needs a program");
			if (options_bad_expansion("--allow-exec", optarg))
				return AT_EXIT_FAILURE;
			options_push(&o->allow_exec, optarg);
			break;
		case OPT_ALLOW_READ:
			if (!*optarg)
				return options_bad("--allow-read needs a path");
			if (options_bad_expansion("--allow-read", optarg))
				return AT_EXIT_FAILURE;
			options_push(&o->allow_read, optarg);
			break;
		case OPT_ROOT:
			if (!*optarg)
				return options_bad("--root needs a directory");
			o->root = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "auto") == 0)
				o->backend = OPTIONS_BACKEND_AUTO;
			else if (strcmp(optarg, "ptrace") == 0)
				o->backend = OPTIONS_BACKEND_PTRACE;
			else if (strcmp(optarg, "preload") == 0)
				o->backend = OPTIONS_BACKEND_PRELOAD;
			else
				return options_bad("invalid --backend '%s' (ptrace, preload or auto)", optarg);
			break;
		case OPT_SYSLOG:
			o->syslog = true;
			break;
		case OPT_FAIL_ON_ALERT: {
			char bad[128];

			if (fail_on_add(&o->fail_on, optarg, bad, sizeof(bad)) < 0)
				return options_bad("invalid --fail-on-alert selector '%s' (deny, alert "
						   "or a rule-id glob such as exec.install.*, "
						   "comma-separated)", bad);
			break;
		}
		case OPT_TIMEOUT:
			if (options_parse_seconds(optarg, &o->timeout_ms) < 0)
				return options_bad("invalid --timeout '%s' (seconds, > 0)", optarg);
			break;
		case OPT_MAX_PROCS:
			if (rules_parse_procs(optarg, &o->max_procs, &o->max_procs_percent) < 0)
				return options_bad("invalid --max-procs '%s' (a number > 0, or a "
						   "share such as 15%%)", optarg);
			break;
		case OPT_MAX_MEMORY:
			if (rules_parse_memory(optarg, &o->max_memory, &o->max_memory_percent) < 0)
				return options_bad("invalid --max-memory '%s' (e.g. 512M, 2G, 75%%)", optarg);
			break;
		case OPT_MAX_CPU:
			if (options_parse_uint(optarg, &n) < 0 || n == 0)
				return options_bad("invalid --max-cpu '%s' (seconds, > 0)", optarg);
			o->max_cpu = n;
			break;
		case OPT_USER:
			if (!*optarg || *optarg == ':')
				return options_bad("invalid --user '%s' (USER[:GROUP])", optarg);
			o->user = optarg;
			break;
		case OPT_KEEP_CAPS: {
			caps_set set;
			char bad[80];

			if (caps_parse(optarg, &set, bad, sizeof(bad)) < 0)
				return options_bad("invalid --keep-caps '%s': unknown capability '%s' "
						   "(names as in capabilities(7), such as sys_ptrace, "
						   "comma-separated, or all)", optarg, bad);
			o->keep_caps |= set;
			break;
		}
		case OPT_PRIVATE_TMP:
			o->private_tmp = true;
			break;
		case OPT_LANDLOCK:
			if (strcmp(optarg, "auto") == 0)
				o->landlock = OPTIONS_LANDLOCK_AUTO;
			else if (strcmp(optarg, "on") == 0)
				o->landlock = OPTIONS_LANDLOCK_ON;
			else if (strcmp(optarg, "off") == 0)
				o->landlock = OPTIONS_LANDLOCK_OFF;
			else
				return options_bad("invalid --landlock '%s' (auto, on or off)", optarg);
			break;
		case OPT_MASK:
			if (strcmp(optarg, "auto") == 0)
				o->mask = OPTIONS_MASK_AUTO;
			else if (strcmp(optarg, "on") == 0)
				o->mask = OPTIONS_MASK_ON;
			else if (strcmp(optarg, "off") == 0)
				o->mask = OPTIONS_MASK_OFF;
			else
				return options_bad("invalid --mask '%s' (auto, on or off)", optarg);
			break;
		case OPT_ENGINE:
			if (strcmp(optarg, "auto") == 0)
				o->engine = OPTIONS_ENGINE_AUTO;
			else if (strcmp(optarg, "notify") == 0)
				o->engine = OPTIONS_ENGINE_NOTIFY;
			else if (strcmp(optarg, "ptrace") == 0)
				o->engine = OPTIONS_ENGINE_PTRACE;
			else
				return options_bad("invalid --engine '%s' (auto, notify or ptrace)",
						   optarg);
			break;
		case OPT_EXPLAIN:
			o->explain = true;
			break;
		case OPT_DOCTOR:
			o->doctor = true;
			break;
		case OPT_NO_PROJECT_POLICY:
			o->no_project_policy = true;
			break;
		case OPT_TRUST_PROJECT_POLICY:
			o->trust_project_policy = true;
			break;
		case OPT_EVIDENCE:
			if (!*optarg)
				return options_bad("--evidence needs a directory");
			o->evidence = optarg;
			break;
		case OPT_CONTEXT:
			o->context = optarg;
			break;
		case 'q':
			o->verbosity = 0;
			break;
		case 'v':
			o->verbosity = o->verbosity < 2 ? 2 : 3;
			break;
		case 'h':
			options_usage(stdout);
			return 0;
		case 'V':
			printf("agenttrace %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			return options_bad("option '%s' needs a value", argv[optind - 1]);
		case '?':
		default:
			if (optopt && optopt < 256) {
				char s[3] = { '-', (char)optopt, 0 };
				return options_bad("unknown option '%s'", s);
			}
			return options_bad("unknown option '%s'", argv[optind - 1]);
		}
	}

	if (o->no_project_policy && o->trust_project_policy)
		return options_bad("--no-project-policy and --trust-project-policy contradict "
				   "each other: give one");
	if (o->doctor) {
		if (o->explain)
			return options_bad("--doctor and --explain are two reports: give one");
		if (optind < argc)
			return options_bad("--doctor takes no command (got '%s')", argv[optind]);
		return AT_GO_ON;
	}
	if (o->explain) {
		if (optind < argc)
			return options_bad("--explain takes no command (got '%s')", argv[optind]);
		return AT_GO_ON;
	}
	if (optind >= argc)
		return options_bad("missing COMMAND");
	o->command = argv + optind;
	return AT_GO_ON;
}

void options_free(struct options *o)
{
	free(o->policies.v);
	free(o->allow_net.v);
	free(o->allow_write.v);
	free(o->allow_exec.v);
	free(o->allow_read.v);
	fail_on_free(&o->fail_on);
	memset(o, 0, sizeof(*o));
}
