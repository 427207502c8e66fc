/* Unit tests of lib/textesc.c: the one escaping of untrusted text for
 * human output (stderr lines, annotations, step summary, reports). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct esc_case {
	const char *in;
	size_t len; /* 0: strlen(in) */
	unsigned flags;
	const char *out;
};

static const struct esc_case esc_cases[] = {
	{ "plain /path/x.c", 0, 0, "plain /path/x.c" },
	{ "", 0, 0, "" },
	{ "a\nb", 0, 0, "a\\x0Ab" },
	{ "a\r\nb", 0, 0, "a\\x0D\\x0Ab" },
	{ "\x1b[31mred", 0, 0, "\\x1B[31mred" },
	{ "t\tab", 0, 0, "t\\x09ab" },
	{ "t\tab", 0, TEXTESC_KEEP_TAB, "t\tab" },
	{ "nul\0x", 5, 0, "nul\\x00x" },
	{ "del\x7f", 0, 0, "del\\x7F" },
	/* C1 controls, raw (invalid UTF-8) and encoded */
	{ "\x9b" "31m", 0, 0, "\\x9B31m" },
	{ "\xc2\x9b" "31m", 0, 0, "\\xC2\\x9B31m" },
	{ "\xc2\x85", 0, 0, "\\xC2\\x85" },
	{ "\xc2\xa0nbsp", 0, 0, "\xc2\xa0nbsp" },
	/* invalid UTF-8: each byte */
	{ "\xff\xfe", 0, 0, "\\xFF\\xFE" },
	{ "\xc0\xaf", 0, 0, "\\xC0\\xAF" },
	{ "\xed\xa0\x80", 0, 0, "\\xED\\xA0\\x80" },
	{ "\xe2\x82", 0, 0, "\\xE2\\x82" },
	/* valid UTF-8 stays */
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	/* line separators and bidirectional controls */
	{ "a\xe2\x80\xa8" "b", 0, 0, "a\\xE2\\x80\\xA8b" },
	{ "a\xe2\x80\xa9" "b", 0, 0, "a\\xE2\\x80\\xA9b" },
	{ "evil\xe2\x80\xaegpj.exe", 0, 0, "evil\\xE2\\x80\\xAEgpj.exe" },
	{ "\xe2\x81\xa6x\xe2\x81\xa9", 0, 0, "\\xE2\\x81\\xA6x\\xE2\\x81\\xA9" },
	{ "\xe2\x80\x94 dash", 0, 0, "\xe2\x80\x94 dash" },
	/* a line cannot begin a workflow command */
	{ "::error::x", 0, TEXTESC_LINE, "\\x3A:error::x" },
	{ "::error::x", 0, 0, "::error::x" },
	{ "a::b", 0, TEXTESC_LINE, "a::b" },
	/* the backslash stays, as in the records */
	{ "a\\x41", 0, 0, "a\\x41" },
};

START_TEST(test_escape)
{
	const struct esc_case *c = &esc_cases[_i];
	size_t len = c->len ? c->len : strlen(c->in);
	char out[256], again[256];
	size_t n = textesc(c->in, len, c->flags, out, sizeof(out));

	ck_assert_msg(strcmp(out, c->out) == 0, "case %d: got \"%s\", want \"%s\"", _i, out, c->out);
	ck_assert_uint_eq(n, strlen(out));
	/* Escaping is idempotent: an escaped text has nothing left to escape
	 * (so that layers may each escape, as log.c and record.c do). */
	textesc(out, n, c->flags & ~TEXTESC_LINE, again, sizeof(again));
	ck_assert_str_eq(again, out);
}
END_TEST

/* What does not fit is cut before an escape or a sequence, never inside. */
START_TEST(test_cut)
{
	char out[8];

	ck_assert_uint_eq(textesc("abc\ndef", 7, 0, out, sizeof(out)), 7);
	ck_assert_str_eq(out, "abc\\x0A");
	ck_assert_uint_eq(textesc("abc\ndef", 7, 0, out, 6), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(textesc("ab\xc3\xa9xyz", 7, 0, out, 4), 2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(textesc("abc", 3, 0, out, 1), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(textesc("abc", 3, 0, out, 0), 0);
}
END_TEST

/* The stream form agrees with the buffer form across its pieces, with a
 * sequence or an escape at every boundary. */
START_TEST(test_stream)
{
	static const char *const tails[] = { "\xc3\xa9", "\n", "\xe2\x80\xae", "\xff", "::x" };
	char in[2048], want[8192], *got = NULL;
	size_t got_len = 0;

	for (size_t pad = 250; pad < 262; pad++) {
		for (size_t t = 0; t < N(tails); t++) {
			FILE *f = open_memstream(&got, &got_len);
			size_t n;

			memset(in, 'a', pad);
			n = pad;
			for (int rep = 0; rep < 3; rep++) {
				memcpy(in + n, tails[t], strlen(tails[t]));
				n += strlen(tails[t]);
				memset(in + n, 'b', pad);
				n += pad;
			}
			ck_assert_ptr_nonnull(f);
			textesc_fput(f, in, n, TEXTESC_LINE);
			fclose(f);
			textesc(in, n, TEXTESC_LINE, want, sizeof(want));
			ck_assert_msg(strcmp(got, want) == 0, "pad %zu tail %zu", pad, t);
			free(got);
			got = NULL;
		}
	}
}
END_TEST

START_TEST(test_markdown)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	ck_assert_ptr_nonnull(f);
	textesc_markdown(f, "a|b`c<s>&\"*_$~[l](u)\\ \x1b[1m\nx");
	textesc_markdown(f, NULL);
	fclose(f);
	ck_assert_str_eq(got, "a&#124;b&#96;c&lt;s&gt;&amp;&quot;&#42;&#95;&#36;&#126;&#91;l&#93;(u)"
			      "&#92; &#92;x1B&#91;1m&#92;x0Ax");
	free(got);
}
END_TEST

static Suite *textesc_suite(void)
{
	Suite *s = suite_create("textesc");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_escape, 0, (int)N(esc_cases));
	tcase_add_test(tc, test_cut);
	tcase_add_test(tc, test_stream);
	tcase_add_test(tc, test_markdown);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(textesc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
