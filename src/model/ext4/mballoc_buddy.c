// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The buddy of the ext4 allocator (fs/ext4/mballoc.c: ext4_mb_generate_buddy,
 * mb_find_extent, mb_mark_used, mb_free_blocks and the optimize_scan
 * lists), recomputed from the in-memory bitmap after every change
 * (mballoc.h says why).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/ext4/mballoc_int.h"

/* The buddy's chunks of the free run [@i, @e), counted by order. */
static void ext4_mb_mark_free_simple(const struct mb_state *mb,
				     struct mb_group *gr,
				     uint32_t i, uint32_t e)
{
	while (i < e) {
		unsigned int o = chunk_order(mb, i, e);

		gr->counters[o]++;
		i += 1u << o;
	}
}

/* @all_free: the group is one free run, known without reading its
 * bitmap (an empty group of a large image stays a page of zeros). */
static void ext4_mb_generate_buddy(const struct fs_state *fs, uint32_t group,
				   int all_free)
{
	struct mb_state *mb = fs->mb;
	struct mb_group *gr = &mb->grp[group];
	const uint8_t *map = gmap(fs, group);
	uint32_t i = 0, e;

	gr->free = gr->fragments = 0;
	memset(gr->counters, 0, sizeof(gr->counters));
	if (all_free) {
		gr->fragments = 1;
		gr->free = mb->cpg;
		ext4_mb_mark_free_simple(mb, gr, 0, mb->cpg);
		return;
	}
	while ((i = find_next_zero_bit(map, mb->cpg, i)) < mb->cpg) {
		e = find_next_set_bit(map, mb->cpg, i);
		gr->fragments++;
		gr->free += e - i;
		ext4_mb_mark_free_simple(mb, gr, i, e);
		i = e;
	}
}

/* A group's links on the lists of one kind (@avg: average fragment
 * size, else largest free order): a group is on one list of a kind. */
static uint32_t *glink(struct mb_state *mb, uint32_t group, int avg, int next)
{
	struct mb_group *gr = &mb->grp[group];

	if (avg)
		return next ? &gr->avg_next : &gr->avg_prev;
	return next ? &gr->lfo_next : &gr->lfo_prev;
}

static void glist_remove(struct mb_state *mb, struct mb_glist *l, int avg,
			 uint32_t group)
{
	uint32_t prev = *glink(mb, group, avg, 0);
	uint32_t next = *glink(mb, group, avg, 1);

	if (prev == MB_GNONE)
		l->head = next;
	else
		*glink(mb, prev, avg, 1) = next;
	if (next == MB_GNONE)
		l->tail = prev;
	else
		*glink(mb, next, avg, 0) = prev;
}

static void glist_append(struct mb_state *mb, struct mb_glist *l, int avg,
			 uint32_t group)
{
	*glink(mb, group, avg, 0) = l->tail;
	*glink(mb, group, avg, 1) = MB_GNONE;
	if (l->tail == MB_GNONE)
		l->head = group;
	else
		*glink(mb, l->tail, avg, 1) = group;
	l->tail = group;
}

int mb_avg_fragment_size_order(const struct mb_state *mb, uint32_t len)
{
	int order = fls32(len) - 2;

	if (order < 0)
		return 0;
	if (order == (int)mb->max_order + 1)
		order--;
	return order;
}

/* With optimize_scan, a group whose largest free order changed moves
 * to the tail of its new list. */
static void mb_set_largest_free_order(const struct fs_state *fs,
				      uint32_t group)
{
	struct mb_state *mb = fs->mb;
	struct mb_group *gr = &mb->grp[group];
	int k;

	gr->largest_order = -1;
	for (k = (int)mb->max_order; k >= 0; k--)
		if (gr->counters[k]) {
			gr->largest_order = k;
			break;
		}
	if (!mb->optimize_scan)
		return;
	if (gr->largest_order != gr->lfo_list || !gr->free) {
		if (gr->lfo_list >= 0)
			glist_remove(mb, &mb->lfo[gr->lfo_list], 0, group);
		gr->lfo_list = -1;
		if (gr->largest_order >= 0 && gr->free) {
			glist_append(mb, &mb->lfo[gr->largest_order], 0,
				     group);
			gr->lfo_list = gr->largest_order;
		}
	}
}

