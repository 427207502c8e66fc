/* libagenttrace-preload.so: the constructor.  Reads what agenttrace put
 * into the environment (channel.h), maps the compiled policy read-only in
 * preload mode, and resolves the real libc functions, so that no wrapper
 * ever needs dlsym, malloc or a lock later. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/ask.h"
#include "preload/real.h"
#include "preload/shim.h"
#include "lib/channel-wire.h"

struct shim_state shim;

static void shim_env_copy(char *dst, size_t size, const char *name, const char *value)
{
	size_t n = strlen(name), v = value ? strlen(value) : 0;

	if (!value || n + 1 + v + 1 > size) {
		dst[0] = 0;
		return;
	}
	memcpy(dst, name, n);
	dst[n] = '=';
	memcpy(dst + n + 1, value, v + 1);
}

/* The file at PATH mapped read-only, its size in *SIZE; NULL when it
 * cannot be. */
static void *shim_map(const char *path, size_t *size)
{
	struct stat st;
	void *p;
	int fd;

	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > (1 << 28)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*size = (size_t)st.st_size;
	return p;
}

/* The policy blob: open, check, map read-only.  NULL when unusable. */
static const struct rules_policy *shim_map_policy(const char *path)
{
	size_t size;
	void *p = shim_map(path, &size);

	if (p && rules_policy_check(p, size) != 0) {
		munmap(p, size);
		return NULL;
	}
	return p;
}

/* The denied files with other names beside the blob at BLOB, checked:
 * every entry and path within the file.  NULL when there are none. */
static const struct channel_linked_head *shim_map_linked(const char *blob)
{
	const struct channel_linked_head *h;
	const struct channel_linked_file *f;
	const char *slash = strrchr(blob, '/'), *strings;
	char path[PATH_MAX];
	size_t size, dir = slash ? (size_t)(slash - blob) : 0;

	if (!slash || dir + 1 + sizeof(CHANNEL_LINKED_NAME) > sizeof(path))
		return NULL;
	memcpy(path, blob, dir + 1);
	memcpy(path + dir + 1, CHANNEL_LINKED_NAME, sizeof(CHANNEL_LINKED_NAME));
	if (!(h = shim_map(path, &size)))
		return NULL;
	f = (const struct channel_linked_file *)(h + 1);
	strings = (const char *)(f + h->n);
	if (size < sizeof(*h) || h->magic != CHANNEL_LINKED_MAGIC || h->n > size / sizeof(*f) ||
	    size != sizeof(*h) + (size_t)h->n * sizeof(*f) + h->strings || h->strings == 0 ||
	    strings[h->strings - 1] != '\0')
		goto bad;
	for (uint32_t i = 0; i < h->n; i++)
		if (f[i].path >= h->strings || strings[f[i].path] != '/')
			goto bad;
	return h;
bad:
	munmap((void *)h, size);
	return NULL;
}

void shim_init(void)
{
	const char *chan = getenv(CHANNEL_ENV_CHANNEL);
	const char *backend = getenv(CHANNEL_ENV_BACKEND);
	const char *blob = getenv(CHANNEL_ENV_BLOB);
	Dl_info info;

	if (shim.self[0])
		return;
	real_init();
	if (dladdr((void *)shim_init, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof(shim.self))
		strcpy(shim.self, info.dli_fname);
	else
		strcpy(shim.self, CHANNEL_PRELOAD_NAME);
	if (!chan || chan[0] != '@' || strlen(chan) >= sizeof(shim.channel) || !backend)
		return;
	shim.channel[0] = 0; /* abstract name */
	memcpy(shim.channel + 1, chan + 1, strlen(chan) - 1);
	shim.channel_len = (unsigned)strlen(chan);
	shim_env_copy(shim.env_channel, sizeof(shim.env_channel), CHANNEL_ENV_CHANNEL, chan);
	shim_env_copy(shim.env_backend, sizeof(shim.env_backend), CHANNEL_ENV_BACKEND, backend);
	shim_env_copy(shim.env_blob, sizeof(shim.env_blob), CHANNEL_ENV_BLOB, blob);
	if (strcmp(backend, "preload") == 0) {
		shim.policy = blob ? shim_map_policy(blob) : NULL;
		shim.linked = shim.policy ? shim_map_linked(blob) : NULL;
		/* Without a policy there is nothing to decide with: fail
		 * closed would break every program, so report host names only
		 * and let the supervisor's summary say so. */
		shim.mode = shim.policy ? SHIM_DECIDE : SHIM_HOSTS;
	} else {
		shim.mode = SHIM_HOSTS;
	}
	ask_init();
}

__attribute__((constructor)) static void shim_constructor(void)
{
	shim_init();
}
