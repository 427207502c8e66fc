/* Open flags as text (openflags.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/openflags.h"

/* In the order a record names them.  Names of more than one bit come
 * before their parts: O_TMPFILE carries O_DIRECTORY's bit and O_SYNC
 * O_DSYNC's, and each is named as a whole. */
static const struct {
	int bits;
	const char *name;
} openflags_names[] = {
	{ O_TMPFILE, "O_TMPFILE" }, { O_DIRECTORY, "O_DIRECTORY" },
	{ O_SYNC, "O_SYNC" }, { O_CREAT, "O_CREAT" }, { O_EXCL, "O_EXCL" },
	{ O_NOCTTY, "O_NOCTTY" }, { O_TRUNC, "O_TRUNC" }, { O_APPEND, "O_APPEND" },
	{ O_NONBLOCK, "O_NONBLOCK" }, { O_DSYNC, "O_DSYNC" }, { O_DIRECT, "O_DIRECT" },
	{ O_NOFOLLOW, "O_NOFOLLOW" }, { O_NOATIME, "O_NOATIME" }, { O_CLOEXEC, "O_CLOEXEC" },
	{ O_PATH, "O_PATH" },
};

/* By access mode; 3 is Linux's mode for ioctl-only descriptors. */
static const char *const openflags_modes[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };

void openflags_text(int flags, char *buf, size_t size)
{
	int rest = flags & ~O_ACCMODE, mode = flags & O_ACCMODE;
	size_t n;

	if (!size)
		return;
	n = (size_t)snprintf(buf, size, "%s", openflags_modes[mode]);
	for (size_t i = 0; i < sizeof(openflags_names) / sizeof(openflags_names[0]) && n < size; i++)
		if ((rest & openflags_names[i].bits) == openflags_names[i].bits) {
			n += (size_t)snprintf(buf + n, size - n, "|%s", openflags_names[i].name);
			rest &= ~openflags_names[i].bits;
		}
	if (rest && n < size)
		snprintf(buf + n, size - n, "|0x%x", (unsigned)rest);
}

static bool openflags_part(const char *s, size_t len, int *bits)
{
	char *end;
	unsigned long v;

	for (int m = 0; m < 4; m++)
		if (strlen(openflags_modes[m]) == len && memcmp(s, openflags_modes[m], len) == 0) {
			*bits = m;
			return true;
		}
	for (size_t i = 0; i < sizeof(openflags_names) / sizeof(openflags_names[0]); i++)
		if (strlen(openflags_names[i].name) == len &&
		    memcmp(s, openflags_names[i].name, len) == 0) {
			*bits = openflags_names[i].bits;
			return true;
		}
	if (len < 3 || len > 10 || s[0] != '0' || s[1] != 'x')
		return false;
	v = strtoul(s, &end, 16);
	if (end != s + len)
		return false;
	*bits = (int)v;
	return true;
}

bool openflags_parse(const char *text, int *flags)
{
	int out = 0;

	if (!text || !*text)
		return false;
	for (const char *p = text;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		int bits;

		if (!openflags_part(p, len, &bits))
			return false;
		out |= bits;
		if (!bar)
			break;
		p = bar + 1;
	}
	*flags = out;
	return true;
}
