#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/openflags.h"
#include "lib/syscall-rename.h"
#include "lib/textesc.h"
#include "lib/utf8.h"
#include "lib/utc.h"
#include "lib/xalloc.h"
#include "tracer/record/record.h"
#include "tracer/record/writer.h"

/* ---- strings ---- */

/* A JSON string of the bytes s..s+len: valid UTF-8 as is, each invalid
 * byte as the text "\xHH" (see record.h). */
static json_t *record_jstrn(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char *buf, *w;
	json_t *j;
	bool clean = true;

	for (const unsigned char *q = p; q < end;) {
		size_t n = *q ? utf8_len(q, end) : 0;

		if (!n) {
			clean = false;
			break;
		}
		q += n;
	}
	if (clean)
		return json_stringn(s, len);
	w = buf = xmalloc(len * 4 + 1);
	while (p < end) {
		size_t n = *p ? utf8_len(p, end) : 0;

		if (n) {
			memcpy(w, p, n);
			w += n;
			p += n;
		} else {
			w += sprintf(w, "\\x%02X", *p);
			p++;
		}
	}
	j = json_stringn(buf, (size_t)(w - buf));
	free(buf);
	return j;
}

json_t *record_jstr(const char *s)
{
	return s ? record_jstrn(s, strlen(s)) : json_null();
}

/* Every record carries its process's argv: the first RECORD_ARGV_MAX
 * arguments, and of RECORD_ARGV_BYTES in all (the last one cut), keep a
 * log line of a program run with an argv of megabytes readable.  The
 * whole argv is judged (tracer/syscall/call.h). */
#define RECORD_ARGV_MAX 256
#define RECORD_ARGV_BYTES (64 * 1024)

static json_t *record_jargv(const char *const *argv, size_t argc)
{
	json_t *a = json_array();
	size_t left = RECORD_ARGV_BYTES;

	for (size_t i = 0; i < argc && i < RECORD_ARGV_MAX && argv && argv[i] && left; i++) {
		size_t n = strnlen(argv[i], left);
		char *cut = argv[i][n] ? xstrndup(argv[i], n) : NULL;

		json_array_append_new(a, record_jstr(cut ? cut : argv[i]));
		free(cut);
		left -= n;
	}
	return a;
}

/* ---- pieces ---- */

static void record_time(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	utc_rfc3339(&ts, buf, size);
}

static json_t *record_cwd(pid_t pid)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return json_null();
	return record_jstrn(buf, (size_t)n);
}

static const char *record_errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "EUNKNOWN";
}

/* ---- output ---- */

static void record_write_line(struct session *s, char *text)
{
	size_t len = strlen(text), off = 0;

	text[len++] = '\n'; /* json_dumps left room: see record_dump() */
	while (off < len) {
		ssize_t n = write(s->log_fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			if (!s->log_warned)
				warn_errno("cannot write the log %s, records are being lost "
					   "(agenttrace will exit 125)", s->opt->log);
			s->log_warned = true;
			s->lost++;
			return;
		}
		off += (size_t)n;
	}
}

void record_dump(struct session *s, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *line;

	if (!text) {
		s->lost++;
		if (!s->log_warned)
			warn_msg("cannot encode a record (out of memory?); records are being lost");
		s->log_warned = true;
		return;
	}
	/* Room for the newline, so that a record is one write(). */
	line = xrealloc(text, strlen(text) + 2);
	record_write_line(s, line);
	free(line);
}

static const char *record_base(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;

	return b ? b + 1 : (p ? p : "?");
}

/* What an alert is about, as its human line names it: the program run,
 * the path (both of a rename), the address, or the call. */
static void record_object_text(const struct record *r, char *object, size_t size)
{
	if (r->kind == RULES_KIND_EXEC && r->target)
		snprintf(object, size, "%s", r->target);
	else if (r->path && r->path2)
		snprintf(object, size, "%s -> %s", r->path, r->path2);
	else if (r->path)
		snprintf(object, size, "%s", r->path);
	else if (r->addr && r->port >= 0)
		snprintf(object, size, strchr(r->addr, ':') ? "[%s]:%d" : "%s:%d",
			 r->addr, r->port);
	else if (r->addr)
		snprintf(object, size, "%s", r->addr);
	else if (r->detail)
		snprintf(object, size, "%s", r->detail);
	else
		snprintf(object, size, "%s", r->syscall ? r->syscall : "");
	if (r->has_listener && r->listener_pid) {
		size_t n = strlen(object);

		snprintf(object + n, size - n, " (listening: pid %d %s)",
			 (int)r->listener_pid, record_base(r->listener_exe));
	}
}

