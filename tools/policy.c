/* agenttrace-policy: check, show, explain, learn and replay policies
 * (agenttrace-policy(1), agenttrace-policy(5)).  A thin front over the
 * loader (rules/load.h) and the log tools (tools/learn.h). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "rules/load.h"
#include "tools/learn.h"

static void policy_usage(FILE *f)
{
	fprintf(f,
		"usage: agenttrace-policy [--root DIR] COMMAND [ARG...]\n"
		"\n"
		"commands:\n"
		"  check FILE...            check syntax, semantics and the policies' own tests\n"
		"  show NAME                print a shipped policy's JSON source\n"
		"  explain [NAME|FILE...]   print the effective policy after layering and variables\n"
		"  learn LOG                a policy admitting exactly what a --record run did\n"
		"  replay LOG --policy P    recorded events the policy P decides differently\n"
		"\n"
		"options:\n"
		"  --root DIR     the project root, ${ROOT} in policies (default: the current directory)\n"
		"  -h, --help     show this help\n"
		"  -V, --version  show the version\n"
		"\n"
		"shipped policies:");
	for (const char *const *n = rules_builtin_names; *n; n++)
		fprintf(f, " %s", *n);
	fprintf(f, "\n\nexit status: 0 valid, 1 invalid policy, 125 bad usage.\n");
}

static void policy_bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void policy_bad_usage(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "agenttrace-policy: %s\n", text);
	fprintf(stderr, "Try 'agenttrace-policy --help' for more information.\n");
	exit(AT_EXIT_FAILURE);
}

struct check_state {
	int errors;
};

static void policy_report(const struct rules_error *e, void *arg)
{
	struct check_state *st = arg;
	char line[2048];

	rules_error_format(e, line, sizeof(line));
	fprintf(stderr, "%s\n", line);
	st->errors++;
}

static int policy_check(int argc, char **argv, const struct rules_vars *vars)
{
	int status = AT_EXIT_OK;

	if (argc < 1)
		policy_bad_usage("check needs at least one FILE");
	for (int i = 0; i < argc; i++) {
		struct check_state st = { 0 };

		if (rules_check_file(argv[i], vars, policy_report, &st) || st.errors)
			status = 1;
		else
			printf("%s: ok\n", argv[i]);
	}
	return status;
}

static int policy_show(int argc, char **argv)
{
	const char *text;
	size_t len;

	if (argc != 1)
		policy_bad_usage("show needs exactly one NAME");
	text = rules_builtin(argv[0], &len);
	if (!text)
		policy_bad_usage("no shipped policy named \"%s\"", argv[0]);
	if (fwrite(text, 1, len, stdout) != len)
		die_errno("cannot write the policy");
	return AT_EXIT_OK;
}

static int policy_explain(int argc, char **argv, const struct rules_vars *vars)
{
	struct rules_policy *p = NULL;
	struct rules_error err;
	char line[2048], *text;

	if (rules_load((const char *const *)argv, (size_t)argc, NULL, 0, vars, &p, &err) < 0) {
		rules_error_format(&err, line, sizeof(line));
		fprintf(stderr, "%s\n", line);
		return 1;
	}
	text = rules_explain(p);
	free(p);
	if (!text)
		die("out of memory");
	fputs(text, stdout);
	free(text);
	return AT_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "root", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct rules_vars vars;
	const char *root = NULL, *cmd;
	int c, status;

	log_set_program("agenttrace-policy");
	/* "+": options end at the command, whose arguments are its own. */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			policy_usage(stdout);
			return AT_EXIT_OK;
		case 'V':
			printf("agenttrace-policy %s\n", PACKAGE_VERSION);
			return AT_EXIT_OK;
		case 'r':
			root = optarg;
			break;
		default:
			fprintf(stderr, "Try 'agenttrace-policy --help' for more information.\n");
			return AT_EXIT_FAILURE;
		}
	}
	if (optind >= argc)
		policy_bad_usage("a command is needed (check, show, explain, learn, replay)");
	cmd = argv[optind++];
	rules_vars_from_env(&vars, root);
	if (!strcmp(cmd, "check"))
		status = policy_check(argc - optind, argv + optind, &vars);
	else if (!strcmp(cmd, "show"))
		status = policy_show(argc - optind, argv + optind);
	else if (!strcmp(cmd, "explain"))
		status = policy_explain(argc - optind, argv + optind, &vars);
	else if (!strcmp(cmd, "learn"))
		/* learn and replay parse their own options, argv[0] being the command. */
		status = learn_main(argc - optind + 1, argv + optind - 1);
	else if (!strcmp(cmd, "replay"))
		status = replay_main(argc - optind + 1, argv + optind - 1);
	else
		policy_bad_usage("unknown command \"%s\" (check, show, explain, learn, replay)", cmd);
	if (fflush(stdout) != 0)
		die_errno("cannot write to standard output");
	return status;
}
