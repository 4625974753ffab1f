// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext2_new_blocks() and its reservation windows as fs/ext2/balloc.c
 * (Linux 6.1) does them.  Group-relative block numbers are int, as the
 * kernel's ext2_grpblk_t, so that -1 means "no goal" in the same places.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/ext2/balloc.h"
#include "lib/orlov_err.h"

/* The ext2 driver's images have fewer than 2^32 blocks (the 64bit
 * feature is the ext4 driver's): its block numbers are 32-bit. */
static inline uint32_t ext2_group_first(const struct fs_state *fs,
					uint32_t group)
{
	return (uint32_t)group_first_block(fs, group);
}

static inline uint32_t ext2_group_last(const struct fs_state *fs,
				       uint32_t group)
{
	return (uint32_t)group_last_block(fs, group);
}

static int rsv_is_empty(const struct rsv_window *w)
{
	return w->end == 0;
}

/* Index of @w in the ordered set, or -1. */
static int rsv_index(const struct rsv_tree *t, const struct rsv_window *w)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->win[i] == w)
			return (int)i;
	return -1;
}

static struct rsv_window *rsv_next(const struct rsv_tree *t,
				   const struct rsv_window *w)
{
	int i = rsv_index(t, w);

	if (i < 0 || (unsigned int)i + 1 >= t->n)
		return NULL;
	return t->win[i + 1];
}

static errcode_t ext2_rsv_window_add(struct rsv_tree *t,
				     struct rsv_window *w)
{
	unsigned int i;

	if (t->n == t->cap) {
		struct rsv_window **nw;

		nw = realloc(t->win, 2 * t->cap * sizeof(*nw));
		if (!nw)
			return ENOMEM;
		t->win = nw;
		t->cap *= 2;
	}
	for (i = 0; i < t->n && t->win[i]->start < w->start; i++)
		;
	memmove(t->win + i + 1, t->win + i, (t->n - i) * sizeof(*t->win));
	t->win[i] = w;
	t->n++;
	return 0;
}

static void rsv_window_remove(struct rsv_tree *t, struct rsv_window *w)
{
	int i = rsv_index(t, w);

	w->start = w->end = 0;
	w->alloc_hit = 0;
	if (i < 0)
		return;
	memmove(t->win + i, t->win + i + 1,
		(t->n - (unsigned int)i - 1) * sizeof(*t->win));
	t->n--;
}

/* The window holding @goal, else the last one starting before it. */
static struct rsv_window *search_reserve_window(const struct rsv_tree *t,
						uint32_t goal)
{
	struct rsv_window *found = NULL;
	unsigned int i;

	for (i = 0; i < t->n && t->win[i]->start <= goal; i++)
		found = t->win[i];
	return found;
}

void ext2_init_block_alloc_info(struct blk_alloc_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->rsv.goal_size = EXT2_DEFAULT_RESERVE_BLOCKS;
}

void ext2_discard_reservation(struct fs_state *fs, struct blk_alloc_info *bi)
{
	if (bi && !rsv_is_empty(&bi->rsv))
		rsv_window_remove(&fs->rsv, &bi->rsv);
}

static int goal_in_my_reservation(const struct fs_state *fs,
				  const struct rsv_window *rsv, int grp_goal,
				  uint32_t group)
{
	uint32_t first = ext2_group_first(fs, group);
	uint32_t last = ext2_group_last(fs, group);

	if (rsv->start > last || rsv->end < first)
		return 0;
	if (grp_goal >= 0 && ((uint32_t)grp_goal + first < rsv->start ||
			      (uint32_t)grp_goal + first > rsv->end))
		return 0;
	return 1;
}

static int bitmap_search_next_usable_block(int start, const uint8_t *map,
					   int maxblocks)
{
	uint32_t next = find_next_zero_bit(map, (uint32_t)maxblocks,
					   (uint32_t)start);

	return next >= (uint32_t)maxblocks ? -1 : (int)next;
}

/* Near the goal first (to the next 64-bit boundary), then a wholly free
 * byte, then any free bit. */