/* "denied write /home/u/.bashrc (write.dotfiles: why) by pid 123 bash":
 * the human line of an alert, without the "agenttrace: " prefix. */
static void record_human_line(const struct record *r, const char *object, char *line,
			      size_t size)
{
	const char *verb = r->action && strcmp(r->action, "deny") == 0 ? "denied" : "alert";
	const char *kind = r->kind >= 0 ? session_kind_name(r->kind) : "event";

	if (r->why && *r->why)
		snprintf(line, size, "%s %s %s (%s: %s) by pid %d %s", verb, kind, object,
			 r->rule ? r->rule : "?", r->why, (int)r->pid, record_base(r->exe));
	else
		snprintf(line, size, "%s %s %s (%s) by pid %d %s", verb, kind, object,
			 r->rule ? r->rule : "?", (int)r->pid, record_base(r->exe));
}

json_t *record_head(struct session *s, const char *event, pid_t pid, pid_t ppid,
			   const char *exe, const char *const *argv, size_t argc, bool no_cwd)
{
	char t[40];
	json_t *o = json_object();

	record_time(t, sizeof(t));
	json_object_set_new(o, "v", json_integer(1));
	json_object_set_new(o, "time", json_string(t));
	json_object_set_new(o, "session", json_string(s->id));
	json_object_set_new(o, "seq", json_integer((json_int_t)++s->seq));
	json_object_set_new(o, "event", json_string(event));
	json_object_set_new(o, "pid", json_integer(pid));
	json_object_set_new(o, "ppid", json_integer(ppid));
	json_object_set_new(o, "exe", record_jstr(exe));
	json_object_set_new(o, "argv", record_jargv(argv, argc));
	json_object_set_new(o, "cwd", no_cwd ? json_null() : record_cwd(pid));
	return o;
}

static void record_set_str(json_t *o, const char *key, const char *v)
{
	if (v)
		json_object_set_new(o, key, record_jstr(v));
}

/* "elf": what the kernel was asked to run.  "static" is the fact that
 * matters most: the preload backend cannot see inside such a program. */
static json_t *record_elf(const struct elf_facts *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "format", json_string(e->is_elf ? "elf" : e->shebang[0] ? "script" : "other"));
	if (e->is_elf) {
		json_object_set_new(o, "static", json_boolean(e->is_static));
		if (e->interp[0])
			json_object_set_new(o, "interp", record_jstr(e->interp));
		if (e->build_id[0])
			json_object_set_new(o, "build_id", json_string(e->build_id));
	} else if (e->shebang[0]) {
		json_object_set_new(o, "shebang", record_jstr(e->shebang));
	}
	json_object_set_new(o, "setuid", json_boolean(e->setuid));
	json_object_set_new(o, "setgid", json_boolean(e->setgid));
	return o;
}

