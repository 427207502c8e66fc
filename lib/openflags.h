/* Open flags as text: how a record writes them ("O_RDWR|O_CREAT|0x8000")
 * and how the tools that replay a record read them back.  One table for
 * both, so that what a record says is what replay judges. */
#ifndef AGENTTRACE_LIB_OPENFLAGS_H
#define AGENTTRACE_LIB_OPENFLAGS_H

#include <stdbool.h>
#include <stddef.h>

/* FLAGS as names joined by '|' into BUF (SIZE bytes; truncated to fit):
 * the access mode first, bits without a name as one hex number last. */
void openflags_text(int flags, char *buf, size_t size);

/* TEXT, as openflags_text() writes it, into *FLAGS.  False (and *FLAGS
 * untouched) when a part is neither a name nor a hex number. */
bool openflags_parse(const char *text, int *flags);

#endif