static int find_next_usable_block(int start, const uint8_t *map, int maxblocks)
{
	int here, next, nbytes, i;

	if (start > 0) {
		int end_goal = (start + 63) & ~63;

		if (end_goal > maxblocks)
			end_goal = maxblocks;
		here = (int)find_next_zero_bit(map, (uint32_t)end_goal,
					       (uint32_t)start);
		if (here < end_goal)
			return here;
	}

	here = start < 0 ? 0 : start;
	nbytes = ((maxblocks + 7) >> 3) - (here >> 3);
	for (i = 0; i < nbytes && map[(here >> 3) + i]; i++)
		;
	next = ((here >> 3) + i) << 3;
	if (next < maxblocks && next >= here)
		return next;
	return bitmap_search_next_usable_block(here, map, maxblocks);
}

static int ext2_try_to_allocate(struct fs_state *fs, uint32_t group,
				int grp_goal, unsigned long *count,
				const struct rsv_window *my_rsv)
{
	uint32_t first = ext2_group_first(fs, group);
	uint32_t last = ext2_group_last(fs, group);
	uint8_t *map = group_bbitmap(fs, group);
	int start = 0, end = (int)(last - first + 1);
	unsigned long num = 0;

	if (my_rsv) {
		if (my_rsv->start >= first)
			start = (int)(my_rsv->start - first);
		if (my_rsv->end < last)
			end = (int)(my_rsv->end - first + 1);
		if (grp_goal < start || grp_goal >= end)
			grp_goal = -1;
	}

	if (grp_goal < 0) {
		grp_goal = find_next_usable_block(start, map, end);
		if (grp_goal < 0)
			return -1;
		if (!my_rsv) {
			int i;

			/* Back up over up to 7 free blocks before the find. */
			for (i = 0; i < 7 && grp_goal > start &&
			     !bit_test(map, (uint32_t)grp_goal - 1);
			     i++, grp_goal--)
				;
		}
	}

	for (; num < *count && grp_goal < end; grp_goal++) {
		if (bit_set(map, (uint32_t)grp_goal)) {
			if (num == 0)
				continue;
			break;
		}
		num++;
	}
	if (num == 0)
		return -1;
	*count = num;
	return grp_goal - (int)num;
}

static int find_next_reservable_window(struct fs_state *fs,
				       struct rsv_window *search_head,
				       struct rsv_window *my_rsv,
				       uint32_t start_block,
				       uint32_t last_block)
{
	struct rsv_window *rsv = search_head, *prev, *next;
	uint32_t cur = start_block;
	uint32_t size = my_rsv->goal_size;

	if (!rsv)
		return -1;
	for (;;) {
		if (cur <= rsv->end)
			cur = rsv->end + 1;
		if (cur > last_block)
			return -1;
		prev = rsv;
		next = rsv_next(&fs->rsv, rsv);
		rsv = next;
		if (!next)
			break;
		if (cur + size <= rsv->start)
			break;
	}
	if (prev != my_rsv && !rsv_is_empty(my_rsv))
		rsv_window_remove(&fs->rsv, my_rsv);
	my_rsv->start = cur;
	my_rsv->end = cur + size - 1;
	my_rsv->alloc_hit = 0;
	if (prev != my_rsv && ext2_rsv_window_add(&fs->rsv, my_rsv))
		return -2;
	return 0;
}

