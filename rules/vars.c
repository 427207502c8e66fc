/* ${ROOT} ${HOME} ${TMPDIR} ${CWD} ${RESOLVERS} ${CLAUDE_CODE_SSE_PORT} and
 * the paths of the environment (${SSH_AUTH_SOCK}, ${GITHUB_ENV}, ...):
 * values, expansion into patterns, and lexical path normalization. */
#include <arpa/inet.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules/load-internal.h"

#define VARS_MAX_RESOLVERS 16

static bool glob_component(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	}
	return false;
}

int vars_normalize(char *path)
{
	char *out = path, *p = path;
	int rc = 0;

	if (path[0] != '/')
		return 0;
	/* out always ends at a component boundary; "" stands for "/". */
	while (*p) {
		char *start, *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		end = p;
		n = (size_t)(end - start);
		if (n == 1 && start[0] == '.')
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.') {
			char *slash;

			if (out == path)
				continue; /* "/.." is "/" */
			slash = out - 1;
			while (slash > path && *slash != '/')
				slash--;
			if (glob_component(slash + 1, (size_t)(out - slash - 1)))
				rc = -1;
			out = slash;
			continue;
		}
		*out++ = '/';
		memmove(out, start, n);
		out += n;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
	return rc;
}

/* Static storage: rules_vars holds borrowed pointers, and these values
 * live for the program's run.  Not thread-safe, called once by main(). */
static char vars_cwd_buf[PATH_MAX], vars_root_buf[PATH_MAX], vars_home_buf[PATH_MAX],
	vars_tmp_buf[PATH_MAX], vars_env_buf[RULES_ENV_PATHS][PATH_MAX], vars_port_buf[8];

const char *const rules_env_path_names[RULES_ENV_PATHS] = {
	[RULES_ENV_SSH_AUTH_SOCK] = "SSH_AUTH_SOCK",
	[RULES_ENV_GITHUB_ENV] = "GITHUB_ENV",
	[RULES_ENV_GITHUB_PATH] = "GITHUB_PATH",
	[RULES_ENV_GITHUB_OUTPUT] = "GITHUB_OUTPUT",
	[RULES_ENV_GITHUB_STATE] = "GITHUB_STATE",
};

/* A port number as an IDE writes it: 1-65535, decimal digits only. */
static bool vars_is_port(const char *s)
{
	unsigned long v = 0;

	if (!s || !*s || strlen(s) > 5)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	return v >= 1 && v <= 65535 && s[0] != '0';
}

/* Events carry paths with symlinks resolved (the tracee's view), so the
 * variables must be resolved the same way or ${ROOT} under a symlinked
 * directory would never match; lexical normalization when the path does
 * not exist (yet). */
static const char *vars_resolve(char *buf, const char *path)
{
	char tmp[PATH_MAX];

	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX)
		return NULL;
	if (realpath(path, tmp)) {
		snprintf(buf, PATH_MAX, "%s", tmp);
	} else {
		snprintf(buf, PATH_MAX, "%s", path);
		vars_normalize(buf);
	}
	return buf;
}

void rules_vars_from_env(struct rules_vars *vars, const char *root)
{
	char tmp[PATH_MAX];
	const char *s;

	memset(vars, 0, sizeof(*vars));
	if (getcwd(tmp, sizeof(tmp)))
		vars->cwd = vars_resolve(vars_cwd_buf, tmp);
	if (root && root[0]) {
		if (root[0] == '/')
			vars->root = vars_resolve(vars_root_buf, root);
		else if (vars->cwd &&
			 (size_t)snprintf(tmp, sizeof(tmp), "%s/%s", vars->cwd, root) < sizeof(tmp))
			vars->root = vars_resolve(vars_root_buf, tmp);
	}
	s = getenv("HOME");
	if (s && s[0] == '/') {
		vars->home = vars_resolve(vars_home_buf, s);
	} else {
		struct passwd *pw = getpwuid(getuid());

		if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
			vars->home = vars_resolve(vars_home_buf, pw->pw_dir);
	}
	s = getenv("TMPDIR");
	if (s && s[0] == '/')
		vars->tmpdir = vars_resolve(vars_tmp_buf, s);
	for (int i = 0; i < RULES_ENV_PATHS; i++) {
		s = getenv(rules_env_path_names[i]);
		if (s && s[0] == '/' && strlen(s) < sizeof(vars_env_buf[i])) {
			snprintf(vars_env_buf[i], sizeof(vars_env_buf[i]), "%s", s);
			vars_normalize(vars_env_buf[i]);
			vars->env_path[i] = vars_env_buf[i];
		}
	}
	s = getenv("CLAUDE_CODE_SSE_PORT");
	if (vars_is_port(s)) {
		snprintf(vars_port_buf, sizeof(vars_port_buf), "%s", s);
		vars->ide_port = vars_port_buf;
	}
	vars->resolv_conf = NULL;
}

