/* The supervisor side of the preload channel (see channel.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "rules/rules.h"
#include "tracer/confine/linked.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/hosts.h"
#include "tracer/session.h"

#ifndef PKGLIBDIR
#define PKGLIBDIR "/usr/local/lib/agenttrace"
#endif

static bool channel_usable(const char *path)
{
	return access(path, R_OK) == 0;
}

const char *channel_find_preload(const struct session *s)
{
	static char found[PATH_MAX];
	const char *slash;

	/* The build tree first: a developer's agenttrace must not pick up an
	 * older installed shim. */
	if (s->self_exe && (slash = strrchr(s->self_exe, '/'))) {
		snprintf(found, sizeof(found), "%.*s/preload/%s", (int)(slash - s->self_exe),
			 s->self_exe, CHANNEL_PRELOAD_NAME);
		if (channel_usable(found))
			return found;
	}
	snprintf(found, sizeof(found), "%s/%s", PKGLIBDIR, CHANNEL_PRELOAD_NAME);
	if (channel_usable(found))
		return found;
	return NULL;
}

/* The run dir, as mkdtemp(3) makes it (a fresh random name, mode 0700,
 * EEXIST never reused), once its name is in the policy's rules. */
static int channel_make_run_dir(struct session *s)
{
	if (s->run_dir_made)
		return 0;
	if (mkdir(s->run_dir, 0700) < 0)
		return -errno;
	s->run_dir_made = true;
	if (s->switch_user && chown(s->run_dir, s->uid, s->gid) < 0)
		return -errno;
	return 0;
}

int channel_prepare(struct session *s)
{
	const char *base = getenv("TMPDIR");
	char token[17];

	s->channel_fd = -1;
	if (s->opt->explain || s->opt->backend == OPTIONS_BACKEND_PTRACE)
		return 0;
	s->preload_lib = channel_find_preload(s);
	if (!s->preload_lib)
		return s->opt->backend == OPTIONS_BACKEND_PRELOAD ? -ENOENT : 0;
	if (!base || base[0] != '/')
		base = "/tmp";
	/* A token of its own, not the session id: that one is public
	 * (records, the channel's abstract name), and another user could
	 * take the name first.  A name taken anyway only fails the mkdir
	 * (EEXIST). */
	session_token(token);
	s->run_dir = xasprintf("%s/agenttrace-run.%s", base, token);
	/* The name is known now, for the rule that keeps the command out of
	 * it (session.c); the directory is made only when the shim is to read
	 * the policy from it: the preload backend, or auto falling back to it.
	 * A ptrace session makes no directory (on a disk with online discard
	 * its mkdir and rmdir cost about a millisecond). */
	return s->preload_only ? channel_make_run_dir(s) : 0;
}

/* A new file of the run dir for the shim to map: SIZE bytes of DATA,
 * read-only, the command's user's.  0 or -errno. */
