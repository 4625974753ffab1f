/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_UTIL_H
#define ORLOV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <et/com_err.h>

/* A growable string. */
struct strbuf {
	char *s;
	size_t len, cap;
};

errcode_t sb_append(struct strbuf *b, const char *s, size_t n);
errcode_t sb_printf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
errcode_t sb_vprintf(struct strbuf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
void sb_truncate(struct strbuf *b, size_t len);
void sb_free(struct strbuf *b);

/*
 * Print a path so that any byte string survives one line of text: bytes
 * below 0x21, above 0x7e and '%' become %XX.  Used by -v, --trace and
 * orlov-layout, so their outputs can be compared as text.
 */
void fput_escaped(FILE *f, const char *s, size_t n);
/* The same, appended to a string buffer (for messages). */
errcode_t sb_escaped(struct strbuf *b, const char *s, size_t n);

/* @s as a JSON string: well-formed UTF-8 as it is; '%', control bytes
 * and every byte that is not part of well-formed UTF-8 as %XX (so the
 * string read back, %XX decoded, is @s byte for byte). */
void fput_json(FILE *f, const char *s);

/* Join @dir and @name with one '/', as image paths are shown ("/a/b"). */
errcode_t path_join(const char *dir, const char *name, size_t name_len,
		    char **out);

/* Little-endian fields of on-disk structures. */
static inline uint32_t get_le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t get_le32(const unsigned char *p)
{
	return get_le16(p) | get_le16(p + 2) << 16;
}

static inline void put_le16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
	put_le16(p, v & 0xffff);
	put_le16(p + 2, v >> 16);
}

/* Make room for @need elements of @size bytes in *@arr (capacity *@cap),
 * doubling from @first. */
errcode_t grow_array(void *arr, size_t *cap, size_t need, size_t size,
		     size_t first);

/* All @len bytes of @buf to @fd at @off. */
errcode_t pwrite_all(int fd, const void *buf, size_t len, off_t off);
/* All @len bytes at @off, or an error: @at_end when the file ends
 * before them. */
errcode_t pread_all(int fd, void *buf, size_t len, uint64_t off,
		    errcode_t at_end);

/* Parse an unsigned decimal number (digits only: a leading 0 is no
 * octal, 0x no hex) of at most @max; ORLOV_ERR_USAGE when malformed. */
errcode_t parse_u64(const char *s, uint64_t max, uint64_t *out);

/* ORLOV_ERR_OUTPUT_IS_INPUT when writing @out would overwrite @image
 * (the same file, through any link) or write inside the tree @source; an
 * @out that does not exist yet is judged by its directory. */
errcode_t output_clobbers(const char *out, const char *image,
			  const char *source);

#endif