/* Nameserver addresses of resolv.conf(5), validated; scope ids dropped. */
static size_t vars_resolvers(const char *path, char out[][INET6_ADDRSTRLEN], size_t max)
{
	FILE *f = fopen(path, "re");
	char line[512];
	size_t n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = line, *addr, *end;
		unsigned char bin[16];

		p += strspn(p, " \t");
		if (strncmp(p, "nameserver", 10) || !strchr(" \t", p[10]))
			continue;
		addr = p + 10 + strspn(p + 10, " \t");
		end = addr + strcspn(addr, " \t\r\n%#;");
		*end = '\0';
		if (strlen(addr) >= INET6_ADDRSTRLEN)
			continue;
		if (inet_pton(AF_INET, addr, bin) != 1 && inet_pton(AF_INET6, addr, bin) != 1)
			continue;
		snprintf(out[n++], INET6_ADDRSTRLEN, "%s", addr);
	}
	fclose(f);
	return n;
}

/* The expansion being built.  Not open_memstream(): glibc gives each
 * stream a zeroed 8 KiB buffer, and every pattern of every policy is
 * expanded at each start (a third of the supervisor's start-up
 * instructions went to calloc and memset). */
struct vars_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void buf_putc(struct vars_buf *b, char c)
{
	if (b->failed)
		return;
	if (b->len + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 128;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

/* N bytes at once: most of a pattern is literal text. */
static void buf_put(struct vars_buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 128;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void put_escaped(struct vars_buf *b, const char *v, unsigned flags)
{
	const char *special = (flags & VARS_ESCAPE_ALT) ? "\\*?[]|"
			      : (flags & VARS_ESCAPE_GLOB) ? "\\*?[]" : "";
	size_t plain = strcspn(v, special);

	buf_put(b, v, plain);
	v += plain;
	for (; *v; v++) {
		if ((flags & VARS_ESCAPE_GLOB) && strchr("\\*?[]", *v))
			buf_putc(b, '\\');
		else if ((flags & VARS_ESCAPE_ALT) && *v == '|')
			buf_putc(b, '\\');
		buf_putc(b, *v);
	}
}

void vars_result_free(struct vars_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->v[i]);
	free(res->v);
	memset(res, 0, sizeof(*res));
}

static int vars_value(const struct rules_vars *vars, const char *name, char *buf,
		      const char **dropped, char *msg, size_t msg_size)
{
	const char *v = NULL;
	char cwd[PATH_MAX];

	*dropped = NULL;
	if (!strcmp(name, "ROOT") || !strcmp(name, "CWD")) {
		v = !strcmp(name, "ROOT") ? vars->root : NULL;
		if (!v)
			v = vars->cwd;
		if (!v)
			v = getcwd(cwd, sizeof(cwd));
		if (!v) {
			snprintf(msg, msg_size, "${%s}: the current directory is unknown", name);
			return -1;
		}
	} else if (!strcmp(name, "HOME")) {
		v = vars->home;
		if (!v) {
			snprintf(msg, msg_size,
				 "${HOME} is unset (no HOME and no home directory in the passwd entry)");
			return -1;
		}
	} else if (!strcmp(name, "TMPDIR")) {
		v = vars->tmpdir ? vars->tmpdir : "/tmp";
	} else {
		int i;

		for (i = 0; i < RULES_ENV_PATHS && strcmp(name, rules_env_path_names[i]); i++)
			;
		if (i == RULES_ENV_PATHS) {
			snprintf(msg, msg_size, "unknown variable ${%s} (known: ROOT HOME TMPDIR CWD "
				 "RESOLVERS CLAUDE_CODE_SSE_PORT SSH_AUTH_SOCK GITHUB_ENV GITHUB_PATH "
				 "GITHUB_OUTPUT GITHUB_STATE; \"$$\" is a literal '$')", name);
			return -1;
		}
		v = vars->env_path[i];
		if (!v) {
			*dropped = rules_env_path_names[i];
			return 0;
		}
	}
	if (v[0] != '/' || strlen(v) >= PATH_MAX) {
		snprintf(msg, msg_size, "${%s} is not an absolute path", name);
		return -1;
	}
	memcpy(buf, v, strlen(v) + 1); /* fits: checked above */
	vars_normalize(buf);
	return 0;
}

int vars_expand(const struct rules_vars *vars, const char *s, unsigned flags,
		struct vars_result *res, char *msg, size_t msg_size)
{
	struct vars_buf b = { 0 };
	char *out = NULL;
	long resolvers_at = -1;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	buf_putc(&b, '\0'); /* an empty expansion is "", not NULL */
	b.len = 0;
	while (*s) {
		char name[32], value[PATH_MAX];
		const char *end;
		size_t n;

		if (s[0] != '$') {
			const char *dollar = strchrnul(s, '$');

			buf_put(&b, s, (size_t)(dollar - s));
			s = dollar;
			continue;
		}
		if (s[1] == '$') {
			buf_putc(&b, '$');
			s += 2;
			continue;
		}
		if (s[1] != '{') {
			buf_putc(&b, *s++);
			continue;
		}
		end = strchr(s + 2, '}');
		if (!end) {
			snprintf(msg, msg_size, "unterminated \"${\" (write \"$$\" for a literal '$')");
			goto out;
		}
		n = (size_t)(end - s - 2);
		if (n == 0 || n >= sizeof(name)) {
			snprintf(msg, msg_size, "unknown variable ${%.*s}", (int)(n < 64 ? n : 64),
				 s + 2);
			goto out;
		}
		memcpy(name, s + 2, n);
		name[n] = '\0';
		s = end + 1;
		if (!strcmp(name, "RESOLVERS")) {
			if (!(flags & VARS_RESOLVERS)) {
				snprintf(msg, msg_size, "${RESOLVERS} is only valid in net patterns");
				goto out;
			}
			if (resolvers_at >= 0) {
				snprintf(msg, msg_size, "${RESOLVERS} may appear only once in a pattern");
				goto out;
			}
			resolvers_at = (long)b.len;
			continue;
		}
		if (!strcmp(name, "CLAUDE_CODE_SSE_PORT")) {
			/* A port, not a path: no resolving, no escaping. */
			if (!(flags & VARS_RESOLVERS)) {
				snprintf(msg, msg_size,
					 "${CLAUDE_CODE_SSE_PORT} is only valid in net patterns");
				goto out;
			}
			if (!vars_is_port(vars->ide_port)) {
				res->dropped = "CLAUDE_CODE_SSE_PORT";
				rc = 0;
				goto out;
			}
			buf_put(&b, vars->ide_port, strlen(vars->ide_port));
			continue;
		}
		if (vars_value(vars, name, value, &res->dropped, msg, msg_size) < 0)
			goto out;
		if (res->dropped) {
			rc = 0; /* dropped: no results */
			goto out;
		}
		put_escaped(&b, value, flags);
	}
	out = b.p;
	b.p = NULL;
	if (b.failed) {
		snprintf(msg, msg_size, "out of memory");
		goto out;
	}
	if (resolvers_at < 0) {
		res->v = malloc(sizeof(*res->v));
		if (!res->v) {
			snprintf(msg, msg_size, "out of memory");
			goto out;
		}
		res->v[0] = out;
		res->n = 1;
		out = NULL;
		rc = 0;
	} else {
		char addrs[VARS_MAX_RESOLVERS][INET6_ADDRSTRLEN];
		const char *conf = vars->resolv_conf ? vars->resolv_conf : "/etc/resolv.conf";
		size_t na = vars_resolvers(conf, addrs, VARS_MAX_RESOLVERS);
		const char *suffix = out + resolvers_at;
		bool port_follows = suffix[0] == ':';

		if (!na) {
			res->dropped = "RESOLVERS";
			rc = 0;
			goto out;
		}
		res->v = calloc(na, sizeof(*res->v));
		if (!res->v) {
			snprintf(msg, msg_size, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < na; i++) {
			bool v6 = strchr(addrs[i], ':') != NULL;
			char *one;

			if (asprintf(&one, "%.*s%s%s%s%s", (int)resolvers_at, out,
				     v6 && port_follows ? "[" : "", addrs[i],
				     v6 && port_follows ? "]" : "", suffix) < 0) {
				snprintf(msg, msg_size, "out of memory");
				vars_result_free(res);
				goto out;
			}
			res->v[res->n++] = one;
		}
		rc = 0;
	}
out:
	free(b.p);
	free(out);
	if (rc < 0)
		vars_result_free(res);
	return rc;
}
