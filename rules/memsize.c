/* A memory ceiling as the policy language and --max-memory write it:
 * bytes ("1073741824"), a size with a K, M, G or T suffix (powers of
 * 1024: "512M", "2G"), or a share of the machine's memory ("75%"), which
 * the supervisor turns into bytes at start (agenttrace-policy(5),
 * "limits"). */
#include <errno.h>
#include <stdlib.h>

#include "rules/load.h"

int rules_parse_memory(const char *s, uint64_t *bytes, uint32_t *percent)
{
	unsigned long long v, mul = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end == '%' && !end[1]) {
		if (!v || v > 100)
			return -ERANGE;
		*bytes = 0;
		*percent = (uint32_t)v;
		return 0;
	}
	switch (*end) {
	case '\0': break;
	case 'K': case 'k': mul = 1ULL << 10; end++; break;
	case 'M': case 'm': mul = 1ULL << 20; end++; break;
	case 'G': case 'g': mul = 1ULL << 30; end++; break;
	case 'T': case 't': mul = 1ULL << 40; end++; break;
	default: return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	if (!v || v > ~0ULL / mul)
		return -ERANGE;
	*bytes = v * mul;
	*percent = 0;
	return 0;
}
