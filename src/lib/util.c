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

errcode_t pread_all(int fd, void *buf, size_t len, uint64_t off,
		    errcode_t at_end)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? (errcode_t)errno : at_end;
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
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
