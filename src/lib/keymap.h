/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An open-addressing index from 64-bit keys to positions in an array its
 * user keeps (the one hash map of the program): hard links by source
 * inode and attribute sets by hash (populate/), the regions the I/O guard saved and the blocks it
 * captured, by offset and block.  Half full
 * at most; it only grows, and is dropped whole.
 */
#ifndef ORLOV_KEYMAP_H
#define ORLOV_KEYMAP_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

struct keymap {
	uint64_t *key;
	size_t *pos;		/* position + 1; 0 is an empty slot */
	size_t n, nslots;	/* nslots: 0 or a power of two */
};

/* 1 and *pos when @key is in the map, else 0.  @pos may be NULL. */
int keymap_get(const struct keymap *m, uint64_t key, size_t *pos);
/* Map @key, not in the map yet, to @pos. */
errcode_t keymap_add(struct keymap *m, uint64_t key, size_t pos);
/* Empty the map, freeing its memory. */
void keymap_free(struct keymap *m);

#endif
