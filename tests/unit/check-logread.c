/* tools/logread.c: records come out, everything else is counted and
 * named, and nothing crashes (garbage, truncation, NUL bytes, huge
 * lines, invalid UTF-8, wrong types). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/logread.h"

struct bad_log {
	size_t n;
	size_t lines[16];
	char why[16][128];
};

static void bad_cb(const char *name, size_t line, const char *why, void *arg)
{
	struct bad_log *b = arg;

	(void)name;
	if (b->n < 16) {
		b->lines[b->n] = line;
		snprintf(b->why[b->n], sizeof(b->why[0]), "%s", why);
	}
	b->n++;
}

/* A reader over bytes in memory. */
static FILE *mem(const char *data, size_t len)
{
	FILE *f = fmemopen((void *)data, len, "r");

	ck_assert_ptr_nonnull(f);
	return f;
}

#define GOOD "{\"v\":1,\"time\":\"2026-01-15T10:00:00.250Z\",\"session\":\"s\",\"seq\":3," \
	"\"event\":\"alert\",\"pid\":42,\"ppid\":1,\"exe\":\"/bin/sh\",\"argv\":[\"sh\",\"-c\",\"x\"]," \
	"\"cwd\":\"/w\",\"action\":\"deny\",\"mode\":\"enforce\",\"kind\":\"write\",\"syscall\":\"openat\"," \
	"\"path\":\"/etc/x\",\"port\":null,\"errno\":\"EACCES\",\"rule\":\"write.etc\",\"why\":\"w\"," \
	"\"backtrace\":[{\"pc\":\"0x1\",\"sym\":\"f\",\"offset\":2,\"object\":\"/lib/c.so\"}]}"

START_TEST(test_fields)
{
	static const char data[] = GOOD "\n";
	struct logread lr;
	const struct logrec *r;
	FILE *f = mem(data, sizeof(data) - 1);

	logread_init_stream(&lr, f, "t");
	ck_assert_int_eq(logread_next(&lr, &r), 1);
	ck_assert_str_eq(r->event, "alert");
	ck_assert_int_eq(r->pid, 42);
	ck_assert_int_eq(r->ppid, 1);
	ck_assert_int_eq(r->seq, 3);
	ck_assert_str_eq(r->path, "/etc/x");
	ck_assert_str_eq(r->rule, "write.etc");
	ck_assert_str_eq(r->err, "EACCES");
	ck_assert_int_eq(r->port, -1);
	ck_assert_ptr_null(r->path2);
	ck_assert_str_eq(logread_argv_at(r->argv, 2), "x");
	ck_assert_ptr_null(logread_argv_at(r->argv, 3));
	ck_assert_int_eq(json_array_size(r->backtrace), 1);
	ck_assert_int_eq(r->time_ms, 1768471200250LL);
	ck_assert_uint_eq(r->line, 1);
	ck_assert_int_eq(logread_next(&lr, &r), 0);
	ck_assert_uint_eq(lr.records, 1);
	ck_assert_uint_eq(lr.malformed, 0);
	logread_close(&lr);
	fclose(f);
}
END_TEST

START_TEST(test_rule_object)
{
	static const char data[] = "{\"v\":1,\"event\":\"alert\",\"rule\":{\"id\":\"r.1\"},\"pid\":\"x\"}\n";
	struct logread lr;
	const struct logrec *r;
	FILE *f = mem(data, sizeof(data) - 1);

	logread_init_stream(&lr, f, "t");
	ck_assert_int_eq(logread_next(&lr, &r), 1);
	ck_assert_str_eq(r->rule, "r.1");
	ck_assert_int_eq(r->pid, -1); /* wrong type: absent */
	ck_assert_int_eq(r->time_ms, -1);
	logread_close(&lr);
	fclose(f);
}
END_TEST

