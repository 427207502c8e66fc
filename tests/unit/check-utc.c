/* utc_rfc3339() against gmtime_r(3) + strftime(3) over leap days, century
 * years, the epoch, times before it and a sweep of 400 years. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/utc.h"

static void utc_expect(time_t t, long ns)
{
	struct timespec ts = { .tv_sec = t, .tv_nsec = ns };
	char got[40], want[40];
	struct tm tm;
	size_t n;

	ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
	n = strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(want + n, sizeof(want) - n, ".%03ldZ", ns / 1000000);
	utc_rfc3339(&ts, got, sizeof(got));
	ck_assert_msg(strcmp(got, want) == 0, "t=%lld: got %s, want %s", (long long)t, got, want);
}

START_TEST(test_known)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 999999999 };
	char buf[40];

	utc_rfc3339(&ts, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1970-01-01T00:00:00.999Z");
	ts = (struct timespec){ .tv_sec = 951782400, .tv_nsec = 5000000 }; /* a leap day */
	utc_rfc3339(&ts, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2000-02-29T00:00:00.005Z");
	ts = (struct timespec){ .tv_sec = -1, .tv_nsec = 0 };
	utc_rfc3339(&ts, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1969-12-31T23:59:59.000Z");
	/* RFC 3339 wants four digits where strftime's %Y gives "1". */
	ts = (struct timespec){ .tv_sec = -62135596800, .tv_nsec = 0 };
	utc_rfc3339(&ts, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0001-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_edges)
{
	static const time_t t[] = {
		0, 86399, 86400, 68169600 /* 1972-02-29 */, 946684799, 946684800,
		951868799 /* 2000-02-29 23:59:59 */, 951868800, 4107542400 /* 2100-03-01 */,
		4107456000 /* 2100-02-28 */, 1796083200 /* 2026-11-30 */, 253402300799 /* 9999-12-31 */,
		-86400, -2208988800 /* 1900-01-01 */, -2203891200 /* 1900-03-01 */,
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		utc_expect(t[i], 123456789);
}
END_TEST

/* Every 9,999,991 s (about 116 days, a prime so that days and hours
 * drift) from 1800 to 2200. */
START_TEST(test_sweep)
{
	for (int64_t t = -5364662400LL; t < 7258118400LL; t += 9999991)
		utc_expect((time_t)t, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("utc");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_known);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_sweep);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