static int alloc_new_reservation(struct fs_state *fs, struct rsv_window *my_rsv,
				 int grp_goal, uint32_t group)
{
	uint32_t first = ext2_group_first(fs, group);
	uint32_t gend = ext2_group_last(fs, group);
	const uint8_t *map = group_bbitmap(fs, group);
	struct rsv_window *search_head;
	uint32_t start_block;
	int first_free, ret;

	start_block = grp_goal < 0 ? first : (uint32_t)grp_goal + first;

	if (!rsv_is_empty(my_rsv)) {
		/* A window crossing into the next group still has a part
		 * there: keep it rather than look again in this group. */
		if (my_rsv->start <= gend && my_rsv->end > gend &&
		    start_block >= my_rsv->start)
			return -1;
		/* More than half used: double the next window. */
		if (my_rsv->alloc_hit > (my_rsv->end - my_rsv->start + 1) / 2) {
			uint32_t size = my_rsv->goal_size * 2;

			if (size > EXT2_MAX_RESERVE_BLOCKS)
				size = EXT2_MAX_RESERVE_BLOCKS;
			my_rsv->goal_size = size;
		}
	}

	search_head = search_reserve_window(&fs->rsv, start_block);
	for (;;) {
		ret = find_next_reservable_window(fs, search_head, my_rsv,
						  start_block, gend);
		if (ret == -2)
			return -2;
		if (ret == -1) {
			if (!rsv_is_empty(my_rsv))
				rsv_window_remove(&fs->rsv, my_rsv);
			return -1;
		}
		first_free = bitmap_search_next_usable_block(
			(int)(my_rsv->start - first), map,
			(int)(gend - first + 1));
		if (first_free < 0) {
			if (!rsv_is_empty(my_rsv))
				rsv_window_remove(&fs->rsv, my_rsv);
			return -1;
		}
		start_block = (uint32_t)first_free + first;
		if (start_block >= my_rsv->start && start_block <= my_rsv->end)
			return 0;
		/* The window holds no free block: look again from the free
		 * block, continuing from our own place in the set. */
		search_head = my_rsv;
	}
}

static void try_to_extend_reservation(struct fs_state *fs,
				      struct rsv_window *my_rsv, uint32_t size)
{
	struct rsv_window *next = rsv_next(&fs->rsv, my_rsv);

	if (!next)
		my_rsv->end += size;
	else if (next->start - my_rsv->end - 1 >= size)
		my_rsv->end += size;
	else
		my_rsv->end = next->start - 1;
}

static int ext2_try_to_allocate_with_rsv(struct fs_state *fs, uint32_t group,
					 int grp_goal,
					 struct rsv_window *my_rsv,
					 unsigned long *count)
{
	uint32_t first, last;
	unsigned long num = *count;
	int ret = 0;

	if (!my_rsv)
		return ext2_try_to_allocate(fs, group, grp_goal, count, NULL);

	first = ext2_group_first(fs, group);
	last = ext2_group_last(fs, group);
	for (;;) {
		if (rsv_is_empty(my_rsv) || ret < 0 ||
		    !goal_in_my_reservation(fs, my_rsv, grp_goal, group)) {
			if (my_rsv->goal_size < *count)
				my_rsv->goal_size = (uint32_t)*count;
			ret = alloc_new_reservation(fs, my_rsv, grp_goal, group);
			if (ret < 0)
				break;
			if (!goal_in_my_reservation(fs, my_rsv, grp_goal, group))
				grp_goal = -1;
		} else if (grp_goal >= 0) {
			long curr = (long)my_rsv->end -
				    (long)((uint32_t)grp_goal + first) + 1;

			if ((unsigned long)curr < *count)
				try_to_extend_reservation(fs, my_rsv,
					(uint32_t)(*count - (unsigned long)curr));
		}
		if (my_rsv->start > last || my_rsv->end < first)
			return -2;	/* the kernel BUG()s here */
		ret = ext2_try_to_allocate(fs, group, grp_goal, &num, my_rsv);
		if (ret >= 0) {
			my_rsv->alloc_hit += (uint32_t)num;
			*count = num;
			break;
		}
		num = *count;
	}
	return ret;
}

static void trace_block(const struct fs_state *fs, uint32_t ino,
			uint32_t goal, unsigned long asked,
			const struct rsv_window *rsv, uint32_t block,
			unsigned long got)
{
	if (!fs->trace)
		return;
	fprintf(fs->trace,
		"ext2_block_alloc: ino=%u goal=%u count=%lu rsv_start=%u rsv_end=%u block=%u got=%lu\n",
		ino, goal, asked, rsv ? rsv->start : 0, rsv ? rsv->end : 0,
		block, got);
}

