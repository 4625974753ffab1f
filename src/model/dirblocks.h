/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A directory's blocks: in memory up to a budget, the rest in the
 * engine's scratch file (struct dir_spill: the model itself does no I/O).
 * One directory of a million names is 16 to 28 MiB of blocks, which the
 * kernel keeps in its buffer cache and a run would otherwise keep whole
 * until the directory is done.  The blocks used least recently leave
 * first (a clock); never an htree index block, which every insert walks,
 * nor one of the last DIRB_PINNED taken, which an operation may still
 * hold (do_split holds two leaves, the root stays an index block).
 * Where a block lives never changes a byte of it: images are the same
 * with any budget.
 */
#ifndef ORLOV_DIRBLOCKS_H
#define ORLOV_DIRBLOCKS_H

#include <stdint.h>
#include <et/com_err.h>

struct fs_state;

#define DIRB_NOSLOT UINT32_MAX
#define DIRB_PINNED 4

/* The engine's scratch file for directory blocks, in block-size slots. */
struct dir_spill {
	/* blocks of one directory kept in memory: a linear directory only
	 * fills its last blocks (the full ones are never read again), an
	 * htree's inserts go to any leaf (the more in memory, the fewer
	 * read back) */
	uint32_t budget, budget_htree;
	/* @blk into slot *@slot; DIRB_NOSLOT: a free one, returned there */
	errcode_t (*put)(void *ctx, uint32_t *slot, const void *blk);
	errcode_t (*get)(void *ctx, uint32_t slot, void *blk);
	void (*drop)(void *ctx, uint32_t slot);	/* the slot is free again */
	void *ctx;
};

struct dirblocks {
	unsigned char **blk;	/* per block: its bytes, NULL when spilled */
	uint32_t *slot;		/* per block: its slot, or DIRB_NOSLOT */
	uint8_t *flags;		/* DIRB_REF, DIRB_DIRTY, DIRB_INDEX */
	uint32_t n, cap;	/* blocks, room in the arrays */
	uint32_t nres, hand;	/* blocks in memory; the clock's hand */
	int htree;		/* an index block seen: budget_htree */
	uint32_t pin[DIRB_PINNED];	/* the last taken, a ring */
	unsigned int npin;
};

void dirb_release(const struct fs_state *fs, struct dirblocks *b);
/* Room in the arrays for @cap blocks.  ENOMEM. */
errcode_t dirb_reserve(struct dirblocks *b, uint32_t cap);

/* Block b->n appended (room reserved): *p, its bytes, uninitialized. */
errcode_t dirb_new(const struct fs_state *fs, struct dirblocks *b,
		   unsigned char **p);
/* Block @n to change (read back if spilled): *p until DIRB_PINNED other
 * blocks are taken. */
errcode_t dirb_get(const struct fs_state *fs, struct dirblocks *b, uint32_t n,
		   unsigned char **p);
/* Block @n copied into @buf, wherever it is; nothing moves. */
errcode_t dirb_copy(const struct fs_state *fs, const struct dirblocks *b,
		    uint32_t n, void *buf);

/* Block @n, taken since, is an htree index block: it stays in memory. */
void dirb_set_index(struct dirblocks *b, uint32_t n);
/* An index block's bytes (always in memory); NULL if @n is none. */
unsigned char *dirb_index(const struct dirblocks *b, uint32_t n);

#endif
