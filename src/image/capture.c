// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The captured blocks of a commit: a clock over a budget of block slots
 * in memory, as the staged inodes' (stage.c).  The commit writes inodes in
 * inode order, so the blocks it touches come in runs and leave them for
 * good: the clock sends each run to the spill file once, and the few
 * blocks written again and again (superblock, descriptors, bitmaps) keep
 * their slots.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/capture.h"
#include "lib/keymap.h"
#include "lib/spill.h"
#include "lib/util.h"

#define CAPTURE_BUDGET (8u << 20)

struct centry {
	unsigned long long blk;
	size_t slot;		/* its slot + 1, or 0: on the spill file */
};

struct cslot {
	unsigned char *data;
	size_t idx;		/* the entry it holds */
	int ref, dirty;		/* dirty: newer than the file's copy */
};

struct io_capture {
	size_t bs;
	struct centry *e;
	size_t n, cap;
	struct keymap at;	/* block number to entry */
	struct cslot *slot;
	size_t nslot, maxslot, hand;
	int fd;			/* the spill file, or -1 */
};

errcode_t capture_new(size_t bs, size_t budget, struct io_capture **out)
{
	struct io_capture *c = calloc(1, sizeof(*c));

	if (!c)
		return ENOMEM;
	c->bs = bs;
	c->maxslot = (budget ? budget : CAPTURE_BUDGET) / bs;
	if (c->maxslot < 4)
		c->maxslot = 4;
	c->slot = calloc(c->maxslot, sizeof(*c->slot));
	if (!c->slot) {
		free(c);
		return ENOMEM;
	}
	c->fd = -1;
	*out = c;
	return 0;
}

void capture_free(struct io_capture *c)
{
	size_t k;

	if (!c)
		return;
	for (k = 0; k < c->nslot; k++)
		free(c->slot[k].data);
	if (c->fd >= 0)
		close(c->fd);
	free(c->slot);
	free(c->e);
	keymap_free(&c->at);
	free(c);
}

size_t capture_count(const struct io_capture *c)
{
	return c ? c->n : 0;
}

unsigned long long capture_blk(const struct io_capture *c, size_t i)
{
	return c->e[i].blk;
}

int capture_find(const struct io_capture *c, unsigned long long blk,
		 size_t *i)
{
	return c && keymap_get(&c->at, blk, i);
}

/* A slot: a new one within the budget, else the clock's choice, its block
 * written to the spill file if changed since it was last there. */
static errcode_t free_slot(struct io_capture *c, size_t *s)
{
	struct cslot *sl;
	errcode_t err;

	if (c->nslot < c->maxslot) {
		sl = &c->slot[c->nslot];
		sl->data = malloc(c->bs);
		if (!sl->data)
			return ENOMEM;
		*s = c->nslot++;
		return 0;
	}
	for (;; c->hand = (c->hand + 1) % c->nslot) {
		sl = &c->slot[c->hand];
		if (!sl->ref)
			break;
		sl->ref = 0;
	}
	if (sl->dirty) {
		if (c->fd < 0 && (err = spill_open(&c->fd)))
			return err;
		err = spill_write(c->fd, sl->data, c->bs,
				  (uint64_t)sl->idx * c->bs);
		if (err)
			return err;
	}
	if (c->e[sl->idx].slot == c->hand + 1)
		c->e[sl->idx].slot = 0;
	sl->dirty = 0;
	*s = c->hand;
	c->hand = (c->hand + 1) % c->nslot;
	return 0;
}

/* Entry @i in a slot (*@s), read back from the spill file if it is there. */
static errcode_t slot_of(struct io_capture *c, size_t i, size_t *s)
{
	errcode_t err;

	if (!c->e[i].slot) {
		err = free_slot(c, s);
		if (err)
			return err;
		err = spill_read(c->fd, c->slot[*s].data, c->bs,
				 (uint64_t)i * c->bs);
		if (err)
			return err;
		c->slot[*s].idx = i;
		c->slot[*s].dirty = 0;
		c->e[i].slot = *s + 1;
	}
	*s = c->e[i].slot - 1;
	c->slot[*s].ref = 1;
	return 0;
}

errcode_t capture_block(struct io_capture *c, io_channel real,
			unsigned long long blk, unsigned char **data)
{
	size_t i, s;
	errcode_t err;

	if (!keymap_get(&c->at, blk, &i)) {
		if (grow_array(&c->e, &c->cap, c->n + 1, sizeof(*c->e), 256))
			return ENOMEM;
		err = free_slot(c, &s);
		if (!err)
			err = io_channel_read_blk64(real, blk, 1,
						    c->slot[s].data);
		if (!err)
			err = keymap_add(&c->at, blk, c->n);
		if (err)
			return err;
		i = c->n++;
		c->e[i].blk = blk;
		c->e[i].slot = s + 1;
		c->slot[s].idx = i;
	}
	err = slot_of(c, i, &s);
	if (err)
		return err;
	c->slot[s].dirty = 1;
	*data = c->slot[s].data;
	return 0;
}

errcode_t capture_read(struct io_capture *c, size_t i, size_t cnt,
		       unsigned char *buf)
{
	size_t k = 0, run;
	errcode_t err;

	while (k < cnt) {
		if (c->e[i + k].slot) {
			memcpy(buf + k * c->bs,
			       c->slot[c->e[i + k].slot - 1].data, c->bs);
			k++;
			continue;
		}
		/* the blocks on the file only, in one read */
		for (run = 1; k + run < cnt && !c->e[i + k + run].slot; run++)
			;
		err = spill_read(c->fd, buf + k * c->bs, run * c->bs,
				 (uint64_t)(i + k) * c->bs);
		if (err)
			return err;
		k += run;
	}
	return 0;
}
