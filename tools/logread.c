#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/logread.h"

int logread_open(struct logread *lr, const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0) {
		logread_init_stream(lr, stdin, "<stdin>");
		return 0;
	}
	f = fopen(path, "re");
	if (!f)
		return -errno;
	logread_init_stream(lr, f, path);
	lr->own = true;
	return 0;
}

void logread_init_stream(struct logread *lr, FILE *f, const char *name)
{
	memset(lr, 0, sizeof(*lr));
	lr->f = f;
	lr->name = strdup(name);
}

void logread_set_bad(struct logread *lr, logread_bad_fn fn, void *arg)
{
	lr->bad = fn;
	lr->bad_arg = arg;
}

void logread_close(struct logread *lr)
{
	if (lr->rec.json)
		json_decref(lr->rec.json);
	if (lr->own && lr->f)
		fclose(lr->f);
	free(lr->buf);
	free(lr->name);
	memset(lr, 0, sizeof(*lr));
}

static void logread_skip(struct logread *lr, const char *why)
{
	lr->malformed++;
	if (lr->bad)
		lr->bad(lr->name ? lr->name : "log", lr->line, why, lr->bad_arg);
}

/* Reads one line into lr->buf (NUL-terminated, without its newline).
 * Returns 1 for a line, 0 at the end, -errno on a read error; *too_long
 * when the line was discarded for its size, *nul when it held a NUL byte,
 * *no_newline when the file ended inside it. */
static int logread_line(struct logread *lr, size_t *len, bool *too_long, bool *nul,
			bool *no_newline)
{
	size_t n = 0;
	int c;

	*too_long = *nul = *no_newline = false;
	for (;;) {
		c = getc_unlocked(lr->f);
		if (c == EOF) {
			if (ferror(lr->f))
				return errno ? -errno : -EIO;
			if (n == 0 && !*too_long)
				return 0;
			*no_newline = true;
			break;
		}
		if (c == '\n')
			break;
		if (c == 0)
			*nul = true;
		if (*too_long)
			continue;
		if (n + 1 >= lr->cap) {
			size_t cap = lr->cap ? lr->cap * 2 : 4096;
			char *nb;

			if (n + 1 >= LOGREAD_MAX_LINE) {
				*too_long = true;
				continue;
			}
			if (cap > LOGREAD_MAX_LINE)
				cap = LOGREAD_MAX_LINE;
			nb = realloc(lr->buf, cap);
			if (!nb)
				return -ENOMEM;
			lr->buf = nb;
			lr->cap = cap;
		}
		lr->buf[n++] = (char)c;
	}
	lr->line++;
	if (lr->buf)
		lr->buf[n] = '\0';
	*len = n;
	return 1;
}

