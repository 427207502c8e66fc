/* SARIF 2.1.0 for code-scanning upload: one result per distinct finding
 * (rule + object), the rules that fired as reportingDescriptors described
 * by tools/ruledoc.c (descriptions, help, security-severity, precision,
 * tags).
 *
 * Where a result points (agenttrace-report(1), SARIF):
 *  - a write, read or exec whose path is inside the workspace (--root,
 *    else GITHUB_WORKSPACE, else the run's directory from the log) points
 *    at that file, relative to %SRCROOT%;
 *  - anything else (a dotfile in HOME, an address, a system call) has no
 *    file in the repository: it points at the workflow file that ran the
 *    job when GITHUB_WORKFLOW_REF names one, else at the line of the log
 *    that holds the evidence (relative to %SRCROOT% when the log is in
 *    the workspace).  The object itself is a logical location, and the
 *    log line a related location, of every result. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tools/report.h"
#include "tools/ruledoc.h"

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

static uint64_t sarif_hash(const char *const *parts, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		for (const char *s = parts[i]; s && *s; s++)
			h = (h ^ (unsigned char)*s) * 1099511628211ull;
		h = (h ^ 0x1f) * 1099511628211ull;
	}
	return h;
}

/* PATH relative to the workspace, or NULL when it is outside. */
static const char *sarif_rel(const struct report *r, const char *path)
{
	size_t n;

	if (!r->workspace || !path)
		return NULL;
	n = strlen(r->workspace);
	while (n > 1 && r->workspace[n - 1] == '/')
		n--;
	if (n < 2 || strncmp(path, r->workspace, n) != 0 || path[n] != '/' || !path[n + 1])
		return NULL;
	return path + n + 1;
}

/* The file in the workspace that a finding is about, or NULL: the second
 * path of a rename or link (what it creates) before the first, the
 * program of an exec. */
static const char *sarif_file_of(const struct report *r, const struct report_alert *a)
{
	const char *rel;

	switch (a->kind) {
	case REPORT_KIND_WRITE:
	case REPORT_KIND_READ:
		rel = sarif_rel(r, a->path2);
		return rel ? rel : sarif_rel(r, a->path);
	case REPORT_KIND_EXEC:
		return sarif_rel(r, a->target);
	default:
		return NULL;
	}
}

static json_t *sarif_artifact(const char *uri_path, bool in_workspace)
{
	char *uri = sarif_uri_path("", uri_path);
	json_t *o = in_workspace ? json_pack("{s:s,s:s}", "uri", uri, "uriBaseId", "%SRCROOT%") :
				   json_pack("{s:s}", "uri", uri);

	free(uri);
	return o;
}

/* The log line of the evidence. */
static json_t *sarif_log_location(const struct report *r, const struct report_alert *a)
{
	const char *rel = r->log_abs ? sarif_rel(r, r->log_abs) : NULL;

	return json_pack("{s:{s:o,s:{s:I}}}", "physicalLocation",
			 "artifactLocation", sarif_artifact(rel ? rel : r->log_name, rel != NULL),
			 "region", "startLine", (json_int_t)(a->line ? a->line : 1));
}

static json_t *sarif_location(const struct report *r, const struct report_alert *a, bool *on_log)
{
	const char *rel = sarif_file_of(r, a);
	json_t *loc;

	*on_log = false;
	if (rel)
		loc = json_pack("{s:{s:o,s:{s:i}}}", "physicalLocation", "artifactLocation",
				sarif_artifact(rel, true), "region", "startLine", 1);
	else if (r->workflow && r->workspace)
		loc = json_pack("{s:{s:o,s:{s:i}}}", "physicalLocation", "artifactLocation",
				sarif_artifact(r->workflow, true), "region", "startLine", 1);
	else {
		*on_log = true;
		loc = sarif_log_location(r, a);
	}
	if (a->action)
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:s,s:s}]", "fullyQualifiedName", a->object,
					      "kind", "resource"));
	return loc;
}

/* What identifies a finding across runs: the rule, the kind and the
 * object without what changes from run to run (the checkout directory,
 * the address a host name resolved to). */
static void sarif_fingerprint(const struct report *r, const struct report_alert *a, char *fp,
			      size_t size)
{
	const char *parts[4] = { a->rule, a->kind_name, a->object, NULL };
	char *hostport = NULL;
	const char *rel;

	if (a->kind == REPORT_KIND_WRITE || a->kind == REPORT_KIND_READ) {
		if ((rel = sarif_rel(r, a->path)))
			parts[2] = rel;
		if ((rel = sarif_rel(r, a->path2)))
			parts[3] = rel;
		else if (a->path2)
			parts[3] = a->path2;
	} else if (a->kind == REPORT_KIND_EXEC && (rel = sarif_rel(r, a->target))) {
		parts[2] = rel;
	} else if (a->kind == REPORT_KIND_NET && a->host && a->port >= 0) {
		hostport = xasprintf("%s:%ld", a->host, a->port);
		parts[2] = hostport;
	}
	snprintf(fp, size, "%016llx", (unsigned long long)sarif_hash(parts, 4));
	free(hostport);
}

