#include <stdint.h>
#include <stdio.h>

#include "lib/utc.h"

/* The civil date of DAYS since 1970-01-01 (proleptic Gregorian).  Years
 * are counted from March 1st in eras of 400 years (146,097 days), so that
 * the leap day is the last day of a year and every era is the same. */
static void utc_civil(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468; /* days since 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);                          /* [0, 146096] */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	unsigned mp = (5 * doy + 2) / 153;                                    /* March: 0 */

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void utc_rfc3339(const struct timespec *ts, char *buf, size_t size)
{
	int64_t days = ts->tv_sec / 86400, secs = ts->tv_sec % 86400, y;
	unsigned m, d;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	utc_civil(days, &y, &m, &d);
	snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02d.%03ldZ", (long long)y, m, d,
		 (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
		 ts->tv_nsec / 1000000);
}