static json_t *record_backtrace(const struct bt_frame *f, int n)
{
	json_t *a = json_array();
	char pc[24];

	for (int i = 0; i < n; i++) {
		json_t *o = json_object();

		snprintf(pc, sizeof(pc), "0x%" PRIx64, f[i].pc);
		json_object_set_new(o, "pc", json_string(pc));
		json_object_set_new(o, "sym", f[i].sym[0] ? record_jstr(f[i].sym) : json_null());
		json_object_set_new(o, "offset", json_integer((json_int_t)f[i].offset));
		json_object_set_new(o, "object", f[i].object[0] ? record_jstr(f[i].object) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *record_python(const struct py_frame *f, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "file", record_jstr(f[i].file));
		json_object_set_new(o, "line", f[i].line > 0 ? json_integer(f[i].line) : json_null());
		json_object_set_new(o, "function", record_jstr(f[i].function));
		json_array_append_new(a, o);
	}
	return a;
}

/* script_size, script_sha256; program_written, program_size,
 * program_sha256; evidence: the copies kept. */
static void record_set_evidence(json_t *o, const struct record *r)
{
	const struct evidence_file *sf = r->script_file, *pf = r->program_file;
	json_t *copies;

	if (sf && sf->known) {
		json_object_set_new(o, "script_size", json_integer((json_int_t)sf->size));
		if (sf->hashed)
			json_object_set_new(o, "script_sha256", json_string(sf->sha256));
	}
	if (pf && pf->known) {
		json_object_set_new(o, "program_written", json_true());
		json_object_set_new(o, "program_size", json_integer((json_int_t)pf->size));
		if (pf->hashed)
			json_object_set_new(o, "program_sha256", json_string(pf->sha256));
	}
	if (!(sf && sf->copied) && !(pf && pf->copied))
		return;
	copies = json_array();
	if (sf && sf->copied)
		json_array_append_new(copies, record_jstr(sf->copy));
	if (pf && pf->copied && !(sf && sf->copied && strcmp(sf->copy, pf->copy) == 0))
		json_array_append_new(copies, record_jstr(pf->copy));
	json_object_set_new(o, "evidence", copies);
}

void record_exec_evidence(struct session *s, struct record *r, struct evidence_file files[2])
{
	const char *program = r->target ? r->target : r->exe;

	if (r->script_path) {
		evidence_file(&s->evidence, r->script_path, &files[0]);
		r->script_file = &files[0];
	}
	if (program && evidence_was_written(&s->evidence, program)) {
		evidence_file(&s->evidence, program, &files[1]);
		r->program_file = &files[1];
	}
}

void record_emit(struct session *s, const struct record *r)
{
	bool alert = strcmp(r->event, "alert") == 0;
	json_t *o;

	if (alert && r->kind >= 0 && r->kind < SESSION_KIND_COUNT && r->action)
		session_count(s, r->kind,
			      strcmp(r->action, "deny") == 0 ? RULES_ACTION_DENY :
			      strcmp(r->action, "alert") == 0 ? RULES_ACTION_ALERT :
			      RULES_ACTION_ALLOW, r->rule);
	if (alert && r->action && strcmp(r->action, "deny") == 0)
		session_note_own_sandbox(s, r->rule, record_base(r->exe));
	if (alert) {
		char object[PATH_MAX * 2 + 64], raw[PATH_MAX * 2 + 1024], line[sizeof(raw) * 4];
		struct notify_alert na = {
			.deny = r->action && strcmp(r->action, "deny") == 0,
			.rule = r->rule,
			.line = line,
			.object = object,
			/* The file it is about: a write's or read's path, the
			 * script or program an exec runs. */
			.file = r->kind == RULES_KIND_EXEC ? (r->script_path ? r->script_path : r->target) :
				r->kind == RULES_KIND_WRITE || r->kind == RULES_KIND_READ ? r->path : NULL,
		};

		/* Escaped once for stderr, the annotation and syslog alike. */
		record_object_text(r, object, sizeof(object));
		record_human_line(r, object, raw, sizeof(raw));
		textesc(raw, strlen(raw), 0, line, sizeof(line));
		/* Under GitHub Actions the annotation is the denial's line on
		 * stderr: the human line would say it twice. */
		if (!notify_alert(&s->notify, &na) && (s->log_fd < 0 || s->opt->verbosity > 0))
			out_msg("%s", line);
	}
	if (s->log_fd < 0)
		return;

	o = record_head(s, r->event, r->pid, r->ppid, r->exe, r->argv, r->argc,
			r->no_cwd || r->cwd);
	if (r->cwd)
		json_object_set_new(o, "cwd", record_jstr(r->cwd));
	if (r->action)
		json_object_set_new(o, "action", json_string(r->action));
	if (alert)
		json_object_set_new(o, "mode", json_string(s->policy->mode == RULES_MODE_AUDIT ?
							   "audit" : "enforce"));
	if (r->kind >= 0)
		json_object_set_new(o, "kind", json_string(session_kind_name(r->kind)));
	record_set_str(o, "syscall", r->syscall);
	record_set_str(o, "path", r->path);
	record_set_str(o, "path2", r->path2);
	if (r->has_flags) {
		char f[256];

		openflags_text(r->flags, f, sizeof(f));
		json_object_set_new(o, "flags", json_string(f));
	} else if (r->exchange) {
		json_object_set_new(o, "flags", json_string(SYSCALL_EXCHANGE_TEXT));
	}
	record_set_str(o, "addr", r->addr);
	if (r->port >= 0)
		json_object_set_new(o, "port", json_integer(r->port));
	record_set_str(o, "family", r->family);
	if (r->host || r->host_source)
		json_object_set_new(o, "host", record_jstr(r->host));
	record_set_str(o, "host_source", r->host_source);
	record_set_str(o, "endpoint", r->endpoint);
	if (r->has_listener) {
		json_object_set_new(o, "listener_pid",
				    r->listener_pid ? json_integer(r->listener_pid) : json_null());
		json_object_set_new(o, "listener_exe", record_jstr(r->listener_exe));
	}
	record_set_str(o, "target", r->target);
	if (r->target_argv)
		json_object_set_new(o, "target_argv", record_jargv(r->target_argv, r->target_argc));
	record_set_str(o, "loader", r->loader);
	record_set_str(o, "script_path", r->script_path);
	record_set_str(o, "program_name", r->program_name);
	record_set_evidence(o, r);
	if (r->err)
		json_object_set_new(o, "errno", json_string(record_errno_name(r->err)));
	record_set_str(o, "rule", r->rule);
	if (r->rule && (alert || r->why))
		json_object_set_new(o, "why", r->why && *r->why ? record_jstr(r->why) : json_null());
	record_set_str(o, "suggest", r->suggest);
	record_set_str(o, "suggest_option", r->suggest_option);
	record_set_str(o, "content", r->content);
	if (r->has_exit) {
		json_object_set_new(o, "exit_code",
				    r->exit_code >= 0 ? json_integer(r->exit_code) : json_null());
		json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	}
	json_object_set_new(o, "context", s->context ? record_jstr(s->context) : json_null());
	/* Records of the session itself (limits, warnings) carry the
	 * session's backend. */
	json_object_set_new(o, "backend", json_string(r->backend ? r->backend :
						      s->preload_only ? "preload" : "ptrace"));
	if (r->script && r->script_len)
		json_object_set_new(o, "script", record_jstrn(r->script, r->script_len));
	if (r->elf)
		json_object_set_new(o, "elf", record_elf(r->elf));
	if (r->frames && r->n_frames > 0)
		json_object_set_new(o, "backtrace", record_backtrace(r->frames, r->n_frames));
	if (r->n_py_frames > 0)
		json_object_set_new(o, "python", record_python(r->py_frames, r->n_py_frames));
	record_dump(s, o);
	json_decref(o);
}

/* ---- objects ---- */

bool record_addr_text(const struct rules_event *ev, char *buf, size_t size)
{
	if (ev->family == AF_UNIX) {
		if (!ev->unix_path)
			return false;
		snprintf(buf, size, "%s", ev->unix_path);
		return true;
	}
	if (ev->family != AF_INET && ev->family != AF_INET6)
		return false;
	return inet_ntop(ev->family, ev->addr, buf, (socklen_t)size) != NULL;
}

const char *record_family_name(int family)
{
	switch (family) {
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_UNIX: return "unix";
	default: return NULL;
	}
}

void record_end_write(struct session *s, pid_t pid, const struct tracee_info *info,
		      const char *path, const char *rule, const char *why, const char *detail,
		      bool audit)
{
	struct record r = { 0 };

	r.pid = pid ? pid : s->main_pid;
	if (!pid)
		info = s->main_info;
	if (info) {
		r.exe = info->exe;
		r.argv = (const char *const *)info->argv;
		r.argc = info->argc;
	}
	r.no_cwd = true;
	r.event = "alert";
	r.action = audit ? "alert" : "deny";
	r.kind = SESSION_KIND_WRITE;
	r.port = -1;
	r.path = path;
	r.rule = rule;
	r.why = why;
	r.detail = detail;
	record_emit(s, &r);
}

void record_who(struct record *r, const struct tracee *t)
{
	r->pid = t->tgid;
	r->ppid = t->ppid;
	if (t->info) {
		r->exe = t->info->exe;
		r->argv = (const char *const *)t->info->argv;
		r->argc = t->info->argc;
	}
}
