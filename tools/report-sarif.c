/* SARIF 2.1.0 for code-scanning upload: one result per distinct finding
 * (rule + object), the rules that fired as reportingDescriptors.  A
 * write or read inside the project points at the file (relative to
 * %SRCROOT%, the run's directory); anything else points at the log line
 * that holds the evidence. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tools/report.h"

#define SARIF_SCHEMA \
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

/* RFC 3986: everything but unreserved characters and '/' is
 * percent-encoded. */
static char *sarif_uri_path(const char *prefix, const char *path)
{
	size_t n = strlen(prefix), cap = n + strlen(path) * 3 + 1;
	char *out = xmalloc(cap), *w = out + n;

	memcpy(out, prefix, n);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p))
			*w++ = (char)*p;
		else
			w += sprintf(w, "%%%02X", *p);
	}
	*w = '\0';
	return out;
}

static const char *sarif_level(const struct report_alert *a)
{
	if (!a->action)
		return "note";
	return strcmp(a->action, "deny") == 0 ? "error" : "warning";
}

static json_t *sarif_text(const char *s)
{
	return json_pack("{s:s}", "text", s);
}

static uint64_t sarif_hash(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *s = a; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ 0x1f) * 1099511628211ull;
	for (const char *s = b; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The project-relative path of a write/read object, or NULL. */
static const char *sarif_in_root(const struct report *r, const struct report_alert *a)
{
	size_t n;

	if (!r->cwd || (a->kind != REPORT_KIND_WRITE && a->kind != REPORT_KIND_READ))
		return NULL;
	if (strstr(a->object, " -> "))
		return NULL;
	n = strlen(r->cwd);
	if (n < 2 || strncmp(a->object, r->cwd, n) != 0 || a->object[n] != '/' || !a->object[n + 1])
		return NULL;
	return a->object + n + 1;
}

static json_t *sarif_location(const struct report *r, const struct report_alert *a)
{
	const char *rel = sarif_in_root(r, a);
	json_t *art;
	char *uri;

	if (rel) {
		uri = sarif_uri_path("", rel);
		art = json_pack("{s:s,s:s}", "uri", uri, "uriBaseId", "%SRCROOT%");
		free(uri);
		return json_pack("{s:{s:o}}", "physicalLocation", "artifactLocation", art);
	}
	uri = sarif_uri_path("", r->log_name);
	art = json_pack("{s:s}", "uri", uri);
	free(uri);
	return json_pack("{s:{s:o,s:{s:I}}}", "physicalLocation", "artifactLocation", art, "region",
			 "startLine", (json_int_t)(a->line ? a->line : 1));
}

static json_t *sarif_result(const struct report *r, const struct report_finding *f,
			    size_t rule_index)
{
	const struct report_alert *a = &r->alerts[f->first];
	json_t *res, *props;
	char *msg, fp[32];

	if (a->action)
		msg = xasprintf("%s %s %s by pid %ld %s%s%s", report_verb(a), a->kind_name, a->object,
				a->pid, a->exe ? a->exe : "?", a->why ? ": " : "", a->why ? a->why : "");
	else
		msg = xasprintf("%s: %s", a->rule, a->why ? a->why : "");
	snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)sarif_hash(a->rule, a->object));
	props = json_pack("{s:s,s:s,s:s,s:I,s:s,s:I}", "action", a->action ? a->action : "warning",
			  "kind", a->kind_name, "object", a->object, "pid", (json_int_t)a->pid,
			  "program", a->exe ? a->exe : "", "logLine", (json_int_t)a->line);
	if (a->cmdline && *a->cmdline)
		json_object_set_new(props, "commandLine", json_string(a->cmdline));
	if (a->syscall)
		json_object_set_new(props, "syscall", json_string(a->syscall));
	if (a->err)
		json_object_set_new(props, "errno", json_string(a->err));
	if (a->suggest)
		json_object_set_new(props, "suggest", json_string(a->suggest));
	if (a->time)
		json_object_set_new(props, "time", json_string(a->time));
	if (a->mode)
		json_object_set_new(props, "mode", json_string(a->mode));
	if (a->script)
		json_object_set_new(props, "script", json_string(a->script));
	if (a->n_frames) {
		json_t *bt = json_array();

		for (size_t i = 0; i < a->n_frames; i++) {
			char fr[1024];

			report_frame_text(&a->frames[i], i, fr, sizeof(fr));
			json_array_append_new(bt, json_string(fr));
		}
		json_object_set_new(props, "backtrace", bt);
	}
	res = json_pack("{s:s,s:I,s:s,s:s,s:o,s:[o],s:{s:s},s:I,s:o}",
			"ruleId", a->rule,
			"ruleIndex", (json_int_t)rule_index,
			"kind", "fail",
			"level", sarif_level(a),
			"message", sarif_text(msg),
			"locations", sarif_location(r, a),
			"partialFingerprints", "agenttraceFinding/v1", fp,
			"occurrenceCount", (json_int_t)f->count,
			"properties", props);
	free(msg);
	return res;
}

