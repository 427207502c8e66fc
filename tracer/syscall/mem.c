/* Tracee memory.  process_vm_readv(2) transfers up to the first remote
 * page that is not mapped and reports a partial count, so each remote page
 * gets its own iovec: a string that ends right before an unmapped page is
 * read in full, and one syscall usually reads a whole path. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracer/syscall/mem.h"

#define MEM_PAGE 4096UL
#define MEM_IOV_MAX 4 /* pages per process_vm_readv call */

static bool mem_use_procmem;

void mem_force_procmem(bool on)
{
	mem_use_procmem = on;
}

/* Bytes readable at ADDR (up to LEN) via /proc/PID/mem; -errno if none. */
static long mem_read_procmem(pid_t pid, unsigned long addr, void *buf, size_t len)
{
	char name[64];
	long got = 0;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/mem", (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((size_t)got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - (size_t)got, (off_t)(addr + (unsigned long)got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (got == 0)
				got = (errno == EIO || errno == EFAULT) ? -EFAULT : -errno;
			break;
		}
		if (n == 0) {
			if (got == 0)
				got = -EFAULT;
			break;
		}
		got += n;
	}
	close(fd);
	return got;
}

/* Up to LEN bytes at ADDR, stopping at the first unreadable page.
 * Returns the count (> 0) or -errno. */
static long mem_read_some(pid_t pid, unsigned long addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote[MEM_IOV_MAX];
	unsigned long a = addr;
	size_t left = len;
	int n = 0;
	ssize_t got;

	if (len == 0)
		return 0;
	if (mem_use_procmem)
		return mem_read_procmem(pid, addr, buf, len);
	while (left > 0 && n < MEM_IOV_MAX) {
		size_t chunk = MEM_PAGE - (a & (MEM_PAGE - 1));

		if (chunk > left)
			chunk = left;
		remote[n].iov_base = (void *)a;
		remote[n].iov_len = chunk;
		n++;
		a += chunk;
		left -= chunk;
	}
	local.iov_len = len - left;
	got = process_vm_readv(pid, &local, 1, remote, (unsigned long)n, 0);
	if (got > 0)
		return got;
	if (got == 0)
		return -EFAULT;
	switch (errno) {
	case EPERM:
	case ENOSYS:
		return mem_read_procmem(pid, addr, buf, local.iov_len);
	case EFAULT:
	case ESRCH:
	case ENOMEM:
		return errno == ENOMEM ? -EFAULT : -errno;
	default:
		return -errno;
	}
}

int mem_read(pid_t pid, unsigned long addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		long n = mem_read_some(pid, addr + done, (char *)buf + done, len - done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}

long mem_read_string(pid_t pid, unsigned long addr, char *buf, size_t cap)
{
	size_t done = 0;

	if (cap == 0)
		return -ENAMETOOLONG;
	if (addr == 0)
		return -EFAULT;
	while (done < cap) {
		/* Read to the end of the current page first: the common short
		 * string costs one call and never touches the next page. */
		size_t want = MEM_PAGE - ((addr + done) & (MEM_PAGE - 1));
		long n;
		char *nul;

		if (want > cap - done)
			want = cap - done;
		n = mem_read_some(pid, addr + done, buf + done, want);
		if (n < 0)
			return n;
		nul = memchr(buf + done, '\0', (size_t)n);
		if (nul)
			return (long)(nul - buf);
		done += (size_t)n;
	}
	buf[cap - 1] = '\0';
	return -ENAMETOOLONG;
}

int mem_read_strings(pid_t pid, size_t n, const unsigned long *addrs, char *const *bufs,
		     const size_t *caps, long *lens)
{
	struct iovec local[MEM_STRINGS_MAX], remote[MEM_STRINGS_MAX];
	size_t idx[MEM_STRINGS_MAX], k = 0;
	ssize_t got;

	if (n > MEM_STRINGS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t want = MEM_PAGE - (addrs[i] & (MEM_PAGE - 1));

		lens[i] = -EAGAIN;
		if (addrs[i] == 0 || caps[i] == 0)
			continue;
		if (want > caps[i])
			want = caps[i];
		local[k].iov_base = bufs[i];
		local[k].iov_len = want;
		remote[k].iov_base = (void *)addrs[i];
		remote[k].iov_len = want;
		idx[k++] = i;
	}
	if (k == 0 || mem_use_procmem)
		return 0;
	got = process_vm_readv(pid, local, (unsigned long)k, remote, (unsigned long)k, 0);
	if (got < 0)
		return errno == ESRCH ? -ESRCH : 0;
	/* process_vm_readv(2): a partial transfer ends at an iovec element
	 * that failed; each element here lies within one remote page. */
	for (size_t j = 0; j < k && (size_t)got >= remote[j].iov_len; j++) {
		char *nul = memchr(local[j].iov_base, '\0', local[j].iov_len);

		got -= (ssize_t)remote[j].iov_len;
		if (nul)
			lens[idx[j]] = (long)(nul - (char *)local[j].iov_base);
	}
	return 0;
}
