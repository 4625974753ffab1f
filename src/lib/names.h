/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the source readers and the image readers both speak of: a host
 * file by its identity, and the one order of names in a directory.  Kept
 * here, below both layers, so the image layer needs no source/ header.
 */
#ifndef ORLOV_NAMES_H
#define ORLOV_NAMES_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

/* A host file, as a walk can recognise it whatever its name. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

/* Names compared bytewise, a prefix first: the order entries are created
 * in and the order every sorted listing (source or image) is kept in, so
 * a merged walk of the two can step through both at once. */
static inline int name_bytes_cmp(const char *a, size_t alen, const char *b,
				 size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

#endif
