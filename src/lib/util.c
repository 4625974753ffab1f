// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/orlov_err.h"

/* posix_spawn_file_actions_addclosefrom_np: glibc 2.34 and later */
#ifdef __GLIBC_PREREQ
#if __GLIBC_PREREQ(2, 34)
#define HAVE_SPAWN_CLOSEFROM 1
#endif
#endif

errcode_t sb_append(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		ns = realloc(b->s, cap);
		if (!ns)
			return ENOMEM;
		b->s = ns;
		b->cap = cap;
	}
	if (n)
		memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

errcode_t sb_vprintf(struct strbuf *b, const char *fmt, va_list ap)
{
	char tmp[512];
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	if (n >= 0 && (size_t)n < sizeof(tmp)) {
		va_end(again);
		return sb_append(b, tmp, (size_t)n);
	}
	if (n < 0) {
		va_end(again);
		return EINVAL;
	}
	{
		char *big = malloc((size_t)n + 1);
		errcode_t err = ENOMEM;

		if (big) {
			vsnprintf(big, (size_t)n + 1, fmt, again);
			err = sb_append(b, big, (size_t)n);
			free(big);
		}
		va_end(again);
		return err;
	}
}

errcode_t sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	errcode_t err;

	va_start(ap, fmt);
	err = sb_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

void sb_truncate(struct strbuf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->s[len] = '\0';
	}
}

void sb_free(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

static int needs_escape(unsigned char c)
{
	return c < 0x21 || c > 0x7e || c == '%';
}

void fput_escaped(FILE *f, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (needs_escape(c))
			fprintf(f, "%%%02X", c);
		else
			putc(c, f);
	}
}

errcode_t sb_escaped(struct strbuf *b, const char *s, size_t n)
{
	errcode_t err = 0;
	size_t i;

	for (i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (needs_escape(c))
			err = sb_printf(b, "%%%02X", c);
		else
			err = sb_append(b, &s[i], 1);
	}
	return err;
}

errcode_t path_join(const char *dir, const char *name, size_t name_len,
		    char **out)
{
	size_t dl = strlen(dir);
	char *p;

	while (dl && dir[dl - 1] == '/')
		dl--;
	p = malloc(dl + 1 + name_len + 1);
	if (!p)
		return ENOMEM;
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, name_len);
	p[dl + 1 + name_len] = '\0';
	*out = p;
	return 0;
}

errcode_t grow_array(void *arr, size_t *cap, size_t need, size_t size,
		     size_t first)
{
	void **p = arr, *n;
	size_t c = *cap ? *cap : first;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c * size);
	if (!n)
		return ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

errcode_t parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* decimal only: strtoull's base 0 would take 0100 for 64, and its
	 * leading blanks and sign are no number a user means */
	if (!s || *s < '0' || *s > '9')
		return ORLOV_ERR_USAGE;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return ORLOV_ERR_USAGE;
	*out = v;
	return 0;
}

/* realpath of @path, or of its directory when it does not exist yet;
 * NULL when neither resolves. */
static char *resolve_output(const char *path)
{
	char *r = realpath(path, NULL), *dir, *slash;

	if (r || errno != ENOENT)
		return r;
	dir = strdup(path);
	if (!dir)
		return NULL;
	slash = strrchr(dir, '/');
	if (!slash)
		r = realpath(".", NULL);
	else if (slash == dir)
		r = realpath("/", NULL);
	else {
		*slash = '\0';
		r = realpath(dir, NULL);
	}
	free(dir);
	return r;
}

errcode_t output_clobbers(const char *out, const char *image,
			  const char *source)
{
	struct stat so, si;
	char *ro, *rs;
	size_t n;
	int inside;

	if (stat(out, &so) == 0 && stat(image, &si) == 0 &&
	    so.st_dev == si.st_dev && so.st_ino == si.st_ino)
		return ORLOV_ERR_OUTPUT_IS_INPUT;
	ro = resolve_output(out);
	rs = realpath(source, NULL);
	inside = 0;
	if (ro && rs) {
		n = strlen(rs);
		inside = !strncmp(ro, rs, n) &&
			 (ro[n] == '/' || ro[n] == '\0' || !strcmp(rs, "/"));
	}
	free(ro);
	free(rs);
	return inside ? ORLOV_ERR_OUTPUT_IS_INPUT : 0;
}

/* What the child writes into @fd till it closes it, the first 4 KiB kept
 * in @msgs; the rest is read too, so that the child never blocks. */
static void read_msgs(int fd, struct strbuf *msgs)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (msgs->len < 4096)
			sb_append(msgs, buf, (size_t)n);
	}
	close(fd);
}

