/* The "script" key of an exec rule: the shell's -c command string,
 * judged by what it runs (rules/shell.h), not by its text.
 *
 * The parser gets an arena on this stack frame (allocation-free, safe in
 * the preload shim and in a vfork child).  A command string it cannot
 * parse (longer than SHELL_TEXT_MAX, nested deeper than its bounds,
 * unbalanced, not shell) fails closed for this rule alone: it matches
 * when its words name a downloader and an interpreter, as
 * agenttrace-policy(5) says. */
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"
#include "rules/shell.h"

static bool script_download_and_run(const char *text)
{
	char arena[SHELL_ARENA_SIZE];
	size_t len = strnlen(text, SHELL_TEXT_MAX + 1);
	bool downloads, interprets;

	switch (shell_download_and_run(text, len, arena, sizeof(arena), NULL)) {
	case SHELL_DOWNLOAD_AND_RUN:
		return true;
	case SHELL_CLEAN:
		return false;
	default:
		shell_scan_words(text, strlen(text), &downloads, &interprets);
		return downloads && interprets;
	}
}

bool match_script(const struct rules_policy *p, const struct rules_pattern *pat,
		  const struct match_subject *m)
{
	const struct rules_event *ev = m->ev;
	bool applet = false;
	const char *text;

	(void)p;
	if (pat->script != RULES_SCRIPT_DOWNLOAD_AND_RUN || !ev->argv || ev->argc < 2)
		return false;
	/* busybox sh -c TEXT; with /bin/sh -> busybox, argv[1] is "-c". */
	if (m->base && m->base_len == 7 && memcmp(m->base, "busybox", 7) == 0 && ev->argv[1]) {
		size_t bn;
		const char *b = shell_base(ev->argv[1], strlen(ev->argv[1]), &bn);

		applet = shell_name_family(b, bn) == SHELL_FAM_SHELL;
	}
	text = shell_argv_command_string(ev->argv, ev->argc, applet);
	return text && script_download_and_run(text);
}