static json_t *sarif_result(const struct report *r, const struct report_finding *f,
			    size_t rule_index)
{
	const struct report_alert *a = &r->alerts[f->first];
	json_t *res, *props, *loc;
	char *msg, fp[32];
	bool on_log;

	if (a->action)
		msg = xasprintf("%s %s %s by pid %ld %s%s%s", report_verb(a), a->kind_name, a->object,
				a->pid, a->exe ? a->exe : "?", a->why ? ": " : "", a->why ? a->why : "");
	else
		msg = xasprintf("%s: %s", a->rule, a->why ? a->why : "");
	sarif_fingerprint(r, a, fp, sizeof(fp));
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
	loc = sarif_location(r, a, &on_log);
	res = json_pack("{s:s,s:I,s:s,s:s,s:o,s:[o],s:{s:s},s:I,s:o}",
			"ruleId", a->rule,
			"ruleIndex", (json_int_t)rule_index,
			"kind", "fail",
			"level", sarif_level(a),
			"message", sarif_text(msg),
			"locations", loc,
			"partialFingerprints", "agenttraceFinding/v2", fp,
			"occurrenceCount", (json_int_t)f->count,
			"properties", props);
	if (!on_log) {
		json_t *rel = sarif_log_location(r, a);

		json_object_set_new(rel, "id", json_integer(1));
		json_object_set_new(rel, "message", sarif_text("the record in the agenttrace log"));
		json_object_set_new(res, "relatedLocations", json_pack("[o]", rel));
	}
	free(msg);
	return res;
}

static json_t *sarif_rule(const struct report_rule *ru, const struct report_alert *a)
{
	struct ruledoc d;
	json_t *o, *tags = json_array();

	ruledoc_describe(ru->id, ru->kind_name, ru->why, a->action, &d);
	for (size_t i = 0; d.tags[i]; i++)
		json_array_append_new(tags, json_string(d.tags[i]));
	o = json_pack("{s:s,s:o,s:o,s:{s:s,s:s},s:{s:s},s:{s:s,s:o,s:s,s:s}}",
		      "id", ru->id,
		      "shortDescription", sarif_text(d.short_text),
		      "fullDescription", sarif_text(d.full_text),
		      "help", "text", d.help_text, "markdown", d.help_markdown,
		      "defaultConfiguration", "level", sarif_level(a),
		      "properties", "kind", ru->kind_name, "tags", tags,
		      "security-severity", d.severity, "precision", d.precision);
	ruledoc_free(&d);
	return o;
}

#define SARIF_DEP_RULE "dependency.added"

/* The rules of the dependency results: agenttrace's own, no policy's. */
static json_t *sarif_own_rule(const char *id, const char *level, const char *short_text,
			      const char *full_text, const char *help)
{
	return json_pack("{s:s,s:o,s:o,s:{s:s,s:s},s:{s:s},s:{s:s,s:[s,s],s:s}}",
			 "id", id,
			 "shortDescription", sarif_text(short_text),
			 "fullDescription", sarif_text(full_text),
			 "help", "text", help, "markdown", help,
			 "defaultConfiguration", "level", level,
			 "properties", "kind", "dependency", "tags", "security", "supply-chain",
			 "precision", "very-high");
}

static json_t *sarif_dep_rule(void)
{
	return sarif_own_rule(SARIF_DEP_RULE, "note", "A dependency was added during the session",
			      "The session added a package to a dependency manifest or lockfile of "
			      "the project: a dependency decision made at run time, which no pull "
			      "request reviewed.",
			      "Review the package, its version and where it comes from; keep the "
			      "change only if it was meant.");
}

#define SARIF_SOURCE_RULE "dependency.install-source"
#define SARIF_SCRIPT_RULE "dependency.install-script"

/* A result of one of those rules at DIR/NAME (in the workspace: relative
 * to %SRCROOT%; NAME NULL: at DIR, a directory, without a region) or, when
 * it is not in the workspace, at the log. */