/* With optimize_scan, a group whose average fragment size changed order
 * moves to the tail of its new list. */
static void mb_update_avg_fragment_size(const struct fs_state *fs,
					uint32_t group)
{
	struct mb_state *mb = fs->mb;
	struct mb_group *gr = &mb->grp[group];
	int new;

	if (!mb->optimize_scan)
		return;
	new = gr->fragments ?
	      mb_avg_fragment_size_order(mb, gr->free / gr->fragments) : -1;
	if (new != gr->avg_order) {
		if (gr->avg_order >= 0)
			glist_remove(mb, &mb->avg[gr->avg_order], 1, group);
		gr->avg_order = new;
		if (new >= 0)
			glist_append(mb, &mb->avg[new], 1, group);
	}
}

/* The end of mb_mark_used and mb_free_blocks (and of the buddy's
 * generation): the counters again, and the group's place on the
 * optimize_scan lists. */
static void group_changed(const struct fs_state *fs, uint32_t group,
			  int all_free)
{
	ext4_mb_generate_buddy(fs, group, all_free);
	mb_set_largest_free_order(fs, group);
	mb_update_avg_fragment_size(fs, group);
}

void mb_group_changed(const struct fs_state *fs, uint32_t group)
{
	group_changed(fs, group, 0);
}

void ext4_mb_init_group(const struct fs_state *fs, uint32_t group, int all_free)
{
	fs->mb->grp[group].lfo_list = fs->mb->grp[group].avg_order = -1;
	group_changed(fs, group, all_free);
}

/* mb_find_extent: from @block, whole chunks until @needed is reached or
 * the free run ends. */
uint32_t mb_find_extent(const struct fs_state *fs, uint32_t group,
			uint32_t block, uint32_t needed, struct free_ex *ex)
{
	const struct mb_state *mb = fs->mb;
	const uint8_t *map = gmap(fs, group);
	uint32_t rs = block, re, c;

	memset(ex, 0, sizeof(*ex));
	if (block >= mb->cpg || bit_test(map, block))
		return 0;
	while (rs > 0 && !bit_test(map, rs - 1))
		rs--;
	re = find_next_set_bit(map, mb->cpg, block);
	/* the chunk holding @block */
	for (c = rs; c + (1u << chunk_order(mb, c, re)) <= block;
	     c += 1u << chunk_order(mb, c, re))
		;
	c += 1u << chunk_order(mb, c, re);
	while (needed > c - block && c < re)
		c += 1u << chunk_order(mb, c, re);
	ex->group = group;
	ex->start = block;
	ex->len = c - block;
	return ex->len;
}

/* mb_mark_used: the buddy only; the on-disk bitmap comes later. */
void mb_mark_used(struct fs_state *fs, const struct free_ex *ex)
{
	set_range(gmap(fs, ex->group), ex->start, ex->len);
	mb_group_changed(fs, ex->group);
}

/* mb_free_blocks: the buddy only, the on-disk bitmap is the caller's. */
void mb_free_blocks(struct fs_state *fs, uint32_t group, uint32_t start,
		    uint32_t len)
{
	uint8_t *map = gmap(fs, group);

	while (len--)
		bit_clear(map, start++);
	mb_group_changed(fs, group);
}

uint32_t mb_mark_used_ret(const struct fs_state *fs, const struct free_ex *ex)
{
	const struct mb_state *mb = fs->mb;
	const uint8_t *map = gmap(fs, ex->group);
	uint32_t s = ex->start, e, c, len = ex->len, start = ex->start;
	unsigned int o;

	/* the free run around the extent, and its buddy chunk at start */
	while (s > 0 && !bit_test(map, s - 1))
		s--;
	e = find_next_set_bit(map, mb->cpg, start);
	for (c = s, o = chunk_order(mb, c, e); c + (1u << o) <= start;
	     o = chunk_order(mb, c, e))
		c += 1u << o;
	while (len && c < e) {
		if (c != start || len < (1u << o))
			return len | (o << 16);
		start += 1u << o;
		len -= 1u << o;
		c = start;
		if (len)
			o = chunk_order(mb, c, e);
	}
	return 0;
}