START_TEST(test_garbage)
{
	static const char data[] =
		"garbage\n"
		"\n"
		"   \r\n"
		"[1]\n"
		"{\"v\":2,\"event\":\"x\"}\n"
		"{\"event\":\"x\"}\n"
		"{\"v\":1}\n"
		"{\"v\":1,\"event\":\"x\"} trailing\n"
		"{\"v\":1,\"event\":\"a\0b\"}\n"
		"{\"v\":1,\"event\":\"\xff\"}\n"
		GOOD "\n"
		"{\"v\":1,\"event\":\"ex";
	struct bad_log b = { 0 };
	struct logread lr;
	const struct logrec *r;
	FILE *f = mem(data, sizeof(data) - 1);

	logread_init_stream(&lr, f, "t");
	logread_set_bad(&lr, bad_cb, &b);
	ck_assert_int_eq(logread_next(&lr, &r), 1);
	ck_assert_str_eq(r->event, "alert");
	ck_assert_uint_eq(r->line, 11);
	ck_assert_int_eq(logread_next(&lr, &r), 0);
	ck_assert_uint_eq(lr.malformed, 9);
	ck_assert_uint_eq(b.n, 9);
	ck_assert_uint_eq(b.lines[0], 1);
	ck_assert_uint_eq(b.lines[1], 4);
	ck_assert_ptr_nonnull(strstr(b.why[2], "version 2"));
	ck_assert_ptr_nonnull(strstr(b.why[6], "NUL"));
	ck_assert_uint_eq(b.lines[8], 12);
	ck_assert_ptr_nonnull(strstr(b.why[8], "truncated"));
	logread_close(&lr);
	fclose(f);
}
END_TEST

START_TEST(test_huge_line)
{
	size_t huge = LOGREAD_MAX_LINE + 100, len = huge + 1 + sizeof(GOOD);
	char *data = malloc(len);
	struct bad_log b = { 0 };
	struct logread lr;
	const struct logrec *r;
	FILE *f;

	ck_assert_ptr_nonnull(data);
	memset(data, '{', huge);
	data[huge] = '\n';
	memcpy(data + huge + 1, GOOD "\n", sizeof(GOOD));
	f = mem(data, len);
	logread_init_stream(&lr, f, "t");
	logread_set_bad(&lr, bad_cb, &b);
	ck_assert_int_eq(logread_next(&lr, &r), 1);
	ck_assert_uint_eq(r->line, 2);
	ck_assert_uint_eq(b.n, 1);
	ck_assert_ptr_nonnull(strstr(b.why[0], "longer than"));
	/* The reader never held the huge line. */
	ck_assert_uint_le(lr.cap, LOGREAD_MAX_LINE);
	logread_close(&lr);
	fclose(f);
	free(data);
}
END_TEST

START_TEST(test_time)
{
	ck_assert_int_eq(logread_time_ms("1970-01-01T00:00:00Z"), 0);
	ck_assert_int_eq(logread_time_ms("1970-01-01T00:00:01.5Z"), 1500);
	ck_assert_int_eq(logread_time_ms("1970-01-01T01:00:00+01:00"), 0);
	ck_assert_int_eq(logread_time_ms("2026-01-15T10:00:00.250Z"), 1768471200250LL);
	ck_assert_int_eq(logread_time_ms("2026-01-15"), -1);
	ck_assert_int_eq(logread_time_ms("2026-13-15T10:00:00Z"), -1);
	ck_assert_int_eq(logread_time_ms("2026-01-15T10:00:00"), -1);
	ck_assert_int_eq(logread_time_ms("2026-01-15T10:00:00Zx"), -1);
	ck_assert_int_eq(logread_time_ms(""), -1);
}
END_TEST

START_TEST(test_open_missing)
{
	struct logread lr;

	ck_assert_int_lt(logread_open(&lr, "/nonexistent/agenttrace/log.jsonl"), 0);
	ck_assert_str_eq(logread_base("/usr/bin/cat"), "cat");
	ck_assert_str_eq(logread_base("cat"), "cat");
	ck_assert_str_eq(logread_base(NULL), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("logread");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_rule_object);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_huge_line);
	tcase_add_test(tc, test_time);
	tcase_add_test(tc, test_open_missing);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
