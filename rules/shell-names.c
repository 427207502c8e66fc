/* Which command names download, interpret a program, or run another
 * command: the vocabulary of the "download-and-run" script shape
 * (agenttrace-policy(5) lists it).  Constant tables only. */
#include <string.h>

#include "rules/shell.h"

const char *shell_base(const char *s, size_t n, size_t *base_len)
{
	const char *slash = n ? memrchr(s, '/', n) : NULL;
	const char *b = slash ? slash + 1 : s;

	*base_len = n - (size_t)(b - s);
	return b;
}

static bool name_is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && memcmp(s, name, n) == 0;
}

static bool name_in(const char *s, size_t n, const char *const *names)
{
	for (; *names; names++)
		if (name_is(s, n, *names))
			return true;
	return false;
}

/* NAME followed by nothing or by a version: "python3", "python3.12",
 * "perl5.36", "php8.2". */
static bool name_versioned(const char *s, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n < k || memcmp(s, name, k) != 0)
		return false;
	for (size_t i = k; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' && i > k)))
			return false;
	return true;
}

/* Programs whose output is what they fetch from the network. */
static const char *const downloaders[] = {
	"curl", "wget", "wget2", "fetch", "aria2c", "axel", "curlie",
	"http", "https", "xh", "xhs", "lwp-request", "lwp-download", "GET", "POST",
	"lynx", "w3m", "links", "elinks", "nc", "ncat", "netcat", "socat",
	NULL,
};

static const char *const shells[] = {
	"sh", "bash", "rbash", "dash", "zsh", "ksh", "ksh93", "mksh", "lksh", "pdksh", "oksh",
	"ash", "yash", "posh", "hush", "fish", "csh", "tcsh",
	NULL,
};

bool shell_name_downloads(const char *s, size_t n)
{
	return name_in(s, n, downloaders);
}

enum shell_family shell_name_family(const char *s, size_t n)
{
	if (name_in(s, n, shells))
		return SHELL_FAM_SHELL;
	if (name_versioned(s, n, "python") || name_versioned(s, n, "pypy"))
		return SHELL_FAM_PYTHON;
	if (name_is(s, n, "node") || name_is(s, n, "nodejs"))
		return SHELL_FAM_NODE;
	if (name_versioned(s, n, "perl"))
		return SHELL_FAM_PERL;
	if (name_versioned(s, n, "ruby"))
		return SHELL_FAM_RUBY;
	if (name_versioned(s, n, "php"))
		return SHELL_FAM_PHP;
	if (name_versioned(s, n, "lua") || name_is(s, n, "luajit"))
		return SHELL_FAM_LUA;
	return SHELL_FAM_NONE;
}

static const char *const sudo_long[] = {
	"--user", "--group", "--chdir", "--prompt", "--role", "--type", "--other-user",
	"--close-from", "--host", "--command-timeout", "--login-class", NULL,
};
static const char *const env_long[] = { "--unset", "--chdir", "--split-string", NULL };
static const char *const xargs_long[] = {
	"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines",
	"--process-slot-var", NULL,
};
static const char *const time_long[] = { "--format", "--output", NULL };
static const char *const nice_long[] = { "--adjustment", NULL };
static const char *const timeout_long[] = { "--signal", "--kill-after", NULL };
static const char *const no_long[] = { NULL };

static const struct shell_wrapper wrappers[] = {
	{ "sudo", "CDghpRrTtUu", sudo_long, 0, SHELL_WRAP_ASSIGN | SHELL_WRAP_SUDO },
	{ "doas", "uC", no_long, 0, SHELL_WRAP_SUDO },
	{ "env", "uCS", env_long, 0, SHELL_WRAP_ASSIGN },
	{ "xargs", "adEILnPs", xargs_long, 0, 0 },
	{ "nohup", "", no_long, 0, 0 },
	{ "exec", "a", no_long, 0, 0 },
	{ "command", "", no_long, 0, SHELL_WRAP_LOOKUP },
	{ "builtin", "", no_long, 0, 0 },
	{ "time", "fo", time_long, 0, 0 },
	{ "nice", "n", nice_long, 0, 0 },
	{ "timeout", "sk", timeout_long, 1, 0 },
	{ "stdbuf", "ioe", no_long, 0, 0 },
	{ "setsid", "", no_long, 0, 0 },
	{ "ionice", "cnpPu", no_long, 0, 0 },
	{ "chrt", "", no_long, 1, 0 },
	{ "taskset", "", no_long, 1, 0 },
	{ "unbuffer", "", no_long, 0, 0 },
	{ "busybox", "", no_long, 0, SHELL_WRAP_APPLET },
};

const struct shell_wrapper *shell_name_wrapper(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (name_is(s, n, wrappers[i].name))
			return &wrappers[i];
	return NULL;
}

static bool word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '+' || c == '-';
}

void shell_scan_words(const char *text, size_t len, bool *downloads, bool *interprets)
{
	size_t i = 0;

	*downloads = *interprets = false;
	while (i < len) {
		size_t start, n;

		while (i < len && !word_byte((unsigned char)text[i]))
			i++;
		start = i;
		while (i < len && word_byte((unsigned char)text[i]))
			i++;
		n = i - start;
		/* "curl." of "curl.*|": a sentence's or a regex's dot is not
		 * part of the name. */
		while (n && text[start + n - 1] == '.')
			n--;
		if (!n)
			continue;
		if (shell_name_downloads(text + start, n))
			*downloads = true;
		else if (shell_name_family(text + start, n) != SHELL_FAM_NONE ||
			 name_is(text + start, n, "eval") || name_is(text + start, n, "source"))
			*interprets = true;
	}
}