static int channel_write_file(const struct session *s, const char *path, const void *data,
			      size_t size)
{
	size_t off = 0;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
	if (fd < 0)
		return -errno;
	while (off < size) {
		ssize_t n = write(fd, (const char *)data + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && s->switch_user && chown(path, s->uid, s->gid) < 0)
		ret = -errno;
	return ret;
}

/* The compiled block as the shim sees it: --record and --mode are the
 * supervisor's, folded in. */
static int channel_write_blob(struct session *s)
{
	struct rules_policy *copy;
	size_t size = s->policy->size;
	int ret;

	ret = channel_make_run_dir(s);
	if (ret < 0)
		return ret;
	s->blob_path = xasprintf("%s/policy.bin", s->run_dir);
	copy = xmalloc(size);
	memcpy(copy, s->policy, size);
	copy->record = s->record_all;
	/* The shim asks before a spawn only when there is a ceiling. */
	copy->limits.max_procs = session_counts_spawns(s) ? s->max_procs : 0;
	ret = channel_write_file(s, s->blob_path, copy, size);
	free(copy);
	return ret;
}

int channel_write_linked(struct session *s)
{
	struct channel_linked_head head = { .magic = CHANNEL_LINKED_MAGIC };
	struct channel_linked_file *files;
	size_t strings = 0, size, at;
	char *buf;
	int ret;

	if (!s->preload_only)
		return 0;
	linked_finish(&s->linked);
	if (!s->run_dir || !linked_any(&s->linked) || s->linked_path)
		return 0;
	for (size_t i = 0; i < s->linked.n; i++)
		strings += strlen(s->linked.v[i].path) + 1;
	size = sizeof(head) + s->linked.n * sizeof(*files) + strings;
	buf = xmalloc(size);
	head.n = (uint32_t)s->linked.n;
	head.strings = (uint32_t)strings;
	memcpy(buf, &head, sizeof(head));
	files = (struct channel_linked_file *)(buf + sizeof(head));
	at = 0;
	for (size_t i = 0; i < s->linked.n; i++) {
		size_t n = strlen(s->linked.v[i].path) + 1;

		files[i] = (struct channel_linked_file){ .dev = s->linked.v[i].dev,
							 .ino = s->linked.v[i].ino,
							 .path = (uint32_t)at };
		memcpy(buf + sizeof(head) + s->linked.n * sizeof(*files) + at, s->linked.v[i].path, n);
		at += n;
	}
	s->linked_path = xasprintf("%s/%s", s->run_dir, CHANNEL_LINKED_NAME);
	ret = channel_write_file(s, s->linked_path, buf, size);
	free(buf);
	return ret;
}

static int channel_bind(struct session *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd, sz = 4 << 20;

	snprintf(s->channel_name, sizeof(s->channel_name), "@agenttrace-%s", s->id);
	n = strlen(s->channel_name);
	memcpy(sa.sun_path + 1, s->channel_name + 1, n - 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	/* Bursts of events (a build's opens in preload mode) queue here. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	s->channel_fd = fd;
	return 0;
}

/* LD_PRELOAD: the shim first, then what the user had. */
static void channel_export_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (old && *old)
		v = xasprintf("%s:%s", lib, old);
	else
		v = xstrdup(lib);
	setenv("LD_PRELOAD", v, 1);
	free(v);
	/* An ASan-built command checks that its runtime comes first in the
	 * library list and aborts otherwise; the shim only calls through to
	 * it, so the check is lifted (agenttrace(1), BACKENDS). */
	old = getenv("ASAN_OPTIONS");
	if (!old || !strstr(old, "verify_asan_link_order")) {
		v = old && *old ? xasprintf("%s:verify_asan_link_order=0", old) :
				  xstrdup("verify_asan_link_order=0");
		setenv("ASAN_OPTIONS", v, 1);
		free(v);
	}
}

int channel_open(struct session *s)
{
	int r;

	s->hosts = hosts_new();
	r = channel_bind(s);
	if (r < 0)
		return r;
	if (!s->preload_lib)
		return 0;
	if (s->preload_only) {
		r = channel_write_blob(s);
		if (r < 0)
			return r;
		setenv(CHANNEL_ENV_BLOB, s->blob_path, 1);
	}
	channel_export_preload(s->preload_lib);
	setenv(CHANNEL_ENV_CHANNEL, s->channel_name, 1);
	setenv(CHANNEL_ENV_BACKEND, s->preload_only ? "preload" : "ptrace", 1);
	return 0;
}

int channel_to_preload(struct session *s)
{
	int r;

	if (!s->preload_lib || !s->run_dir || s->channel_fd < 0)
		return -ENOENT;
	s->preload_only = true;
	r = channel_write_blob(s);
	if (r == 0)
		r = channel_write_linked(s);
	if (r < 0) {
		s->preload_only = false;
		return r;
	}
	setenv(CHANNEL_ENV_BLOB, s->blob_path, 1);
	setenv(CHANNEL_ENV_BACKEND, "preload", 1);
	return 0;
}

static void channel_hosts(struct session *s, const struct channel_msg *m)
{
	const struct channel_hosts *h = &m->u.hosts;
	char name[CHANNEL_HOST_MAX];

	memcpy(name, h->name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	for (unsigned i = 0; i < h->n && i < CHANNEL_HOST_ADDRS; i++)
		hosts_add(s->hosts, name, h->addrs[i].family, h->addrs[i].addr,
			  h->source == CHANNEL_SOURCE_RESOLVER ? CHANNEL_SOURCE_RESOLVER :
								 CHANNEL_SOURCE_SHIM);
}

int channel_drain(struct session *s)
{
	static struct channel_msg m;
	int count = 0;

	if (s->channel_fd < 0)
		return 0;
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(4 * sizeof(int))];
		} ctl;
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		int fd = -1, fd2 = -1;
		ssize_t n = recvmsg(s->channel_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		/* SPAWN_ASK's answer socket, ENDPOINT_ASK's and the socket it
		 * asks about; any other fd is closed unread. */
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t nfd;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < nfd; i++) {
				int x;

				memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (fd < 0)
					fd = x;
				else if (fd2 < 0)
					fd2 = x;
				else
					close(x);
			}
		}
		if ((size_t)n < CHANNEL_HEADER_SIZE || m.magic != CHANNEL_MAGIC ||
		    m.version != CHANNEL_VERSION) {
			if (fd >= 0)
				close(fd);
			if (fd2 >= 0)
				close(fd2);
			continue;
		}
		/* A short message of a type: the rest reads as zeros. */
		memset((char *)&m + n, 0, sizeof(m) - (size_t)n);
		count++;
		if (m.type == CHANNEL_SPAWN_ASK)
			m.u.spawn.reply_fd = fd;
		if (m.type == CHANNEL_ENDPOINT_ASK) {
			m.u.endpoint.reply_fd = fd;
			m.u.endpoint.sock_fd = fd2;
		}
		if (m.type == CHANNEL_HOSTS)
			channel_hosts(s, &m);
		else if ((m.type == CHANNEL_EVENT || m.type == CHANNEL_SPAWN_ASK ||
			  m.type == CHANNEL_SPAWN_DONE || m.type == CHANNEL_BIND ||
			  m.type == CHANNEL_ENDPOINT_ASK) && s->preload_only && s->channel_handler)
			s->channel_handler(s, &m);
		if (fd >= 0)
			close(fd);
		if (fd2 >= 0)
			close(fd2);
	}
	return count;
}

int channel_is_self(const struct session *s, const char *unix_path)
{
	return s->channel_fd >= 0 && unix_path && strcmp(unix_path, s->channel_name) == 0;
}

void channel_close(struct session *s)
{
	if (s->channel_fd >= 0)
		close(s->channel_fd);
	s->channel_fd = -1;
	if (s->blob_path)
		unlink(s->blob_path);
	if (s->linked_path)
		unlink(s->linked_path);
	free(s->linked_path);
	s->linked_path = NULL;
	if (s->run_dir_made)
		rmdir(s->run_dir);
	free(s->blob_path);
	free(s->run_dir);
	s->blob_path = NULL;
	s->run_dir = NULL;
	s->run_dir_made = false;
	hosts_free(s->hosts);
	s->hosts = NULL;
	for (size_t i = 0; i < s->n_unseen; i++)
		free(s->unseen[i]);
	free(s->unseen);
	s->unseen = NULL;
	s->n_unseen = 0;
}