static json_t *sarif_rule(const struct report_rule *ru, const char *level)
{
	char *short_text = ru->why ? NULL : xasprintf("agenttrace rule %s", ru->id);
	json_t *o;

	o = json_pack("{s:s,s:o,s:{s:s},s:{s:s,s:[s,s]}}",
		      "id", ru->id,
		      "shortDescription", sarif_text(ru->why ? ru->why : short_text),
		      "defaultConfiguration", "level", level,
		      "properties", "kind", ru->kind_name, "tags", "security", ru->kind_name);
	free(short_text);
	return o;
}

int report_sarif(const struct report *r, FILE *out)
{
	size_t *index = xmalloc((r->n_rules + 1) * sizeof(*index));
	json_t *rules = json_array(), *results = json_array(), *run, *root, *inv;
	size_t n_rules = 0;
	int rc;

	for (size_t i = 0; i < r->n_rules; i++)
		index[i] = REPORT_NONE;
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct report_finding *f = &r->findings[i];
		const struct report_alert *a = &r->alerts[f->first];
		size_t ri = REPORT_NONE;

		for (size_t j = 0; j < r->n_rules; j++)
			if (strcmp(r->rules[j].id, a->rule) == 0) {
				ri = j;
				break;
			}
		if (ri == REPORT_NONE)
			continue;
		if (index[ri] == REPORT_NONE) {
			index[ri] = n_rules++;
			json_array_append_new(rules, sarif_rule(&r->rules[ri], sarif_level(a)));
		}
		json_array_append_new(results, sarif_result(r, f, index[ri]));
	}
	free(index);

	run = json_pack("{s:{s:{s:s,s:s,s:o}}}", "tool", "driver",
			"name", "agenttrace",
			"version", PACKAGE_VERSION,
			"rules", rules);
	if (r->cwd) {
		char *uri = sarif_uri_path("file://", r->cwd), *dir = xasprintf("%s/", uri);

		json_object_set_new(run, "originalUriBaseIds",
				    json_pack("{s:{s:s}}", "%SRCROOT%", "uri", dir));
		free(uri);
		free(dir);
	}
	inv = json_pack("{s:b}", "executionSuccessful", 1);
	if (r->has_summary) {
		if (r->command && *r->command)
			json_object_set_new(inv, "commandLine", json_string(r->command));
		if (r->signal)
			json_object_set_new(inv, "exitSignalNumber", json_integer(r->signal));
		else
			json_object_set_new(inv, "exitCode", json_integer(r->exit_code));
		if (r->cwd) {
			char *uri = sarif_uri_path("file://", r->cwd);

			json_object_set_new(inv, "workingDirectory", json_pack("{s:s}", "uri", uri));
			free(uri);
		}
	}
	json_object_set_new(inv, "properties",
			    json_pack("{s:s,s:s,s:I}", "policy", r->policy ? r->policy : "",
				      "session", r->session ? r->session : "",
				      "malformedLines", (json_int_t)r->malformed));
	json_object_set_new(run, "invocations", json_pack("[o]", inv));
	json_object_set_new(run, "results", results);
	root = json_pack("{s:s,s:s,s:[o]}", "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs", run);
	if (!root)
		return -1;
	rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc < 0)
		return -1;
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}
