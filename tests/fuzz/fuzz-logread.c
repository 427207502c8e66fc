/* libFuzzer target for the tools' record reader, tools/logread.c
 * JSON lines with garbage, truncation, huge lines, NUL bytes,
 * records of the wrong shape.  Every input is one log, read from a
 * memory stream to the end; each record's fields are touched the way the
 * report and learn code touch them.  The reader must neither crash, nor
 * leak, nor loop.
 *
 *   clang -g -O1 -std=gnu11 -D_GNU_SOURCE -I. \
 *       -fsanitize=fuzzer,address,undefined $(pkg-config --cflags jansson) \
 *       tests/fuzz/fuzz-logread.c tools/logread.c $(pkg-config --libs jansson) \
 *       -o fuzz-logread
 *   ./fuzz-logread -max_len=65536 corpus/ tests/tools/data/
 *
 * With -DFUZZ_LOGREAD_MAIN it is a plain program that runs the target on
 * each file named on its command line (a regression run without clang;
 * `make check` does that over tests/tools/data and a few cut logs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tools/logread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t fuzz_sink;

static void fuzz_bad(const char *name, size_t line, const char *why, void *arg)
{
	(void)arg;
	fuzz_sink += strlen(name) + line + strlen(why);
}

static void fuzz_touch(const struct logrec *r)
{
	fuzz_sink += strlen(r->event);
	if (r->time)
		fuzz_sink += (size_t)logread_time_ms(r->time);
	for (size_t i = 0; i < 4; i++) {
		const char *a = logread_argv_at(r->argv, i);
		const char *t = logread_argv_at(r->target_argv, i);

		fuzz_sink += a ? strlen(a) : 0;
		fuzz_sink += t ? strlen(t) : 0;
	}
	if (r->exe)
		fuzz_sink += strlen(logread_base(r->exe));
	if (r->path)
		fuzz_sink += strlen(logread_base(r->path));
	if (r->backtrace)
		fuzz_sink += json_array_size(r->backtrace);
	fuzz_sink += (size_t)(r->pid + r->ppid + r->port + r->exit_code + r->signal + r->seq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct logread lr;
	const struct logrec *r;
	FILE *f;

	/* fmemopen of an empty buffer fails on some libcs: a one-byte
	 * stand-in that is a line of its own. */
	f = size ? fmemopen((void *)data, size, "r") : fmemopen((void *)"\n", 1, "r");
	if (!f)
		return 0;
	memset(&lr, 0, sizeof(lr));
	logread_init_stream(&lr, f, "fuzz");
	logread_set_bad(&lr, fuzz_bad, NULL);
	while (logread_next(&lr, &r) > 0)
		fuzz_touch(r);
	logread_close(&lr);
	fclose(f);
	return 0;
}

#ifdef FUZZ_LOGREAD_MAIN
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf = NULL;
		size_t n = 0, cap = 0;
		size_t got;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		do {
			if (n == cap) {
				cap = cap ? cap * 2 : 65536;
				buf = realloc(buf, cap);
				if (!buf)
					return 1;
			}
			got = fread(buf + n, 1, cap - n, f);
			n += got;
		} while (got > 0);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		free(buf);
	}
	printf("fuzz-logread: %d inputs read\n", argc - 1);
	return 0;
}
#endif