errcode_t run_program(const char *const *progs, size_t nprogs,
		      char *const argv[], char *const envp[], int quiet,
		      struct strbuf *msgs, int *status)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int rc = ENOENT, st, fds[2] = { -1, -1 }, fa_ok;
	size_t i;

	/* close-on-exec: no other child of a threaded caller inherits it */
	if (msgs && pipe2(fds, O_CLOEXEC))
		return (errcode_t)errno;
	fa_ok = !posix_spawn_file_actions_init(&fa);
	if (!fa_ok ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
	    (msgs && posix_spawn_file_actions_adddup2(&fa, fds[1], 2)) ||
	    (!msgs && quiet &&
	     posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0)))
		rc = ENOMEM;
#ifdef HAVE_SPAWN_CLOSEFROM
	/* Only 0, 1 and 2 reach the program: the other runs of a threaded
	 * caller hold images open through libext2fs, whose descriptors are
	 * not close-on-exec, and a mke2fs holding one would keep a device's
	 * O_EXCL, or a lock on it, for as long as it runs. */
	if (fa_ok && rc == ENOENT &&
	    posix_spawn_file_actions_addclosefrom_np(&fa, 3))
		rc = ENOMEM;
#endif
	for (i = 0; i < nprogs && rc == ENOENT; i++)
		rc = posix_spawnp(&pid, progs[i], &fa, NULL, argv, envp);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (msgs) {
		close(fds[1]);
		if (rc)
			close(fds[0]);
		else
			read_msgs(fds[0], msgs);
	}
	if (rc)
		return (errcode_t)rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return (errcode_t)errno;
	/* killed: as bad as any failure, and above every exit code */
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 256;
	return 0;
}

/* Bytes in the well-formed UTF-8 sequence at @p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

void fput_json(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k;

	fputc('"', f);
	while (i < n) {
		k = utf8_seq(p + i, n - i);
		if (k == 1 && (p[i] == '"' || p[i] == '\\')) {
			fprintf(f, "\\%c", p[i]);
		} else if (k == 0 || (k == 1 && (p[i] < 0x20 || p[i] == 0x7f ||
						  p[i] == '%'))) {
			/* a byte that is no character, as -v shows it;
			 * '%' itself too, so that %XX is never ambiguous */
			fprintf(f, "%%%02X", p[i]);
			k = 1;
		} else {
			fwrite(p + i, 1, k, f);
		}
		i += k;
	}
	fputc('"', f);
}

errcode_t pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? (errcode_t)errno : EIO;
		p += w;
		off += w;
		len -= (size_t)w;
	}
	return 0;
}

#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t get_le64(const unsigned char *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static uint64_t xx_round(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * XXP2, 31) * XXP1;
}

static uint64_t xx_merge(uint64_t acc, uint64_t v)
{
	return (acc ^ xx_round(0, v)) * XXP1 + XXP4;
}

void digest_init(struct digest *d, uint64_t seed)
{
	memset(d, 0, sizeof(*d));
	d->v[0] = seed + XXP1 + XXP2;
	d->v[1] = seed + XXP2;
	d->v[2] = seed;
	d->v[3] = seed - XXP1;
}

static void digest_stripe(struct digest *d, const unsigned char *p)
{
	int i;

	for (i = 0; i < 4; i++)
		d->v[i] = xx_round(d->v[i], get_le64(p + 8 * i));
}

void digest_update(struct digest *d, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t k;

	d->total += n;
	if (d->n) {
		k = 32 - d->n < n ? 32 - d->n : n;
		memcpy(d->buf + d->n, p, k);
		d->n += k;
		p += k;
		n -= k;
		if (d->n < 32)
			return;
		digest_stripe(d, d->buf);
		d->n = 0;
	}
	for (; n >= 32; p += 32, n -= 32)
		digest_stripe(d, p);
	memcpy(d->buf, p, n);
	d->n = n;
}

void digest_u64(struct digest *d, uint64_t v)
{
	unsigned char b[8];

	put_le32(b, (uint32_t)v);
	put_le32(b + 4, (uint32_t)(v >> 32));
	digest_update(d, b, sizeof(b));
}

uint64_t digest_final(const struct digest *d)
{
	const unsigned char *p = d->buf, *end = d->buf + d->n;
	uint64_t h;
	int i;

	if (d->total >= 32) {
		h = rotl64(d->v[0], 1) + rotl64(d->v[1], 7) +
		    rotl64(d->v[2], 12) + rotl64(d->v[3], 18);
		for (i = 0; i < 4; i++)
			h = xx_merge(h, d->v[i]);
	} else {
		h = d->v[2] + XXP5;
	}
	h += d->total;
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ xx_round(0, get_le64(p)), 27) * XXP1 + XXP4;
	if (p + 4 <= end) {
		h = rotl64(h ^ (uint64_t)get_le32(p) * XXP1, 23) * XXP2 + XXP3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ *p * XXP5, 11) * XXP1;
	h ^= h >> 33;
	h *= XXP2;
	h ^= h >> 29;
	h *= XXP3;
	return h ^ (h >> 32);
}
