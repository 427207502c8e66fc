/* Debian's alternatives (update-alternatives(1)): /etc/alternatives/NAME
 * is a link, kept by root, to the program the system calls NAME (vi ->
 * /usr/bin/vim.basic, which -> /usr/bin/which.debianutils).  An exec
 * allow-list names programs; the program run is the resolved file, whose
 * name is vim.basic.  When the name a program was called by (the base
 * name of its argv[0], as the shell found it on PATH) is an alternative
 * that leads to that very file, the program also answers to that name
 * (rules_decide_exec_alias()).  argv[0] is only the hint of which link
 * to look at: the link itself, which the session cannot write (/etc is
 * denied), says what the program is.  Header only: the supervisor and
 * the preload shim resolve the link each their own way. */
#ifndef AGENTTRACE_LIB_ALTERNATIVES_H
#define AGENTTRACE_LIB_ALTERNATIVES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define ALTERNATIVES_DIR "/etc/alternatives/"

/* "/etc/alternatives/NAME" for ARGV0's base name NAME into LINK (SIZE
 * bytes); false when ARGV0 names none ("", ".", "..", too long). */
static inline bool alternatives_link(const char *argv0, char *link, size_t size)
{
	const char *base, *slash;
	size_t n;

	if (!argv0)
		return false;
	slash = strrchr(argv0, '/');
	base = slash ? slash + 1 : argv0;
	n = strlen(base);
	if (!n || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
	    sizeof(ALTERNATIVES_DIR) + n > size)
		return false;
	memcpy(link, ALTERNATIVES_DIR, sizeof(ALTERNATIVES_DIR) - 1);
	memcpy(link + sizeof(ALTERNATIVES_DIR) - 1, base, n + 1);
	return true;
}

#endif
