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
#include "lib/clock.h"
#include "lib/keymap.h"
#include "lib/util.h"

#define CAPTURE_BUDGET (8u << 20)

struct centry {
	unsigned long long blk;
	size_t slot;		/* its slot + 1, or 0: on the spill file */
};

struct io_capture {
	size_t bs;
	struct centry *e;
	size_t n, cap;
	struct keymap at;	/* block number to entry */
	struct slot_clock clk;	/* entry i's block at i on the spill file */
};

errcode_t capture_new(size_t bs, size_t budget, struct io_capture **out)
{
	struct io_capture *c = calloc(1, sizeof(*c));

	if (!c)
		return ENOMEM;
	c->bs = bs;
	if (clock_init(&c->clk, bs, budget ? budget : CAPTURE_BUDGET)) {
		free(c);
		return ENOMEM;
	}
	*out = c;
	return 0;
}

void capture_free(struct io_capture *c)
{
	if (!c)
		return;
	clock_free(&c->clk);
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

/* A slot for entry @i; the entry it held, if still there, is on the
 * spill file from now on. */
static errcode_t take_slot(struct io_capture *c, size_t i, size_t *s)
{
	uint64_t old;
	int written;
	errcode_t err = clock_take(&c->clk, i, s, &old, &written);

	if (!err && old != CLOCK_NONE && c->e[old].slot == *s + 1)
		c->e[old].slot = 0;
	return err;
}

/* Entry @i in a slot (*@s), read back from the spill file if it is there. */
static errcode_t slot_of(struct io_capture *c, size_t i, size_t *s)
{
	errcode_t err;

	if (!c->e[i].slot) {
		err = take_slot(c, i, s);
		if (!err)
			err = clock_read(&c->clk, *s);
		if (err)
			return err;
		c->e[i].slot = *s + 1;
	}
	*s = c->e[i].slot - 1;
	c->clk.slot[*s].ref = 1;
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
		err = take_slot(c, c->n, &s);
		if (!err)
			err = io_channel_read_blk64(real, blk, 1,
						    c->clk.slot[s].data);
		if (!err)
			err = keymap_add(&c->at, blk, c->n);
		if (err)
			return err;
		i = c->n++;
		c->e[i].blk = blk;
		c->e[i].slot = s + 1;
	}
	err = slot_of(c, i, &s);
	if (err)
		return err;
	c->clk.slot[s].dirty = 1;
	*data = c->clk.slot[s].data;
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
			       c->clk.slot[c->e[i + k].slot - 1].data, c->bs);
			k++;
			continue;
		}
		/* the blocks on the file only, in one read */
		for (run = 1; k + run < cnt && !c->e[i + k + run].slot; run++)
			;
		err = clock_read_file(&c->clk, i + k, run, buf + k * c->bs);
		if (err)
			return err;
		k += run;
	}
	return 0;
}
