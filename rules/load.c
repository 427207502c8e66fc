/* The loader's entry points: names and files -> parsed layers (extends
 * followed, cycles and repeats detected) -> schema -> compile -> tests. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/load-internal.h"

/* A policy is a few kilobytes; anything this large is not one. */
#define LOAD_MAX_FILE (16u << 20)

static bool load_is_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n >= 5 && !strcmp(name + n - 5, ".json"));
}

static void layer_free(struct load_layer *l)
{
	if (!l)
		return;
	free(l->label);
	free(l->display);
	free(l->dir);
	free(l->ident);
	free(l->text);
	json_decref(l->root);
	jsonpos_free(&l->pos);
	free(l);
}

static void ctx_free(struct load_ctx *ctx)
{
	for (size_t i = 0; i < ctx->n_layers; i++)
		layer_free(ctx->layers[i]);
	free(ctx->layers);
	error_free(&ctx->errs);
}

/* An error about a policy as named by FROM's "extends", or on the
 * command line (file NAME, no position) when FROM is NULL. */
static void load_error_name(struct load_ctx *ctx, const struct load_layer *from,
			    const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void load_error_name(struct load_ctx *ctx, const struct load_layer *from,
			    const char *name, const char *fmt, ...)
{
	char text[sizeof(((struct rules_error *)0)->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (from) {
		error_at(ctx, from, "extends", false, "%s", text);
	} else {
		struct rules_error e;

		error_set(&e, name, 0, 0, "", "%s", text);
		error_push(&ctx->errs, &e);
	}
}

static int load_read(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : errno;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if (cap > LOAD_MAX_FILE + 8192) {
				err = EFBIG;
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				err = ENOMEM;
				goto out;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return -err;
}

static int load_one(struct load_ctx *ctx, const char *name, const struct load_layer *from);

/* jansson seeds its hash function from /dev/urandom (an open, a read and
 * a close at every start) unless given a seed first; getrandom(2) is one
 * call.  When it fails, jansson seeds itself as before. */
static void load_seed(void)
{
	static bool done;
	uint32_t seed = 0;

	if (done)
		return;
	done = true;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed) && seed)
		json_object_seed(seed);
}

/* Parse, index, check and follow extends of a layer whose text is set. */
static int load_layer_text(struct load_ctx *ctx, struct load_layer *l)
{
	json_error_t jerr;
	json_t *ext;
	struct load_layer **nv;
	int rc;

	load_seed();
	l->root = json_loadb(l->text, l->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!l->root) {
		struct rules_error e;
		size_t lead = 0;
		char *near;

		/* A text that is no JSON object at all is no policy (a key or a
		 * token a link or an extends named, read as root): the error
		 * says where, not what stands there. */
		while (lead < l->len && strchr(" \t\r\n", l->text[lead]))
			lead++;
		if ((lead == l->len || l->text[lead] != '{') && (near = strstr(jerr.text, " near '")))
			*near = '\0';
		error_set(&e, l->display, jerr.line > 0 ? jerr.line : 1,
			  jerr.column > 0 ? jerr.column : 1, "", "%s", jerr.text);
		error_push(&ctx->errs, &e);
		return -1;
	}
	if (jsonpos_index(&l->pos, l->text, l->len) < 0) {
		struct rules_error e;

		error_set(&e, l->display, 1, 1, "", "cannot index the policy text (out of memory?)");
		error_push(&ctx->errs, &e);
		return -1;
	}
	/* A layer with schema errors is kept, so that compiling reports its
	 * pattern errors too; no block is made from it. */
	if (schema_check(ctx, l) && !json_is_object(l->root))
		return -1;
	ext = json_object_get(l->root, "extends");
	if (json_is_string(ext) && json_string_length(ext)) {
		ctx->stack[ctx->depth++] = l->ident;
		rc = load_one(ctx, json_string_value(ext), l);
		ctx->depth--;
		if (rc < 0)
			return -1;
	}
	nv = realloc(ctx->layers, (ctx->n_layers + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	ctx->layers = nv;
	ctx->layers[ctx->n_layers++] = l;
	return 0;
}

static int load_one(struct load_ctx *ctx, const char *name, const struct load_layer *from)
{
	struct load_layer *l = calloc(1, sizeof(*l));
	struct stat st;
	int rc;

	if (!l)
		return -1;
	if (!load_is_path(name)) {
		const char *text = rules_builtin(name, &l->len);

		if (!text) {
			char names[256];
			size_t w = 0;

			names[0] = 0;
			for (size_t i = 0; rules_builtin_names[i] && w < sizeof(names); i++)
				w += (size_t)snprintf(names + w, sizeof(names) - w, "%s%s", i ? ", " : "",
						      rules_builtin_names[i]);
			load_error_name(ctx, from, name,
					"unknown shipped policy \"%s\" (shipped: %s; a file name needs a "
					"'/' or \".json\")", name, names);
			goto fail;
		}
		l->text = malloc(l->len + 1);
		l->label = strdup(name);
		if (!l->text || !l->label || asprintf(&l->display, "<builtin:%s>", name) < 0 ||
		    asprintf(&l->ident, "builtin:%s", name) < 0)
			goto fail;
		memcpy(l->text, text, l->len);
		l->text[l->len] = '\0';
	} else {
		const char *slash;

		/* Relative extends are relative to the including file. */
		if (from && from->dir && name[0] != '/') {
			if (asprintf(&l->display, "%s%s", from->dir, name) < 0)
				goto fail;
		} else if (!(l->display = strdup(name))) {
			goto fail;
		}
		l->label = strdup(l->display);
		slash = strrchr(l->display, '/');
		l->dir = slash ? strndup(l->display, (size_t)(slash - l->display + 1)) : strdup("");
		if (!l->label || !l->dir)
			goto fail;
		/* The file's identity, not its name: "a.json" and "./a.json"
		 * are one layer.  stat() rather than realpath() so that magic
		 * links (/proc/self/fd/N of a memfd) work too. */
		if (stat(l->display, &st) < 0) {
			load_error_name(ctx, from, l->display, "cannot read \"%s\": %s",
					l->display, strerror(errno));
			goto fail;
		}
		if (asprintf(&l->ident, "file:%llu:%llu", (unsigned long long)st.st_dev,
			     (unsigned long long)st.st_ino) < 0)
			goto fail;
	}
	for (size_t i = 0; i < ctx->depth; i++) {
		if (strcmp(ctx->stack[i], l->ident))
			continue;
		/* extends of extends came back to a file being loaded. */
		if (from)
			error_at(ctx, from, "extends", false,
				 "extends cycle: \"%s\" extends itself through \"%s\"", l->label,
				 from->label);
		goto fail;
	}
	for (size_t i = 0; i < ctx->n_layers; i++) {
		if (!strcmp(ctx->layers[i]->ident, l->ident)) {
			layer_free(l); /* repeated: merged once, where first met */
			return 0;
		}
	}
	if (ctx->depth >= LOAD_MAX_DEPTH) {
		load_error_name(ctx, from, l->label, "\"%s\": extends nested too deeply",
				l->label);
		goto fail;
	}
	if (!l->text) {
		rc = load_read(l->display, &l->text, &l->len);
		if (rc < 0) {
			load_error_name(ctx, from, l->display, "cannot read \"%s\": %s",
					l->display, strerror(-rc));
			goto fail;
		}
	}
	if (load_layer_text(ctx, l) < 0)
		goto fail;
	return 0;
fail:
	if (!ctx->errs.n) {
		struct rules_error e;

		error_set(&e, name, 0, 0, "", "out of memory");
		error_push(&ctx->errs, &e);
	}
	layer_free(l);
	return -1;
}

/* Load, layer, compile, check: the common path of rules_load and
 * rules_check_file.  Errors are in ctx->errs. */
static int load_all(struct load_ctx *ctx, const char *const *names, size_t n,
		    const struct rules_extra *extras, size_t n_extras, struct rules_policy **out)
{
	static const char *const dflt[] = { "default" };
	struct rules_policy *p = NULL;
	int failed = 0;

	*out = NULL;
	if (!n) {
		names = dflt;
		n = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (load_one(ctx, names[i], NULL) < 0)
			failed = 1;
	if (failed && !ctx->n_layers)
		return -1;
	/* The policies' tests check the policies as written: command-line
	 * rules come after them and may exempt paths from their denies (as
	 * --allow-write '${ROOT}/.git/config' does), so they are left out of
	 * the block the tests run on.  Compiling is most of a load, so the
	 * block with them is tried first: when no test event matches a
	 * command-line rule, its tests decide as on the block without them
	 * (compile_run_tests).  Anything else -- an error, a match -- takes
	 * the long way, which reports exactly what it always did. */
	if (n_extras && !failed && !ctx->errs.n) {
		bool overflow = ctx->errs.overflow, hit = true;
		size_t fails = 0;

		if (compile_policy(ctx, extras, n_extras, &p) == 0 && !ctx->errs.n)
			fails = compile_run_tests(ctx, p, &hit);
		if (!hit) {
			if (fails) {
				free(p);
				return -1;
			}
			goto check;
		}
		free(p);
		p = NULL;
		ctx->errs.n = 0;
		ctx->errs.overflow = overflow;
	}
	if (compile_policy(ctx, NULL, 0, &p) < 0 || failed || ctx->errs.n) {
		free(p);
		return -1;
	}
	if (p && n_extras) {
		if (compile_run_tests(ctx, p, NULL)) {
			free(p);
			return -1;
		}
		free(p);
		p = NULL;
		if (compile_policy(ctx, extras, n_extras, &p) < 0) {
			free(p);
			return -1;
		}
	}
check:
	if (rules_policy_check(p, p->size) < 0) {
		struct rules_error e;

		error_set(&e, ctx->layers[0]->display, 0, 0, "",
			  "internal error: the compiled policy fails its own check");
		error_push(&ctx->errs, &e);
		free(p);
		return -1;
	}
	if (!n_extras && compile_run_tests(ctx, p, NULL)) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int rules_load(const char *const *names, size_t n,
	       const struct rules_extra *extras, size_t n_extras,
	       const struct rules_vars *vars,
	       struct rules_policy **out, struct rules_error *err)
{
	struct load_ctx ctx = { .vars = vars };
	int rc;

	memset(err, 0, sizeof(*err));
	rc = load_all(&ctx, names, n, extras, n_extras, out);
	if (rc < 0) {
		if (ctx.errs.n)
			*err = ctx.errs.v[0];
		else
			error_set(err, "<policy>", 0, 0, "", "out of memory");
	}
	ctx_free(&ctx);
	return rc;
}

struct ordered {
	const struct rules_error *e;
	size_t file_rank, seq;
};

static int ordered_cmp(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	if (x->e->line != y->e->line)
		return x->e->line < y->e->line ? -1 : 1;
	if (x->e->column != y->e->column)
		return x->e->column < y->e->column ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int rules_check_file(const char *path, const struct rules_vars *vars,
		     void (*report)(const struct rules_error *e, void *arg), void *arg)
{
	struct load_ctx ctx = { .vars = vars };
	struct rules_policy *p = NULL;
	struct ordered *ord;
	int count;

	/* A shipped name checks the shipped policy; anything else a file. */
	if (!load_is_path(path) && !rules_builtin(path, NULL) && access(path, F_OK) == 0) {
		char *rel;

		if (asprintf(&rel, "./%s", path) < 0)
			return 1;
		load_all(&ctx, (const char *const *)&rel, 1, NULL, 0, &p);
		free(rel);
	} else {
		load_all(&ctx, &path, 1, NULL, 0, &p);
	}
	free(p);
	ord = calloc(ctx.errs.n + 1, sizeof(*ord));
	if (!ord && ctx.errs.n) {
		report(&ctx.errs.v[0], arg);
		count = (int)ctx.errs.n;
		goto out;
	}
	for (size_t i = 0; i < ctx.errs.n; i++) {
		ord[i].e = &ctx.errs.v[i];
		ord[i].seq = i;
		ord[i].file_rank = i;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(ctx.errs.v[j].file, ctx.errs.v[i].file)) {
				ord[i].file_rank = ord[j].file_rank;
				break;
			}
		}
	}
	if (ctx.errs.n > 1)
		qsort(ord, ctx.errs.n, sizeof(*ord), ordered_cmp);
	for (size_t i = 0; i < ctx.errs.n; i++)
		report(ord[i].e, arg);
	if (ctx.errs.overflow) {
		struct rules_error e;

		error_set(&e, path, 0, 0, "", "too many errors; stopped after %d", LOAD_MAX_ERRORS);
		report(&e, arg);
	}
	count = (int)ctx.errs.n;
	free(ord);
out:
	ctx_free(&ctx);
	return count;
}
