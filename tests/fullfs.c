// SPDX-License-Identifier: GPL-2.0-or-later
/* For tests/t-trust-image.sh (LD_PRELOAD): a host filesystem with FULLFS_FREE bytes left, for the
 * files whose path contains FULLFS_MATCH: a write or fallocate that
 * would allocate more (holes it fills, past the end) fails with ENOSPC;
 * a hole punched gives its room back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long long left = -1;

static int ours(int fd)
{
	const char *m = getenv("FULLFS_MATCH");
	char p[64], buf[4096];
	ssize_t n;

	if (!m)
		return 0;
	if (left < 0)
		left = atoll(getenv("FULLFS_FREE") ? getenv("FULLFS_FREE") : "0");
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, m) != NULL;
}

/* Bytes of [off, off + len) not allocated yet, in 4 KiB pages. */
static long long unallocated(int fd, off_t off, off_t len)
{
	off_t cur = lseek(fd, 0, SEEK_CUR), p = off & ~(off_t)4095, end = off + len, d, h;
	long long n = 0;

	while (p < end) {
		d = lseek(fd, p, SEEK_DATA);
		if (d < 0 || d >= end) {
			n += end - p;
			break;
		}
		n += d - p;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			break;
		p = h;
	}
	lseek(fd, cur, SEEK_SET);
	return (n + 4095) & ~4095LL;
}

static int take(int fd, off_t off, off_t len)
{
	long long need;

	if (!ours(fd))
		return 0;
	need = unallocated(fd, off, len);
	if (need > left) {
		errno = ENOSPC;
		return -1;
	}
	left -= need;
	return 0;
}

ssize_t pwrite64(int fd, const void *b, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	return take(fd, off, (off_t)n) ? -1 : real(fd, b, n, off);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	return pwrite64(fd, b, n, off);
}

ssize_t write(int fd, const void *b, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);

	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd > 2 && take(fd, lseek(fd, 0, SEEK_CUR), (off_t)n))
		return -1;
	return real(fd, b, n);
}

/* stdio reaches the kernel through glibc's own write, which no preload
 * sees: a matching stream's fwrite fails as its flush would. */
size_t fwrite(const void *b, size_t size, size_t n, FILE *f)
{
	static size_t (*real)(const void *, size_t, size_t, FILE *);
	int fd = fileno(f);

	if (!real)
		real = (size_t (*)(const void *, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "fwrite");
	if (fd > 2 && take(fd, ftello(f), (off_t)(size * n)))
		return 0;
	return real(b, size, n, f);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
	static int (*real)(int, int, off_t, off_t);

	if (!real)
		real = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate64");
	/* a hole punched gives its room back, as on a real filesystem */
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		long long had = ((off + len + 4095) & ~4095LL) - (off & ~4095LL);

		if (ours(fd))
			left += had - unallocated(fd, off, len);
		return real(fd, mode, off, len);
	}
	return take(fd, off, len) ? -1 : real(fd, mode, off, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocate64(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	return fallocate64(fd, 0, off, len) ? errno : 0;
}
