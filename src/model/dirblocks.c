// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/dirblocks.h"
#include "model/fsstate.h"

#define DIRB_REF 1	/* taken since the hand last passed */
#define DIRB_DIRTY 2	/* changed since the scratch file had it */
#define DIRB_INDEX 4

void dirb_release(const struct fs_state *fs, struct dirblocks *b)
{
	const struct dir_spill *sp = fs->dspill;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		free(b->blk[i]);
		if (sp && b->slot[i] != DIRB_NOSLOT)
			sp->drop(sp->ctx, b->slot[i]);
	}
	free(b->blk);
	free(b->slot);
	free(b->flags);
	memset(b, 0, sizeof(*b));
}

errcode_t dirb_reserve(struct dirblocks *b, uint32_t cap)
{
	void *p;

	if (cap <= b->cap)
		return 0;
	p = realloc(b->blk, cap * sizeof(*b->blk));
	if (!p)
		return ENOMEM;
	b->blk = p;
	p = realloc(b->slot, cap * sizeof(*b->slot));
	if (!p)
		return ENOMEM;
	b->slot = p;
	p = realloc(b->flags, cap * sizeof(*b->flags));
	if (!p)
		return ENOMEM;
	b->flags = p;
	b->cap = cap;
	return 0;
}

static int pinned(const struct dirblocks *b, uint32_t n)
{
	unsigned int i;

	for (i = 0; i < DIRB_PINNED && i < b->npin; i++)
		if (b->pin[i] == n)
			return 1;
	return 0;
}

static void take(struct dirblocks *b, uint32_t n)
{
	b->flags[n] |= DIRB_REF | DIRB_DIRTY;
	if (!pinned(b, n))
		b->pin[b->npin++ % DIRB_PINNED] = n;
}

/*
 * The clock: the first block past the hand in memory, neither an index
 * block nor pinned, not taken since the hand last passed it.  Two turns
 * find one if any can go; none can when the budget is smaller than the
 * blocks that must stay, and then the directory takes more.
 */
static uint32_t victim(struct dirblocks *b)
{
	uint64_t step;

	for (step = 0; step < 2 * (uint64_t)b->n; step++) {
		uint32_t n = b->hand;

		b->hand = b->hand + 1 < b->n ? b->hand + 1 : 0;
		if (!b->blk[n] || (b->flags[n] & DIRB_INDEX) || pinned(b, n))
			continue;
		if (b->flags[n] & DIRB_REF) {
			b->flags[n] &= ~DIRB_REF;
			continue;
		}
		return n;
	}
	return DIRB_NOSLOT;
}

/* A buffer for one more block in memory: a new one within the budget,
 * else the victim's, written out first if the file lacks its bytes. */
static errcode_t buffer(const struct fs_state *fs, struct dirblocks *b,
			unsigned char **p)
{
	const struct dir_spill *sp = fs->dspill;
	uint32_t v;
	errcode_t err;

	if (sp && b->nres >= (b->htree ? sp->budget_htree : sp->budget) &&
	    (v = victim(b)) != DIRB_NOSLOT) {
		if ((b->flags[v] & DIRB_DIRTY) || b->slot[v] == DIRB_NOSLOT) {
			err = sp->put(sp->ctx, &b->slot[v], b->blk[v]);
			if (err)
				return err;
		}
		*p = b->blk[v];
		b->blk[v] = NULL;
		b->flags[v] = 0;
		b->nres--;
		return 0;
	}
	*p = malloc(fs->g.block_size);
	return *p ? 0 : ENOMEM;
}

errcode_t dirb_new(const struct fs_state *fs, struct dirblocks *b,
		   unsigned char **p)
{
	uint32_t n = b->n;
	errcode_t err;

	if (n >= b->cap)
		return EINVAL;	/* dirb_reserve first */
	err = buffer(fs, b, p);
	if (err)
		return err;
	b->blk[n] = *p;
	b->slot[n] = DIRB_NOSLOT;
	b->flags[n] = 0;
	b->n++;
	b->nres++;
	take(b, n);
	return 0;
}

errcode_t dirb_get(const struct fs_state *fs, struct dirblocks *b, uint32_t n,
		   unsigned char **p)
{
	const struct dir_spill *sp = fs->dspill;
	unsigned char *buf = NULL;
	errcode_t err;

	if (n >= b->n)
		return EINVAL;
	if (!b->blk[n]) {
		/* spilled: only with a scratch file (sp), in slot[n] */
		err = buffer(fs, b, &buf);
		if (!err)
			err = sp->get(sp->ctx, b->slot[n], buf);
		if (err) {
			free(buf);
			return err;
		}
		b->blk[n] = buf;
		b->nres++;
	}
	take(b, n);
	*p = b->blk[n];
	return 0;
}

errcode_t dirb_copy(const struct fs_state *fs, const struct dirblocks *b,
		    uint32_t n, void *buf)
{
	const struct dir_spill *sp = fs->dspill;

	if (n >= b->n)
		return EINVAL;
	if (b->blk[n]) {
		memcpy(buf, b->blk[n], fs->g.block_size);
		return 0;
	}
	return sp->get(sp->ctx, b->slot[n], buf);
}

void dirb_set_index(struct dirblocks *b, uint32_t n)
{
	if (n < b->n && b->blk[n]) {
		b->flags[n] |= DIRB_INDEX;
		b->htree = 1;
	}
}

unsigned char *dirb_index(const struct dirblocks *b, uint32_t n)
{
	return n < b->n && (b->flags[n] & DIRB_INDEX) ? b->blk[n] : NULL;
}
