// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * agetool - the guest side of bench/aging.sh and bench/guest-traversal.sh
 * (built static on the host, run in the QEMU guest next to replay).
 *
 *   agetool traverse [-r] DIR
 *       Cold traversal of DIR: depth first, a directory before its
 *       entries; for every entry lstat, then for a directory every name
 *       read (readdir), for a regular file every byte read (256 KiB
 *       read()s), for a symlink readlink.  Siblings in strcmp order of
 *       their names (the order of the host-side model, bench/layout.py),
 *       or with -r in readdir order (what find or tar would do).
 *       Prints "entries=N bytes=B ns=T" (T: CLOCK_MONOTONIC).
 *
 *   agetool apply LIST DATA DEST
 *       Apply a change list (made by bench/aging.py changes), one
 *       operation a line, PATH relative to DEST, %XX-escaped:
 *         u PATH          unlink (file or symlink)
 *         r PATH          rmdir
 *         d MODE PATH     mkdir (octal mode)
 *         w MODE PATH     write DATA/PATH into PATH: open O_CREAT|O_TRUNC,
 *                         write front to back, fchmod, close (an existing
 *                         file is rewritten in place)
 *         l PATH TARGET   symlink
 *       Stops at the first failing operation (exit 1).  Prints the counts.
 *       Forks first until its pid is 0 modulo 16 (the block colour).
 *
 * Build: gcc -static -O2 -Wno-format-truncation -o agetool agetool.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[256 * 1024];
static unsigned long long n_entries, n_bytes;
static int readdir_order;

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int visit(const char *path);

static int walk_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		perror(path);
		return 1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (!readdir_order)
		qsort(names, n, sizeof(*names), cmp);
	for (i = 0; i < n; i++) {
		char *p;

		if (asprintf(&p, "%s/%s", path, names[i]) < 0)
			abort();
		rc |= visit(p);
		free(p);
		free(names[i]);
	}
	free(names);
	return rc;
}

static int visit(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		perror(path);
		return 1;
	}
	n_entries++;
	if (S_ISDIR(st.st_mode))
		return walk_dir(path);
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_NOATIME);
		ssize_t r;

		if (fd < 0)
			fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			n_bytes += r;
		close(fd);
		return r < 0;
	}
	if (S_ISLNK(st.st_mode)) {
		ssize_t r = readlink(path, buf, sizeof(buf));

		return r < 0;
	}
	return 0;
}

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%' && s[1] && s[2]) {
			char h[3] = { s[1], s[2], 0 };

			*o++ = (char)strtol(h, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static int write_file(const char *data, const char *dest, const char *rel, mode_t mode)
{
	char src[PATH_MAX], dst[PATH_MAX];
	int in, out;
	ssize_t r;

	snprintf(src, sizeof(src), "%s/%s", data, rel);
	snprintf(dst, sizeof(dst), "%s/%s", dest, rel);
	in = open(src, O_RDONLY);
	if (in < 0) {
		perror(src);
		return 1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out < 0) {
		perror(dst);
		close(in);
		return 1;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (r > 0) {
			ssize_t w = write(out, p, r);

			if (w < 0) {
				perror(dst);
				return 1;
			}
			p += w;
			r -= w;
		}
	}
	if (r < 0 || fchmod(out, mode) < 0) {
		perror(dst);
		return 1;
	}
	close(in);
	return close(out) < 0;
}

/* fork until getpid() % 16 == 0: ext2 colours the block goal of a new
 * file by current->pid % 16 (as replay run --colour 0 does), so every
 * image gets the same colour */
static void colour0(void)
{
	while (getpid() % 16) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return;
		if (p == 0)
			continue;
		if (waitpid(p, &st, 0) < 0)
			_exit(1);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
}

static int apply(const char *list, const char *data, const char *dest)
{
	FILE *f;

	colour0();
	f = fopen(list, "r");
	char line[3 * PATH_MAX], p[PATH_MAX];
	unsigned long cnt[128] = { 0 };

	if (!f) {
		perror(list);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char op = line[0], *a = line + 2, *b, *c;
		int rc = 0;

		line[strcspn(line, "\n")] = 0;
		if (!op)
			continue;
		b = strchr(a, ' ');
		if (b)
			*b++ = 0;
		switch (op) {
		case 'u':
		case 'r':
			unescape(a);
			snprintf(p, sizeof(p), "%s/%s", dest, a);
			rc = op == 'u' ? unlink(p) : rmdir(p);
			if (rc)
				perror(p);
			break;
		case 'd':
			if (!b)
				goto bad;
			unescape(b);
			snprintf(p, sizeof(p), "%s/%s", dest, b);
			rc = mkdir(p, strtol(a, NULL, 8));
			if (rc)
				perror(p);
			break;
		case 'w':
			if (!b)
				goto bad;
			unescape(b);
			rc = write_file(data, dest, b, strtol(a, NULL, 8));
			break;
		case 'l':
			if (!b)
				goto bad;
			c = b;
			unescape(a);
			unescape(c);
			snprintf(p, sizeof(p), "%s/%s", dest, a);
			rc = symlink(c, p);
			if (rc)
				perror(p);
			break;
		default:
bad:
			fprintf(stderr, "agetool: bad line: %s\n", line);
			return 1;
		}
		if (rc)
			return 1;
		cnt[(unsigned char)op & 127]++;
	}
	fclose(f);
	printf("unlink=%lu rmdir=%lu mkdir=%lu write=%lu symlink=%lu\n",
	       cnt['u'], cnt['r'], cnt['d'], cnt['w'], cnt['l']);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "traverse")) {
		struct timespec t0, t1;
		const char *dir = argv[2];
		int rc;

		if (argc == 4 && !strcmp(argv[2], "-r")) {
			readdir_order = 1;
			dir = argv[3];
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = visit(dir);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("entries=%llu bytes=%llu ns=%lld\n", n_entries, n_bytes,
		       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		       (t1.tv_nsec - t0.tv_nsec));
		return rc;
	}
	if (argc == 5 && !strcmp(argv[1], "apply"))
		return apply(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: agetool traverse [-r] DIR | agetool apply LIST DATA DEST\n");
	return 2;
}
