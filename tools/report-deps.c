/* The summary's "dependencies" (doc/RECORDS.md) in the report's model:
 * the dependency files the session changed and their packages.  The log
 * is input like any other: entries of the wrong shape are skipped, and
 * at most REPORT_DEPS_MAX packages are kept whatever the log says. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tools/report.h"

#define REPORT_DEPS_FILES_MAX 256
#define REPORT_DEPS_MAX 5000

static char *deps_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

static long long deps_int(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static char *deps_str0(const json_t *o, const char *key)
{
	char *s = deps_str(o, key);

	return s ? s : xstrdup("");
}

/* "installed": its packages and scripts, bounded like the rest. */
static void report_installed_read(struct report *r, const json_t *summary)
{
	const json_t *in = json_object_get(summary, "installed");
	const json_t *pk = json_object_get(in, "packages"), *sc = json_object_get(in, "scripts");

	if (!json_is_object(in))
		return;
	r->installs_flagged = deps_int(in, "flagged");
	for (size_t i = 0; i < json_array_size(pk) && r->n_installs < REPORT_DEPS_MAX; i++) {
		const json_t *p = json_array_get(pk, i);
		struct report_install *x;

		if (!json_is_object(p) || !json_is_string(json_object_get(p, "name")))
			continue;
		r->installs = xrealloc(r->installs, (r->n_installs + 1) * sizeof(*r->installs));
		x = &r->installs[r->n_installs++];
		x->ecosystem = deps_str0(p, "ecosystem");
		x->name = deps_str0(p, "name");
		x->version = deps_str0(p, "version");
		x->source = deps_str0(p, "source");
		x->url = deps_str(p, "url");
		x->location = deps_str(p, "location");
		x->flagged = json_is_true(json_object_get(p, "flagged"));
		x->install_script = json_is_true(json_object_get(p, "install_script"));
	}
	for (size_t i = 0; i < json_array_size(sc) && r->n_scripts < REPORT_DEPS_FILES_MAX; i++) {
		const json_t *p = json_array_get(sc, i);
		struct report_script *x;

		if (!json_is_object(p) || !json_is_string(json_object_get(p, "command")))
			continue;
		r->scripts = xrealloc(r->scripts, (r->n_scripts + 1) * sizeof(*r->scripts));
		x = &r->scripts[r->n_scripts++];
		x->ecosystem = deps_str0(p, "ecosystem");
		x->package = deps_str(p, "package");
		x->command = deps_str0(p, "command");
		x->cwd = deps_str(p, "cwd");
	}
}

void report_deps_read(struct report *r, const json_t *summary)
{
	const json_t *d = json_object_get(summary, "dependencies");
	const json_t *files = json_object_get(d, "files");
	size_t kept = 0;

	report_deps_free(r);
	report_installed_read(r, summary);
	if (!json_is_object(d) || !json_is_array(files))
		return;
	r->has_deps = true;
	r->deps_root = deps_str(d, "root");
	r->deps_added = deps_int(d, "added");
	r->deps_removed = deps_int(d, "removed");
	r->deps_changed = deps_int(d, "changed");
	r->deps_truncated = json_is_true(json_object_get(d, "truncated"));
	for (size_t i = 0; i < json_array_size(files) && r->n_depfiles < REPORT_DEPS_FILES_MAX; i++) {
		const json_t *f = json_array_get(files, i), *pk = json_object_get(f, "packages");
		const char *path = json_string_value(json_object_get(f, "path"));
		struct report_depfile *x;

		if (!json_is_object(f) || !path)
			continue;
		r->depfiles = xrealloc(r->depfiles, (r->n_depfiles + 1) * sizeof(*r->depfiles));
		x = &r->depfiles[r->n_depfiles++];
		memset(x, 0, sizeof(*x));
		x->path = xstrdup(path);
		x->format = deps_str(f, "format");
		x->format = x->format ? x->format : xstrdup("?");
		x->status = deps_str(f, "status");
		x->status = x->status ? x->status : xstrdup("changed");
		x->parsed = !json_is_false(json_object_get(f, "parsed"));
		x->added = deps_int(f, "added");
		x->removed = deps_int(f, "removed");
		x->changed = deps_int(f, "changed");
		x->cut = deps_int(f, "packages_cut");
		for (size_t j = 0; j < json_array_size(pk); j++) {
			const json_t *p = json_array_get(pk, j);
			const char *name = json_string_value(json_object_get(p, "name"));
			struct report_dep *y;

			if (!name)
				continue;
			if (kept == REPORT_DEPS_MAX) {
				x->cut++;
				continue;
			}
			x->pkgs = xrealloc(x->pkgs, (x->n_pkgs + 1) * sizeof(*x->pkgs));
			y = &x->pkgs[x->n_pkgs++];
			y->name = xstrdup(name);
			y->from = deps_str(p, "from");
			y->to = deps_str(p, "to");
			kept++;
		}
	}
}

void report_deps_free(struct report *r)
{
	for (size_t i = 0; i < r->n_depfiles; i++) {
		struct report_depfile *x = &r->depfiles[i];

		for (size_t j = 0; j < x->n_pkgs; j++) {
			free(x->pkgs[j].name);
			free(x->pkgs[j].from);
			free(x->pkgs[j].to);
		}
		free(x->pkgs);
		free(x->path);
		free(x->format);
		free(x->status);
	}
	for (size_t i = 0; i < r->n_installs; i++) {
		struct report_install *x = &r->installs[i];

		free(x->ecosystem);
		free(x->name);
		free(x->version);
		free(x->source);
		free(x->url);
		free(x->location);
	}
	free(r->installs);
	r->installs = NULL;
	r->n_installs = 0;
	for (size_t i = 0; i < r->n_scripts; i++) {
		free(r->scripts[i].ecosystem);
		free(r->scripts[i].package);
		free(r->scripts[i].command);
		free(r->scripts[i].cwd);
	}
	free(r->scripts);
	r->scripts = NULL;
	r->n_scripts = 0;
	free(r->depfiles);
	free(r->deps_root);
	r->deps_root = NULL;
	r->depfiles = NULL;
	r->n_depfiles = 0;
	r->has_deps = false;
}

const char *report_dep_change(const struct report_dep *d)
{
	return !d->from ? "added" : !d->to ? "removed" : "changed";
}
