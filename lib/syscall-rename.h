/* Which files a rename gives which names, as the supervisor's decoder
 * and engine, the preload shim and the tools reading records all see
 * it.  Header only, like lib/syscall-open.h: the shim includes it
 * without linking anything of the supervisor. */
#ifndef AGENTTRACE_LIB_SYSCALL_RENAME_H
#define AGENTTRACE_LIB_SYSCALL_RENAME_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The flags text of a record of an exchange (agenttrace(1), RECORDS). */
#define SYSCALL_EXCHANGE_TEXT "RENAME_EXCHANGE"

/* Whether the call CALL (a syscall's name, or the shim's libc function of
 * that name) with FLAGS swaps its two files, each getting the other's
 * name: renameat2(2) with RENAME_EXCHANGE.  No other call has the bit
 * (linkat(2) fails with EINVAL on it). */
static inline bool syscall_exchanges(const char *call, unsigned long flags)
{
	return (flags & RENAME_EXCHANGE) && call && strcmp(call, "renameat2") == 0;
}

/* Whether a record's flags text FLAGS says its rename was an exchange. */
static inline bool syscall_exchange_recorded(const char *flags)
{
	return flags && strcmp(flags, SYSCALL_EXCHANGE_TEXT) == 0;
}

#endif