static json_t *sarif_own_result(const struct report *r, const char *rule, size_t rule_index,
				const char *level, const char *msg, const char *dir, const char *name,
				const char *logical, const char *const *fp_parts, json_t *props)
{
	char *file = dir && name ? xasprintf("%s/%s", dir, name) : dir ? xstrdup(dir) : NULL;
	const char *rel = sarif_rel(r, file);
	const char *log_rel = r->log_abs ? sarif_rel(r, r->log_abs) : NULL;
	json_t *loc;
	char fp[32];

	snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)sarif_hash(fp_parts, 4));
	if (rel && name)
		loc = json_pack("{s:{s:o,s:{s:i}}}", "physicalLocation", "artifactLocation",
				sarif_artifact(rel, true), "region", "startLine", 1);
	else if (rel)
		loc = json_pack("{s:{s:o}}", "physicalLocation", "artifactLocation",
				sarif_artifact(rel, true));
	else
		loc = json_pack("{s:{s:o}}", "physicalLocation", "artifactLocation",
				sarif_artifact(log_rel ? log_rel : r->log_name, log_rel != NULL));
	free(file);
	json_object_set_new(loc, "logicalLocations",
			    json_pack("[{s:s,s:s}]", "fullyQualifiedName", logical, "kind", "package"));
	return json_pack("{s:s,s:I,s:s,s:s,s:o,s:[o],s:{s:s},s:o}",
			 "ruleId", rule, "ruleIndex", (json_int_t)rule_index, "kind", "review",
			 "level", level, "message", sarif_text(msg), "locations", loc,
			 "partialFingerprints", "agenttraceDependency/v1", fp, "properties", props);
}

/* A result per package installed from a URL, git or a path outside the
 * project (a warning), and per install script run (a note). */
static void sarif_installed(const struct report *r, json_t *rules, json_t *results,
			    size_t *n_rules)
{
	size_t source_rule = REPORT_NONE, script_rule = REPORT_NONE;

	for (size_t i = 0; i < r->n_installs; i++) {
		const struct report_install *x = &r->installs[i];
		const char *parts[4] = { SARIF_SOURCE_RULE, x->ecosystem, x->name, x->url };
		char *msg;

		if (!x->flagged)
			continue;
		if (source_rule == REPORT_NONE) {
			json_array_append_new(rules, sarif_own_rule(
				SARIF_SOURCE_RULE, "warning",
				"A package was installed from outside a registry",
				"The session installed a package from a URL, a git repository or a "
				"path outside the project: a source no registry vouches for.",
				"Check where the package came from and why; install it from the "
				"registry the project uses."));
			source_rule = (*n_rules)++;
		}
		msg = xasprintf("the session installed %s %s %s from %s (%s)", x->ecosystem, x->name,
				x->version, x->url ? x->url : "?", x->source);
		json_array_append_new(results, sarif_own_result(
			r, SARIF_SOURCE_RULE, source_rule, "warning", msg, x->location,
			strcmp(x->ecosystem, "npm") == 0 ? "package.json" : "METADATA", x->name, parts,
			json_pack("{s:s,s:s,s:s,s:s,s:s}", "ecosystem", x->ecosystem, "package",
				  x->name, "version", x->version, "source", x->source, "url",
				  x->url ? x->url : "")));
		free(msg);
	}
	for (size_t i = 0; i < r->n_scripts; i++) {
		const struct report_script *x = &r->scripts[i];
		const char *name = x->package ? x->package : "(source build)";
		const char *parts[4] = { SARIF_SCRIPT_RULE, x->ecosystem, name, x->command };
		char *msg;

		if (script_rule == REPORT_NONE) {
			json_array_append_new(rules, sarif_own_rule(
				SARIF_SCRIPT_RULE, "note", "An install script ran",
				"A package's install script (npm preinstall, install or postinstall) or "
				"a build of a Python source tree ran during the session: code of the "
				"package, run at install time.",
				"Read the script; prefer packages without install scripts, or install "
				"with scripts disabled."));
			script_rule = (*n_rules)++;
		}
		msg = xasprintf("an install script of %s %s ran: %s", x->ecosystem, name, x->command);
		json_array_append_new(results, sarif_own_result(
			r, SARIF_SCRIPT_RULE, script_rule, "note", msg, x->cwd,
			strcmp(x->ecosystem, "npm") == 0 ? "package.json" : NULL, name, parts,
			json_pack("{s:s,s:s,s:s,s:s}", "ecosystem", x->ecosystem, "package", name,
				  "command", x->command, "cwd", x->cwd ? x->cwd : "")));
		free(msg);
	}
}

/* One result per package the session added to a dependency file, at
 * that file when it is in the workspace, else at the log's summary. */
