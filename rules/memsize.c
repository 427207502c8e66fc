/* Ceilings as the policy language and the options write them
 * (agenttrace-policy(5), "limits").  Memory: bytes ("1073741824"), a size
 * with a K, M, G or T suffix (powers of 1024: "512M", "2G"), or a share of
 * the machine's memory ("75%").  Processes: a number, or a share of the
 * kernel's task limit ("15%").  The supervisor turns shares into numbers
 * at start. */
#include <errno.h>
#include <stdlib.h>

#include "rules/load.h"

/* A number at S, or a share "N%" (1 to 100, in *PERCENT, *V then 0);
 * *END after the number.  0, or -EINVAL / -ERANGE. */
static int parse_number_or_share(const char *s, unsigned long long *v, uint32_t *percent,
				 char **end)
{
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, end, 10);
	if (errno)
		return -ERANGE;
	*percent = 0;
	if (**end == '%' && !(*end)[1]) {
		if (!*v || *v > 100)
			return -ERANGE;
		*percent = (uint32_t)*v;
		*v = 0;
	}
	return 0;
}

int rules_parse_memory(const char *s, uint64_t *bytes, uint32_t *percent)
{
	unsigned long long v, mul = 1;
	uint32_t pc;
	char *end;
	int rc = parse_number_or_share(s, &v, &pc, &end);

	if (rc < 0)
		return rc;
	if (pc) {
		*bytes = 0;
		*percent = pc;
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

int rules_parse_procs(const char *s, uint64_t *count, uint32_t *percent)
{
	unsigned long long v;
	uint32_t pc;
	char *end;
	int rc = parse_number_or_share(s, &v, &pc, &end);

	if (rc < 0)
		return rc;
	if (!pc && (*end || !v))
		return *end ? -EINVAL : -ERANGE;
	*count = v;
	*percent = pc;
	return 0;
}
