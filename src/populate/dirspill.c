// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "populate/dirspill.h"
#include "populate/ctx.h"
#include "populate/report.h"
#include "lib/spill.h"
#include "lib/util.h"

static errcode_t put(void *ctx, uint32_t *slot, const void *blk)
{
	struct pop_dirspill *ds = ctx;
	errcode_t err = 0;

	if (!ds->open) {
		err = spill_open(&ds->fd, "dir");
		if (err)
			return pop_fail_scratch(ds->c, err, "creating");
		ds->open = 1;
	}
	if (*slot == DIRB_NOSLOT)
		*slot = ds->nfreed ? ds->freed[--ds->nfreed] : ds->next++;
	err = spill_write(ds->fd, blk, ds->bs, (uint64_t)*slot * ds->bs);
	return err ? pop_fail_scratch(ds->c, err, "writing") : 0;
}

static errcode_t get(void *ctx, uint32_t slot, void *blk)
{
	struct pop_dirspill *ds = ctx;
	errcode_t err = spill_read(ds->fd, blk, ds->bs, (uint64_t)slot * ds->bs);

	return err ? pop_fail_scratch(ds->c, err, "reading") : 0;
}

/* Without memory for the list, the slot is only lost: the file grows. */
static void drop(void *ctx, uint32_t slot)
{
	struct pop_dirspill *ds = ctx;

	if (!grow_array(&ds->freed, &ds->cap, ds->nfreed + 1,
			sizeof(*ds->freed), 64))
		ds->freed[ds->nfreed++] = slot;
}

void dirspill_init(struct pop_dirspill *ds, struct pop_ctx *c, uint32_t bs,
		   size_t budget)
{
	size_t blocks = (budget ? budget : DIR_BLOCKS_BUDGET) / bs;
	size_t htree = (budget ? budget : DIR_HTREE_BUDGET) / bs;

	/* a block or two pinned, the index: at least 8 */
	ds->ops.budget = (uint32_t)(blocks < 8 ? 8 : blocks);
	ds->ops.budget_htree = (uint32_t)(htree < 8 ? 8 : htree);
	ds->ops.put = put;
	ds->ops.get = get;
	ds->ops.drop = drop;
	ds->ops.ctx = ds;
	ds->c = c;
	ds->bs = bs;
	ds->open = 0;
	ds->next = 0;
	ds->freed = NULL;
	ds->nfreed = ds->cap = 0;
}

void dirspill_free(struct pop_dirspill *ds)
{
	if (ds->open)
		close(ds->fd);
	ds->open = 0;
	free(ds->freed);
	ds->freed = NULL;
	ds->nfreed = ds->cap = 0;
}