static void sarif_deps(const struct report *r, json_t *results, size_t rule_index)
{
	for (size_t i = 0; i < r->n_depfiles; i++) {
		const struct report_depfile *x = &r->depfiles[i];
		char *abs = r->deps_root ? xasprintf("%s/%s", r->deps_root, x->path) : NULL;
		const char *rel = sarif_rel(r, abs);

		for (size_t j = 0; j < x->n_pkgs; j++) {
			const struct report_dep *d = &x->pkgs[j];
			const char *parts[4] = { SARIF_DEP_RULE, rel ? rel : x->path, d->name, d->to };
			json_t *loc, *res;
			char fp[32];
			char *msg;

			if (d->from)
				continue;
			msg = xasprintf("the session added the dependency %s %s to %s", d->name,
					d->to ? d->to : "", x->path);
			snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)sarif_hash(parts, 4));
			if (rel)
				loc = json_pack("{s:{s:o,s:{s:i}}}", "physicalLocation",
						"artifactLocation", sarif_artifact(rel, true), "region",
						"startLine", 1);
			else
				loc = json_pack("{s:{s:o}}", "physicalLocation", "artifactLocation",
						sarif_artifact(x->path, false));
			json_object_set_new(loc, "logicalLocations",
					    json_pack("[{s:s,s:s}]", "fullyQualifiedName", d->name,
						      "kind", "package"));
			res = json_pack("{s:s,s:I,s:s,s:s,s:o,s:[o],s:{s:s},s:{s:s,s:s,s:s,s:s}}",
					"ruleId", SARIF_DEP_RULE,
					"ruleIndex", (json_int_t)rule_index,
					"kind", "review",
					"level", "note",
					"message", sarif_text(msg),
					"locations", loc,
					"partialFingerprints", "agenttraceDependency/v1", fp,
					"properties", "package", d->name, "version", d->to ? d->to : "",
					"file", x->path, "format", x->format);
			json_array_append_new(results, res);
			free(msg);
		}
		free(abs);
	}
}

/* The summary's egress in the invocation's property bag: no result of
 * its own (an allowed destination is no finding; a denied one already
 * is), but the run's account of where it connected. */
static json_t *sarif_egress(const struct report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->n_egress; i++) {
		const struct report_dest *d = &r->egress[i];
		char dest[1024];
		json_t *o;

		report_dest_text(d, dest, sizeof(dest));
		o = json_pack("{s:s,s:s,s:s}", "destination", dest, "family", d->family ? d->family : "",
			      "address", d->addr);
		if (d->host)
			json_object_set_new(o, "host", json_string(d->host));
		if (d->port >= 0)
			json_object_set_new(o, "port", json_integer(d->port));
		json_object_set_new(o, "allowed", json_integer(d->allowed));
		json_object_set_new(o, "denied", json_integer(d->denied));
		json_array_append_new(a, o);
	}
	if (r->egress_other_allowed || r->egress_other_denied)
		json_array_append_new(a, json_pack("{s:s,s:I,s:I}", "destination", "(other)", "allowed",
						   (json_int_t)r->egress_other_allowed, "denied",
						   (json_int_t)r->egress_other_denied));
	return a;
}

int report_sarif(const struct report *r, FILE *out)
{
	size_t *index = xmalloc((r->n_rules + 1) * sizeof(*index));
	json_t *rules = json_array(), *results = json_array(), *run, *root, *inv;
	const char *run_dir = r->cwd ? r->cwd : r->first_cwd;
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
			json_array_append_new(rules, sarif_rule(&r->rules[ri], a));
		}
		json_array_append_new(results, sarif_result(r, f, index[ri]));
	}
	free(index);
	for (size_t i = 0; i < r->n_depfiles; i++) {
		if (r->depfiles[i].added) {
			json_array_append_new(rules, sarif_dep_rule());
			sarif_deps(r, results, n_rules++);
			break;
		}
	}
	sarif_installed(r, rules, results, &n_rules);

	run = json_pack("{s:{s:{s:s,s:s,s:s,s:o}}}", "tool", "driver",
			"name", "agenttrace",
			"fullName", "agenttrace " PACKAGE_VERSION,
			"version", PACKAGE_VERSION,
			"rules", rules);
	if (r->workspace) {
		char *uri = sarif_uri_path("file://", r->workspace), *dir;
		size_t n = strlen(uri);

		dir = xasprintf("%s%s", uri, n && uri[n - 1] == '/' ? "" : "/");
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
	}
	if (run_dir) {
		char *uri = sarif_uri_path("file://", run_dir);

		json_object_set_new(inv, "workingDirectory", json_pack("{s:s}", "uri", uri));
		free(uri);
	}
	json_object_set_new(inv, "properties",
			    json_pack("{s:s,s:s,s:I}", "policy", r->policy ? r->policy : "",
				      "session", r->session ? r->session : "",
				      "malformedLines", (json_int_t)r->malformed));
	if (r->has_egress)
		json_object_set_new(json_object_get(inv, "properties"), "egress", sarif_egress(r));
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
