/* SHA-256 (FIPS 180-4), for the content addresses of the evidence kept
 * of a session (tracer/record/evidence.c) and the hashes in exec
 * records.  Incremental: init, update as the bytes come, final. */
#ifndef AGENTTRACE_LIB_SHA256_H
#define AGENTTRACE_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;          /* bytes so far */
	unsigned char buf[64];
	size_t n;              /* bytes in buf */
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
/* The digest as 64 lowercase hex digits and a NUL. */
void sha256_hex(struct sha256 *c, char out[65]);

#endif
