// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names of a directory the image has, as sorted hashes (dirnames.h).
 */
#include "config.h"

#include <stdlib.h>
#include <errno.h>

#include "populate/dirnames.h"
#include "model/dirent.h"
#include "lib/hash.h"

static uint64_t name_hash(const void *name, size_t len)
{
	return fnv1a64(FNV1A64_INIT, name, len);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every live entry of every block, as dir_lookup walks them (an htree's
 * index blocks hold none: their one record has inode 0). */
errcode_t dir_names_load(struct dir_names *dn, const struct dirbuf *d,
			 uint32_t bs)
{
	size_t cap = 0;
	uint32_t b, off;

	dn->h = NULL;
	dn->n = 0;
	for (b = 0; b < d->nblocks; b++) {
		const unsigned char *blk = d->data + (size_t)b * bs;

		for (off = 0; off + DE_HEAD <= bs;) {
			const unsigned char *de = blk + off;
			uint32_t rl = rec_len(de, bs);

			if (rl < DE_HEAD)
				break;
			if (de_inode(de)) {
				if (grow_array(&dn->h, &cap, dn->n + 1,
					       sizeof(*dn->h), 64)) {
					dir_names_free(dn);
					return ENOMEM;
				}
				dn->h[dn->n++] = name_hash(de + DE_OFF(name),
							   de_name_len(de));
			}
			off += rl;
		}
	}
	if (dn->n)
		qsort(dn->h, dn->n, sizeof(*dn->h), u64_cmp);
	return 0;
}

void dir_names_free(struct dir_names *dn)
{
	free(dn->h);
	dn->h = NULL;
	dn->n = 0;
}

int dir_names_lookup(const struct dir_names *dn, const struct dirbuf *d,
		     uint32_t bs, const char *name, size_t len, uint32_t *ino)
{
	uint64_t h = name_hash(name, len);

	if (!dn->n || !bsearch(&h, dn->h, dn->n, sizeof(h), u64_cmp))
		return 0;
	/* a hash it had: the name itself, or another with its hash */
	return dir_lookup(d, bs, name, len, ino);
}