errcode_t ext2_new_blocks(struct fs_state *fs, uint32_t ino,
			  struct blk_alloc_info *bi, uint32_t goal,
			  unsigned long *count, uint32_t *first)
{
	const struct fs_geom *g = &fs->g;
	struct rsv_window *my_rsv = NULL;
	uint32_t windowsz = 0, group_no, goal_group, bgi, free_blocks;
	uint32_t orig_goal = goal;
	unsigned long num = *count;
	int blk = -1;

	if (bi) {
		windowsz = bi->rsv.goal_size;
		if (windowsz > 0)
			my_rsv = &bi->rsv;
	}
	/* ext2_has_free_blocks lets root through whatever the counter says;
	 * with no free block at all the search below would fail too. */
	if (percpu_counter_sum(&fs->freeb) == 0)
		return ORLOV_ERR_NO_BLOCKS;

	if (goal < g->first_data_block || goal >= g->blocks_count)
		goal = g->first_data_block;
	group_no = (goal - g->first_data_block) / g->blocks_per_group;
	goal_group = group_no;

retry_alloc:
	free_blocks = fs->free_blocks[group_no];
	/* Too little room for a window here: allocate without one. */
	if (my_rsv && free_blocks < windowsz && free_blocks > 0 &&
	    rsv_is_empty(my_rsv))
		my_rsv = NULL;
	if (free_blocks > 0) {
		int grp_target = (int)((goal - g->first_data_block) %
				       g->blocks_per_group);

		blk = ext2_try_to_allocate_with_rsv(fs, group_no, grp_target,
						    my_rsv, &num);
		if (blk == -2)
			return ORLOV_ERR_CORRUPT;
		if (blk >= 0)
			goto allocated;
	}

	for (bgi = 0; bgi < g->ngroups; bgi++) {
		if (++group_no >= g->ngroups)
			group_no = 0;
		free_blocks = fs->free_blocks[group_no];
		if (!free_blocks)
			continue;
		if (my_rsv && free_blocks <= windowsz / 2)
			continue;
		blk = ext2_try_to_allocate_with_rsv(fs, group_no, -1, my_rsv,
						    &num);
		if (blk == -2)
			return ORLOV_ERR_CORRUPT;
		if (blk >= 0)
			goto allocated;
	}
	/* Every group refused a window: try once more without one. */
	if (my_rsv) {
		my_rsv = NULL;
		windowsz = 0;
		group_no = goal_group;
		goto retry_alloc;
	}
	return ORLOV_ERR_NO_BLOCKS;

allocated:
	*first = (uint32_t)blk + ext2_group_first(fs, group_no);
	if (*first + num - 1 >= g->blocks_count)
		return ORLOV_ERR_CORRUPT;
	fs->free_blocks[group_no] -= (uint32_t)num;
	percpu_counter_add(&fs->freeb, -(int64_t)num);
	trace_block(fs, ino, orig_goal, *count, my_rsv, *first, num);
	*count = num;
	return 0;
}

void ext2_free_blocks(struct fs_state *fs, uint32_t ino, uint32_t block,
		      unsigned long count)
{
	const struct fs_geom *g = &fs->g;
	unsigned long i;
	int64_t freed = 0;

	if (fs->trace)
		fprintf(fs->trace, "ext2_block_free: ino=%u block=%u count=%lu\n",
			ino, block, count);

	for (i = 0; i < count; i++) {
		uint32_t rel = block + (uint32_t)i - g->first_data_block;
		uint32_t group = rel / g->blocks_per_group;
		uint8_t *map = group_bbitmap(fs, group);

		/* ext2_free_blocks: a bit already clear is only reported */
		if (!bit_test(map, rel % g->blocks_per_group))
			continue;
		bit_clear(map, rel % g->blocks_per_group);
		fs->free_blocks[group]++;
		freed++;
	}
	/* One counter update for the whole call, as release_blocks does. */
	if (freed)
		percpu_counter_add(&fs->freeb, freed);
}