static const char *logread_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long logread_long(const json_t *o, const char *key, long dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

static const json_t *logread_array(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_array(v) ? v : NULL;
}

static void logread_fill(struct logrec *r, json_t *o)
{
	const json_t *rule = json_object_get(o, "rule"), *ec;

	r->json = o;
	r->event = logread_str(o, "event");
	r->time = logread_str(o, "time");
	r->time_ms = r->time ? logread_time_ms(r->time) : -1;
	r->session = logread_str(o, "session");
	r->seq = json_is_integer(json_object_get(o, "seq")) ?
		 (int64_t)json_integer_value(json_object_get(o, "seq")) : -1;
	r->pid = logread_long(o, "pid", -1);
	r->ppid = logread_long(o, "ppid", -1);
	r->exe = logread_str(o, "exe");
	r->argv = logread_array(o, "argv");
	r->cwd = logread_str(o, "cwd");
	r->action = logread_str(o, "action");
	r->mode = logread_str(o, "mode");
	r->kind = logread_str(o, "kind");
	r->syscall = logread_str(o, "syscall");
	r->path = logread_str(o, "path");
	r->path2 = logread_str(o, "path2");
	r->flags = logread_str(o, "flags");
	r->addr = logread_str(o, "addr");
	r->port = logread_long(o, "port", -1);
	r->family = logread_str(o, "family");
	r->host = logread_str(o, "host");
	r->target = logread_str(o, "target");
	r->target_argv = logread_array(o, "target_argv");
	r->loader = logread_str(o, "loader");
	r->script_path = logread_str(o, "script_path");
	r->script_sha256 = logread_str(o, "script_sha256");
	r->program_sha256 = logread_str(o, "program_sha256");
	r->evidence = json_is_array(json_object_get(o, "evidence")) ? json_object_get(o, "evidence") :
		      NULL;
	r->program_name = logread_str(o, "program_name");
	r->err = logread_str(o, "errno");
	r->rule = json_is_object(rule) ? logread_str(rule, "id") : json_string_value(rule);
	r->why = logread_str(o, "why");
	r->suggest = logread_str(o, "suggest");
	r->content = logread_str(o, "content");
	r->context = logread_str(o, "context");
	r->backend = logread_str(o, "backend");
	r->script = logread_str(o, "script");
	r->backtrace = logread_array(o, "backtrace");
	ec = json_object_get(o, "exit_code");
	r->has_exit = ec != NULL;
	r->exit_code = json_is_integer(ec) ? (long)json_integer_value(ec) : -1;
	r->signal = logread_long(o, "signal", 0);
}

int logread_next(struct logread *lr, const struct logrec **out)
{
	char why[256];

	if (lr->rec.json) {
		json_decref(lr->rec.json);
		lr->rec.json = NULL;
	}
	for (;;) {
		bool too_long, nul, no_newline;
		size_t len = 0, start = 0;
		json_error_t jerr;
		const json_t *v;
		json_t *o;
		int r;

		r = logread_line(lr, &len, &too_long, &nul, &no_newline);
		if (r <= 0)
			return r;
		if (too_long) {
			snprintf(why, sizeof(why), "line longer than %u bytes", LOGREAD_MAX_LINE);
			logread_skip(lr, why);
			continue;
		}
		while (start < len && (lr->buf[start] == ' ' || lr->buf[start] == '\t' ||
				       lr->buf[start] == '\r'))
			start++;
		if (start == len)
			continue; /* blank lines are not records, nor errors */
		if (nul) {
			logread_skip(lr, "NUL byte in line");
			continue;
		}
		o = json_loadb(lr->buf + start, len - start, 0, &jerr);
		if (!o) {
			if (no_newline)
				snprintf(why, sizeof(why), "truncated last line (%s)", jerr.text);
			else
				snprintf(why, sizeof(why), "not JSON: %s", jerr.text);
			logread_skip(lr, why);
			continue;
		}
		if (!json_is_object(o)) {
			json_decref(o);
			logread_skip(lr, "not a JSON object");
			continue;
		}
		v = json_object_get(o, "v");
		if (!json_is_integer(v)) {
			json_decref(o);
			logread_skip(lr, "not a record (no \"v\")");
			continue;
		}
		if (json_integer_value(v) != 1) {
			snprintf(why, sizeof(why), "record version %lld not supported (1 is)",
				 (long long)json_integer_value(v));
			json_decref(o);
			logread_skip(lr, why);
			continue;
		}
		if (!json_is_string(json_object_get(o, "event"))) {
			json_decref(o);
			logread_skip(lr, "record without \"event\"");
			continue;
		}
		logread_fill(&lr->rec, o);
		lr->rec.line = lr->line;
		lr->records++;
		*out = &lr->rec;
		return 1;
	}
}

static int logread_digits(const char **p, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (**p - '0');
	}
	return v;
}

int64_t logread_time_ms(const char *s)
{
	const char *p = s;
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, ms = 0;
	long off = 0;
	time_t t;

	if ((y = logread_digits(&p, 4)) < 0 || *p++ != '-' ||
	    (mo = logread_digits(&p, 2)) < 0 || *p++ != '-' ||
	    (d = logread_digits(&p, 2)) < 0 || (*p != 'T' && *p != 't' && *p != ' '))
		return -1;
	p++;
	if ((h = logread_digits(&p, 2)) < 0 || *p++ != ':' ||
	    (mi = logread_digits(&p, 2)) < 0 || *p++ != ':' ||
	    (sec = logread_digits(&p, 2)) < 0)
		return -1;
	if (*p == '.') {
		int scale = 100;

		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9') {
			ms += (*p - '0') * scale;
			scale /= 10;
			p++;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;

		if ((oh = logread_digits(&p, 2)) < 0 || *p++ != ':' || (om = logread_digits(&p, 2)) < 0)
			return -1;
		off = sign * (oh * 3600L + om * 60L);
	} else {
		return -1;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	return ((int64_t)t - off) * 1000 + ms;
}

const char *logread_argv_at(const json_t *argv, size_t i)
{
	return json_string_value(json_array_get(argv, i));
}

const char *logread_base(const char *path)
{
	const char *b;

	if (!path)
		return "";
	b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}
