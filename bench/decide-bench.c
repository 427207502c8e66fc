/* Micro-benchmark of rules_decide() on the shipped "default" policy.
 *
 * Loads "default" through rules_load() with fixed variables
 * (ROOT=/home/u/proj, HOME=/home/u, TMPDIR=/tmp), then decides the events
 * of a realistic session (a C build with git, a pip install, loopback and
 * outside connects, a few denials) in a loop, and reports decisions per
 * second and nanoseconds per decision, per event class and overall.
 *
 *   bench/decide-bench [SECONDS]     (default 1.5; see bench/README.md)
 *
 * Not run by make check: timings need a quiet machine. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/exitcode.h"
#include "rules/load.h"
#include "rules/rules.h"

#define ROOT "/home/u/proj"
#define HOME "/home/u"

enum bench_class { B_READ, B_WRITE, B_NET, B_EXEC, B_COUNT };

static const char *const bench_class_name[B_COUNT] = { "read", "write", "net", "exec" };

struct bench_event {
	enum bench_class cls;
	const char *a;            /* path, exe, or address */
	const char *argv[8];
	uint16_t port;
	const char *host;
};

static const struct bench_event bench_events[] = {
	/* reads of a C build */
	{ B_READ, "/usr/include/stdio.h", { 0 }, 0, 0 },
	{ B_READ, "/usr/include/x86_64-linux-gnu/bits/types.h", { 0 }, 0, 0 },
	{ B_READ, "/usr/include/x86_64-linux-gnu/sys/cdefs.h", { 0 }, 0, 0 },
	{ B_READ, "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", { 0 }, 0, 0 },
	{ B_READ, "/usr/lib/x86_64-linux-gnu/libc.so.6", { 0 }, 0, 0 },
	{ B_READ, ROOT "/src/main.c", { 0 }, 0, 0 },
	{ B_READ, ROOT "/src/util/strbuf.h", { 0 }, 0, 0 },
	{ B_READ, ROOT "/.git/objects/pack/pack-0123456789abcdef.idx", { 0 }, 0, 0 },
	{ B_READ, "/etc/ld.so.cache", { 0 }, 0, 0 },
	{ B_READ, HOME "/.ssh/id_ed25519", { 0 }, 0, 0 },          /* denied */
	{ B_READ, HOME "/.aws/credentials", { 0 }, 0, 0 },         /* denied */
	/* writes */
	{ B_WRITE, ROOT "/build/main.o", { 0 }, 0, 0 },
	{ B_WRITE, ROOT "/build/src/util/.deps/strbuf.Po", { 0 }, 0, 0 },
	{ B_WRITE, ROOT "/.git/objects/3f/8a1c0d2e4b5f60718293a4b5c6d7e8f9012345", { 0 }, 0, 0 },
	{ B_WRITE, ROOT "/.git/index.lock", { 0 }, 0, 0 },
	{ B_WRITE, "/tmp/ccA1b2C3.s", { 0 }, 0, 0 },
	{ B_WRITE, "/dev/null", { 0 }, 0, 0 },
	{ B_WRITE, HOME "/.cache/pip/http/a/b/c/d/e/0123456789", { 0 }, 0, 0 },
	{ B_WRITE, HOME "/.bashrc", { 0 }, 0, 0 },                  /* denied */
	{ B_WRITE, ROOT "/.git/hooks/pre-commit", { 0 }, 0, 0 },    /* denied */
	{ B_WRITE, ROOT "/.github/workflows/ci.yml", { 0 }, 0, 0 }, /* denied */
	{ B_WRITE, "/etc/passwd", { 0 }, 0, 0 },                    /* denied */
	/* connects */
	{ B_NET, "127.0.0.1", { 0 }, 8080, 0 },
	{ B_NET, "::1", { 0 }, 5432, 0 },
	{ B_NET, "192.0.2.1", { 0 }, 443, 0 },                      /* denied */
	{ B_NET, "192.0.2.1", { 0 }, 443, "pypi.org" },             /* denied (default) */
	{ B_NET, "169.254.169.254", { 0 }, 80, 0 },                 /* denied */
	{ B_NET, "unix:/var/run/nscd/socket", { 0 }, 0, 0 },
	{ B_NET, "unix:/run/docker.sock", { 0 }, 0, 0 },            /* denied */
	/* execs */
	{ B_EXEC, "/usr/bin/gcc-12", { "gcc", "-O2", "-c", "main.c", "-o", "build/main.o" }, 0, 0 },
	{ B_EXEC, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", { "cc1", "-quiet", "main.c", "-o", "/tmp/ccA1b2C3.s" }, 0, 0 },
	{ B_EXEC, "/usr/bin/x86_64-linux-gnu-as", { "as", "--64", "-o", "build/main.o", "/tmp/ccA1b2C3.s" }, 0, 0 },
	{ B_EXEC, "/usr/bin/x86_64-linux-gnu-ld.bfd", { "ld", "-o", "prog", "build/main.o", "-lc" }, 0, 0 },
	{ B_EXEC, "/usr/bin/dash", { "sh", "-c", "cd build && make all" }, 0, 0 },
	{ B_EXEC, "/usr/bin/git", { "git", "commit", "-q", "-m", "wip" }, 0, 0 },
	{ B_EXEC, "/usr/bin/pip3", { "pip", "install", "requests" }, 0, 0 },      /* alert */
	{ B_EXEC, "/usr/bin/sudo", { "sudo", "make", "install" }, 0, 0 },          /* denied */
	{ B_EXEC, "/tmp/x", { "x" }, 0, 0 },                                       /* denied */
};

#define N_EVENTS (sizeof(bench_events) / sizeof(bench_events[0]))

static struct rules_event prepared[N_EVENTS];

static void bench_prepare(void)
{
	for (size_t i = 0; i < N_EVENTS; i++) {
		const struct bench_event *b = &bench_events[i];
		struct rules_event *ev = &prepared[i];

		memset(ev, 0, sizeof(*ev));
		switch (b->cls) {
		case B_READ:
		case B_WRITE:
			ev->kind = b->cls == B_READ ? RULES_KIND_READ : RULES_KIND_WRITE;
			ev->path = b->a;
			break;
		case B_EXEC:
			ev->kind = RULES_KIND_EXEC;
			ev->exe = b->a;
			ev->argv = b->argv;
			while (ev->argc < 8 && b->argv[ev->argc])
				ev->argc++;
			break;
		case B_NET:
			ev->kind = RULES_KIND_NET;
			ev->port = b->port;
			ev->host = b->host;
			if (!strncmp(b->a, "unix:", 5)) {
				ev->family = AF_UNIX;
				ev->unix_path = b->a + 5;
			} else if (inet_pton(AF_INET, b->a, ev->addr) == 1) {
				ev->family = AF_INET;
			} else if (inet_pton(AF_INET6, b->a, ev->addr) == 1) {
				ev->family = AF_INET6;
			}
			break;
		default:
			break;
		}
	}
}

static double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Decide the events of one class (or all, cls == B_COUNT) for about
 * `seconds`; returns ns per decision. */
static double bench_run(const struct rules_policy *p, int cls, double seconds,
			unsigned long *n_out, unsigned long *sink)
{
	unsigned long n = 0;
	double t0 = bench_now(), t;

	do {
		for (int rep = 0; rep < 64; rep++) {
			for (size_t i = 0; i < N_EVENTS; i++) {
				struct rules_verdict v;

				if (cls != B_COUNT && (int)bench_events[i].cls != cls)
					continue;
				if (rules_decide(p, &prepared[i], &v) == 0)
					*sink += (unsigned long)v.action + (unsigned long)(uintptr_t)v.rule;
				n++;
			}
		}
		t = bench_now() - t0;
	} while (t < seconds);
	*n_out = n;
	return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "default" };
	struct rules_vars vars = {
		.root = ROOT, .home = HOME, .tmpdir = "/tmp", .cwd = ROOT,
		.resolv_conf = NULL,
	};
	struct rules_policy *p = NULL;
	struct rules_error err;
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	unsigned long sink = 0, n, total = 0;
	char msg[1400];

	if (seconds <= 0)
		seconds = 1.5;
	if (rules_load(names, 1, NULL, 0, &vars, &p, &err) < 0) {
		rules_error_format(&err, msg, sizeof(msg));
		fprintf(stderr, "decide-bench: %s\n", msg);
		return AT_EXIT_FAILURE;
	}
	if (rules_policy_check(p, p->size) != 0) {
		fprintf(stderr, "decide-bench: the loaded block fails rules_policy_check\n");
		free(p);
		return AT_EXIT_FAILURE;
	}
	bench_prepare();

	printf("policy \"%s\": %u rules (incl. fallbacks), %zu events, %.2f s per class\n",
	       rules_string(p, p->name), p->rules_count, N_EVENTS, seconds / 2);
	if (getenv("DECIDE_BENCH_VERBOSE")) {
		for (size_t i = 0; i < N_EVENTS; i++) {
			struct rules_verdict v;

			rules_decide(p, &prepared[i], &v);
			printf("  %-5s %-6s %-40s %s\n", bench_class_name[bench_events[i].cls],
			       rules_action_name(v.action), rules_string(p, v.rule->id), bench_events[i].a);
		}
	}
	printf("%-8s %12s %14s %12s\n", "class", "ns/decision", "decisions/s", "decisions");
	for (int c = 0; c <= B_COUNT; c++) {
		double ns = bench_run(p, c, c == B_COUNT ? seconds : seconds / 2, &n, &sink);

		total += n;
		printf("%-8s %12.1f %14.0f %12lu\n", c == B_COUNT ? "overall" : bench_class_name[c],
		       ns, 1e9 / ns, n);
	}
	/* For callgrind --toggle-collect=rules_decide: Ir / this = Ir per decision. */
	printf("total decisions: %lu\n", total);
	free(p);
	return sink == 42 ? 1 : 0; /* keeps the loop's results alive */
}
