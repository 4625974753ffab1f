/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scratch file behind the model's directory blocks (model/dirblocks.h):
 * one for the run, in block-size slots, a slot freed with its directory
 * taken again by the next.
 */
#ifndef ORLOV_POPULATE_DIRSPILL_H
#define ORLOV_POPULATE_DIRSPILL_H

#include <stddef.h>
#include <stdint.h>

#include "model/dirblocks.h"

struct pop_ctx;

/* What one directory keeps in memory unless the test build's
 * ORLOV_DIR_BUDGET says less: 2 MiB of a linear directory's blocks, 8 of
 * an htree's (a million names of 8 bytes are 16 MiB of blocks in a
 * linear directory, 21 in an htree; with these budgets an htree's leaf
 * is read back for two inserts in five at the end, and peak memory at a
 * million names is 23 MiB for ext2, 29 for ext4, not 33 and 40). */
#define DIR_BLOCKS_BUDGET (2u << 20)
#define DIR_HTREE_BUDGET (8u << 20)

struct pop_dirspill {
	struct dir_spill ops;
	struct pop_ctx *c;
	uint32_t bs;
	int fd, open;		/* open from the first block that leaves */
	uint32_t next;		/* slots used so far */
	uint32_t *freed;	/* slots to take again */
	size_t nfreed, cap;
};

/* @ds ready for @c's directories of @bs-byte blocks, @budget bytes each
 * (0: the defaults above); the model's fs_state points at ds->ops. */
void dirspill_init(struct pop_dirspill *ds, struct pop_ctx *c, uint32_t bs,
		   size_t budget);
void dirspill_free(struct pop_dirspill *ds);

#endif
