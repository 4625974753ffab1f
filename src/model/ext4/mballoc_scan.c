// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext4_mb_regular_allocator() and the group scans it runs, by criteria,
 * over the buddy (mballoc_buddy.c): the part of fs/ext4/mballoc.c that
 * changed most between 6.1 and 6.12 (mballoc.h).
 */
#include "config.h"

#include <string.h>

#include "model/ext4/mballoc_int.h"

#define MB_MAX_TO_SCAN 200
#define MB_MIN_TO_SCAN 10
#define MB_ORDER2_REQS 2

/* The criteria from 6.5 on (CR_BEST_AVAIL_LEN between 6.1's 1 and 2);
 * the group tests of ext4_mb_good_group by 6.1's number. */
enum { CR_POWER2_ALIGNED, CR_GOAL_LEN_FAST, CR_BEST_AVAIL_LEN,
       CR_GOAL_LEN_SLOW, CR_ANY_FREE, MB_NUM_CRS };
static const int good_group_test[MB_NUM_CRS] = { 0, 1, 1, 2, 3 };

static void ext4_mb_use_best_found(struct alloc_ctx *ac, errcode_t *err)
{
	uint32_t ret;

	if (ac->b.len > ac->g.len)
		ac->b.len = ac->g.len;
	ac->b.logical = ac->g.logical;
	ret = mb_mark_used_ret(ac->fs, &ac->b);
	ac->tail = ret & 0xffff;
	ac->buddy = ret >> 16;
	mb_mark_used(ac->fs, &ac->b);
	ac->f = ac->b;
	ac->status = AC_FOUND;
	ac->seq++;
	if (ac->flags & STREAM_ALLOC) {
		ac->mb->last_group = ac->f.group;
		ac->mb->last_start = ac->f.start;
	}
	if (ac->o.len < ac->b.len && !*err)
		*err = ext4_mb_new_preallocation(ac);
}

static void ext4_mb_check_limits(struct alloc_ctx *ac, uint32_t group,
				 int finish_group, errcode_t *err)
{
	struct free_ex ex;

	if (ac->status == AC_FOUND)
		return;
	if (ac->found > MB_MAX_TO_SCAN && !(ac->flags & HINT_FIRST)) {
		ac->status = AC_BREAK;
		return;
	}
	if (ac->b.len < ac->g.len)
		return;
	if ((finish_group || ac->found > MB_MIN_TO_SCAN) &&
	    ac->b.group == group &&
	    mb_find_extent(ac->fs, group, ac->b.start, ac->g.len, &ex) >=
	    ac->g.len)
		ext4_mb_use_best_found(ac, err);
}

static void ext4_mb_measure_extent(struct alloc_ctx *ac,
				   const struct free_ex *ex, errcode_t *err)
{
	struct free_ex *bex = &ac->b;

	ac->found++;
	if ((ac->flags & HINT_FIRST) || ex->len == ac->g.len) {
		*bex = *ex;
		ext4_mb_use_best_found(ac, err);
		return;
	}
	if (bex->len == 0) {
		*bex = *ex;
		return;
	}
	if (bex->len < ac->g.len) {
		if (ex->len > bex->len)
			*bex = *ex;
	} else if (ex->len > ac->g.len) {
		if (ex->len < bex->len)
			*bex = *ex;
	}
	ext4_mb_check_limits(ac, ex->group, 0, err);
}

static void ext4_mb_simple_scan_group(struct alloc_ctx *ac, uint32_t group,
				      errcode_t *err)
{
	const struct mb_state *mb = ac->mb;
	const struct mb_group *gr = grp(ac->fs, group);
	const uint8_t *map = gmap(ac->fs, group);
	unsigned int i;

	for (i = (unsigned int)ac->order2; i <= mb->max_order; i++) {
		uint32_t s = 0, e;

		if (!gr->counters[i])
			continue;
		/* the buddy's first free chunk of exactly this order */
		while ((s = find_next_zero_bit(map, mb->cpg, s)) < mb->cpg) {
			e = find_next_set_bit(map, mb->cpg, s);
			while (s < e && chunk_order(mb, s, e) != i)
				s += 1u << chunk_order(mb, s, e);
			if (s < e)
				break;
		}
		if (s >= mb->cpg)
			return;	/* the counters lie: the kernel calls it corrupt */
		ac->found++;
		ac->b.group = group;
		ac->b.start = s;
		ac->b.len = 1u << i;
		ext4_mb_use_best_found(ac, err);
		return;
	}
}

/* @skip_short: 6.12's CR_GOAL_LEN_FAST and CR_BEST_AVAIL_LEN, sure the
 * group has a free run as long as the goal, step over shorter ones. */
static void ext4_mb_complex_scan_group(struct alloc_ctx *ac, uint32_t group,
				       int skip_short, errcode_t *err)
{
	const struct mb_state *mb = ac->mb;
	const uint8_t *map = gmap(ac->fs, group);
	uint32_t free = grp(ac->fs, group)->free, i = 0, j;
	struct free_ex ex;

	while (free && ac->status == AC_CONTINUE) {
		i = find_next_zero_bit(map, mb->cpg, i);
		if (i >= mb->cpg)
			break;
		j = skip_short ? find_next_set_bit(map, mb->cpg, i) : i;
		if (j - i < ac->g.len && skip_short) {
			free -= j - i < free ? j - i : free;
			i = j;
			continue;
		}
		mb_find_extent(ac->fs, group, i, ac->g.len, &ex);
		if (!ex.len || free < ex.len)
			break;
		ext4_mb_measure_extent(ac, &ex, err);
		i += ex.len;
		free -= ex.len;
	}
	ext4_mb_check_limits(ac, group, 1, err);
}

static int ext4_mb_good_group(const struct alloc_ctx *ac, uint32_t group,
			      int cr)
{
	const struct mb_group *gr = grp(ac->fs, group);
	int flex_size = (int)fs_flex_size(ac->fs);

	if (!gr->free || !gr->fragments)
		return 0;
	switch (cr) {
	case 0:
		if ((ac->flags & HINT_DATA) &&
		    flex_size >= EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME &&
		    group % (uint32_t)flex_size == 0)
			return 0;
		return gr->free >= ac->g.len &&
		       gr->largest_order >= ac->order2;
	case 1:
		return gr->free / gr->fragments >= ac->g.len;
	case 2:
		return gr->free >= ac->g.len;
	default:
		return 1;
	}
}

/* ext4_get_allocation_groups_count: an inode that is not extent-mapped
 * can hold no block past 2^32, so only the groups wholly below it
 * (s_blockfile_groups) are scanned; a goal in a group past them is
 * still tried first, and the scan then starts at group 0. */
static uint32_t ext4_get_allocation_groups_count(const struct alloc_ctx *ac)
{
	const struct fs_geom *g = &ac->fs->g;
	uint32_t below = 0xffffffffu / g->blocks_per_group;

	return ac->ar->indirect && below < g->ngroups ? below : g->ngroups;
}

/* should_optimize_scan: the list criteria (6.1: 0 and 1; from 6.5 up to
 * CR_BEST_AVAIL_LEN) when mb_optimize_scan is on; an image without the
 * indirect-mapped inode (every one of an image without the extent
 * feature) used the lists only from the backport
 * (kver_mb_optimize_indirect). */
static int should_optimize_scan(const struct alloc_ctx *ac, int cr)
{
	int lists = ac->fs->kver >= KVER_MB_65 ? CR_GOAL_LEN_SLOW : 2;

	if (ac->ar->indirect && !kver_mb_optimize_indirect(ac->fs->kver))
		return 0;
	return ac->mb->optimize_scan && cr < lists;
}

/* The first group good at criterion 0 on the largest-free-order lists
 * from the request's order up, each list in joining order; none: on to
 * criterion 1. */
static void ext4_mb_choose_next_group_cr0(struct alloc_ctx *ac, int *new_cr,
					  uint32_t *group)
{
	const struct mb_state *mb = ac->mb;
	unsigned int i;
	uint32_t g;

	for (i = (unsigned int)ac->order2; i <= mb->max_order; i++)
		for (g = mb->lfo[i].head; g != MB_GNONE; g = mb->grp[g].lfo_next)
			if (ext4_mb_good_group(ac, g, 0)) {
				*group = g;
				ac->flags |= CR0_OPTIMIZED;
				return;
			}
	*new_cr = 1;
}

/* ext4_mb_find_good_group_avg_frag_lists: the first group of the
 * average-fragment list @order good at criterion 1 (as good at 6.5's
 * CR_GOAL_LEN_FAST and CR_BEST_AVAIL_LEN). */
static int ext4_mb_find_good_group_avg_frag_lists(const struct alloc_ctx *ac,
						  int order, uint32_t *group)
{
	const struct mb_state *mb = ac->mb;
	uint32_t g;

	for (g = mb->avg[order].head; g != MB_GNONE; g = mb->grp[g].avg_next)
		if (ext4_mb_good_group(ac, g, 1)) {
			*group = g;
			return 1;
		}
	return 0;
}

/* The lowest order CR_BEST_AVAIL_LEN trims the goal to: down by up to
 * s_mb_best_avail_max_trim_order (3) orders but not below the request
 * (fls, not fls - 1, as the kernel has it). */
static int best_avail_min_order(const struct alloc_ctx *ac)
{
	int min_order = fls32(ac->g.len) - 1 - 3;

	if (min_order < 0)
		min_order = 0;
	if ((1u << min_order) < ac->o.len)
		min_order = fls32(ac->o.len);
	return min_order;
}

/* ext4_mb_choose_next_group_best_avail (6.5 to 6.12.76): the goal trimmed
 * order by order from the current one (trimmed again after each group
 * that did not do), each length's list; none: the goal back and on to
 * CR_GOAL_LEN_SLOW. */
static void ext4_mb_choose_next_group_best_avail(struct alloc_ctx *ac,
						 int *new_cr, uint32_t *group)
{
	int i, min_order = best_avail_min_order(ac);

	for (i = fls32(ac->g.len) - 1; i >= min_order; i--) {
		ac->g.len = 1u << i;
		if (ext4_mb_find_good_group_avg_frag_lists(ac,
				mb_avg_fragment_size_order(ac->mb, ac->g.len),
				group))
			return;
	}
	ac->g.len = ac->orig_goal_len;
	*new_cr = CR_GOAL_LEN_SLOW;
}

/* The first good group of the average-fragment lists from the goal's
 * length up; none: 6.1's criterion 2, from 6.5 CR_BEST_AVAIL_LEN for data
 * (only a data request was normalized, can be trimmed), else
 * CR_GOAL_LEN_SLOW (6.5's ext4_mb_choose_next_group_goal_fast). */
static void ext4_mb_choose_next_group_cr1(struct alloc_ctx *ac, int *new_cr,
					  uint32_t *group)
{
	int i;

	for (i = mb_avg_fragment_size_order(ac->mb, ac->g.len);
	     i <= (int)ac->mb->max_order; i++)
		if (ext4_mb_find_good_group_avg_frag_lists(ac, i, group)) {
			ac->flags |= CR1_OPTIMIZED;
			return;
		}
	*new_cr = ac->fs->kver < KVER_MB_65 ? 2 :
		  ac->flags & HINT_DATA ? CR_BEST_AVAIL_LEN : CR_GOAL_LEN_SLOW;
}

/* ext4_mb_choose_next_group (6.1 to 6.12.76): the next group in turn, or
 * with optimize_scan (after max_linear_groups in turn) the first good
 * group of the criterion's lists, or a higher criterion in *new_cr when
 * no list has one. */
static void ext4_mb_choose_next_group(struct alloc_ctx *ac, int cr, int *new_cr,
				      uint32_t *group, unsigned int *linear)
{
	*new_cr = cr;
	if (!should_optimize_scan(ac, cr) || *linear) {
		if (should_optimize_scan(ac, cr))
			(*linear)--;
		*group = *group + 1 >= ext4_get_allocation_groups_count(ac) ?
			 0 : *group + 1;
		return;
	}
	if (cr == 0)
		ext4_mb_choose_next_group_cr0(ac, new_cr, group);
	else if (cr == CR_BEST_AVAIL_LEN && ac->fs->kver >= KVER_MB_65)
		ext4_mb_choose_next_group_best_avail(ac, new_cr, group);
	else
		ext4_mb_choose_next_group_cr1(ac, new_cr, group);
}

/* ext4_mb_find_by_goal: with EXT4_MB_HINT_TRY_GOAL, the goal itself if
 * the whole request is free there (no RAID stripe; EXT4_MB_HINT_MERGE,
 * which would take less, no caller of 6.1 sets). */
static void ext4_mb_find_by_goal(struct alloc_ctx *ac, errcode_t *err)
{
	struct free_ex ex;

	if (!(ac->flags & HINT_TRY_GOAL) || !grp(ac->fs, ac->g.group)->free)
		return;
	if (mb_find_extent(ac->fs, ac->g.group, ac->g.start, ac->g.len, &ex) >=
	    ac->g.len) {
		ac->found++;
		ac->b = ex;
		ext4_mb_use_best_found(ac, err);
	}
}

/* ---- Linux 6.12 (from 6.12.77) ------------------------------------ */

/* ext4_mb_scan_group (the buddies are all loaded, no group is busy) */
static void ext4_mb_scan_group(struct alloc_ctx *ac, uint32_t group,
			       errcode_t *err)
{
	if (!ext4_mb_good_group(ac, group, good_group_test[ac->cr]))
		return;
	ac->groups++;
	if (ac->cr == CR_POWER2_ALIGNED)
		ext4_mb_simple_scan_group(ac, group, err);
	else
		ext4_mb_complex_scan_group(ac, group, ac->cr < CR_GOAL_LEN_SLOW,
					   err);
}

static int mb_done(const struct alloc_ctx *ac, const errcode_t *err)
{
	return *err || ac->status != AC_CONTINUE;
}

/* ext4_mb_scan_groups_linear: @count groups in turn from *start; all of
 * them without a find moves to the next criterion. */
static void ext4_mb_scan_groups_linear(struct alloc_ctx *ac, uint32_t *start,
				       uint32_t count, errcode_t *err)
{
	uint32_t ngroups = ext4_get_allocation_groups_count(ac);
	uint32_t group = *start, i;

	for (i = 0; i < count; i++) {
		ext4_mb_scan_group(ac, group, err);
		if (mb_done(ac, err))
			return;
		group = group + 1 >= ngroups ? 0 : group + 1;
	}
	*start = group;
	if (count == ngroups)
		ac->cr++;
}

/* ext4_mb_scan_groups_xa_range: the groups of one optimize_scan list (by
 * largest free order, or by average fragment size) in [@start, @end):
 * 6.12.77's xarrays are walked by group number, where 6.1's lists were
 * walked in the order groups joined them. */
static void ext4_mb_scan_groups_xa_range(struct alloc_ctx *ac, int by_lfo,
					 int order, uint32_t start,
					 uint32_t end, errcode_t *err)
{
	uint32_t g;

	for (g = start; g < end; g++) {
		const struct mb_group *gr = grp(ac->fs, g);

		if ((by_lfo ? gr->lfo_list : gr->avg_order) != order)
			continue;
		ext4_mb_scan_group(ac, g, err);
		if (mb_done(ac, err))
			return;
	}
}

/* What ext4_mb_scan_groups_p2_aligned and _goal_fast share: every
 * order's list from @first, from the goal's group to the end, then from
 * group 0 to it; 0 when that found nothing. */
static int mb_scan_lists(struct alloc_ctx *ac, int by_lfo, int first,
			 uint32_t start, errcode_t *err)
{
	uint32_t end = ext4_get_allocation_groups_count(ac);
	int i;

wrap:
	for (i = first; i <= (int)ac->mb->max_order; i++) {
		ext4_mb_scan_groups_xa_range(ac, by_lfo, i, start, end, err);
		if (mb_done(ac, err))
			return 1;
	}
	if (start) {
		end = start;
		start = 0;
		goto wrap;
	}
	return 0;
}

/* The largest-free-order lists from the request's order up. */
static void ext4_mb_scan_groups_p2_aligned(struct alloc_ctx *ac,
					   uint32_t start, errcode_t *err)
{
	if (!mb_scan_lists(ac, 1, ac->order2, start, err))
		ac->cr = CR_GOAL_LEN_FAST;
}

/* The average-fragment lists from the goal's length up; none: only a
 * data request was normalized, and can be trimmed. */
static void ext4_mb_scan_groups_goal_fast(struct alloc_ctx *ac,
					  uint32_t start, errcode_t *err)
{
	int first = mb_avg_fragment_size_order(ac->mb, ac->g.len);

	if (!mb_scan_lists(ac, 0, first, start, err))
		ac->cr = ac->flags & HINT_DATA ? CR_BEST_AVAIL_LEN :
						 CR_GOAL_LEN_SLOW;
}

/* ext4_mb_scan_groups_best_avail: the goal trimmed to a power of two
 * (best_avail_min_order), each length's one list in turn. */
static void ext4_mb_scan_groups_best_avail(struct alloc_ctx *ac, uint32_t start,
					   errcode_t *err)
{
	int order = fls32(ac->g.len) - 1, min_order = best_avail_min_order(ac);
	int i;
	uint32_t end = ext4_get_allocation_groups_count(ac);

wrap:
	for (i = order; i >= min_order; i--) {
		ac->g.len = 1u << i;
		ext4_mb_scan_groups_xa_range(ac, 0,
				mb_avg_fragment_size_order(ac->mb, ac->g.len),
				start, end, err);
		if (mb_done(ac, err))
			return;
	}
	if (start) {
		end = start;
		start = 0;
		goto wrap;
	}
	ac->g.len = ac->orig_goal_len;
	ac->cr = CR_GOAL_LEN_SLOW;
}

/* ext4_mb_scan_groups: one criterion; with optimize_scan first up to
 * s_mb_max_linear_groups in turn from the goal's group (6.1 scanned the
 * goal's group and then that many more), then the lists from the next. */
static void ext4_mb_scan_groups(struct alloc_ctx *ac, errcode_t *err)
{
	uint32_t ngroups = ext4_get_allocation_groups_count(ac);
	uint32_t start = ac->g.group < ngroups ? ac->g.group : 0;

	if (!ac->mb->optimize_scan || ac->cr >= CR_GOAL_LEN_SLOW) {
		ext4_mb_scan_groups_linear(ac, &start, ngroups, err);
		return;
	}
	if (ac->mb->max_linear_groups) {
		ext4_mb_scan_groups_linear(ac, &start,
					   ac->mb->max_linear_groups, err);
		if (mb_done(ac, err))
			return;
	}
	if (ac->cr == CR_POWER2_ALIGNED)
		ext4_mb_scan_groups_p2_aligned(ac, start, err);
	else if (ac->cr == CR_BEST_AVAIL_LEN)
		ext4_mb_scan_groups_best_avail(ac, start, err);
	else
		ext4_mb_scan_groups_goal_fast(ac, start, err);
}

/* After the scans: the best extent found short of the goal, if it is
 * still free (ext4_mb_try_best_found); 1 when it is not, the context
 * reset for one more pass at the last criterion with HINT_FIRST. */
static int ext4_mb_try_best_found(struct alloc_ctx *ac, errcode_t *err)
{
	struct free_ex ex;

	if (ac->b.len == 0 || ac->status == AC_FOUND ||
	    (ac->flags & HINT_FIRST))
		return 0;
	if (mb_find_extent(ac->fs, ac->b.group, ac->b.start, ac->b.len,
			   &ex) > 0) {
		ac->b = ex;
		ext4_mb_use_best_found(ac, err);
		return 0;
	}
	memset(&ac->b, 0, sizeof(ac->b));
	ac->status = AC_CONTINUE;
	ac->flags |= HINT_FIRST;
	return 1;
}

static errcode_t mb_scan_criteria_loop2(struct alloc_ctx *ac)
{
	errcode_t err = 0;

	ac->cr = ac->order2 ? CR_POWER2_ALIGNED : CR_GOAL_LEN_FAST;
repeat:
	while (ac->cr < MB_NUM_CRS) {
		ext4_mb_scan_groups(ac, &err);
		if (err)
			return err;
		if (ac->status != AC_CONTINUE)
			break;
	}
	if (ext4_mb_try_best_found(ac, &err)) {
		ac->cr = CR_ANY_FREE;
		goto repeat;
	}
	return err;
}

/* The scans of 6.1 (criteria 0 to 3) and of 6.5 to 6.12.76 (0 to 4):
 * the goal's group, then ext4_mb_choose_next_group's; 6.5's fast criteria
 * step over free runs shorter than the goal, and a whole pass of
 * CR_BEST_AVAIL_LEN gives the goal its length back. */
static errcode_t mb_scan_criteria_loop(struct alloc_ctx *ac)
{
	uint32_t ngroups = ext4_get_allocation_groups_count(ac), group, i;
	int v65 = ac->fs->kver >= KVER_MB_65, ncr = v65 ? MB_NUM_CRS : 4;
	int cr, new_cr;
	unsigned int linear;
	errcode_t err = 0;

	cr = ac->order2 ? 0 : 1;
repeat:
	for (; cr < ncr && ac->status == AC_CONTINUE; cr++) {
		ac->cr = (unsigned int)cr;
		group = ac->g.group < ngroups ? ac->g.group : 0;
		linear = ac->mb->max_linear_groups;
		for (i = 0; i < ngroups; i++) {
			if (i) {
				ext4_mb_choose_next_group(ac, cr, &new_cr,
							  &group, &linear);
				if (new_cr != cr) {
					cr = new_cr;
					goto repeat;
				}
			}
			/* ext4_mb_good_group_nolock's early checks are in
			 * ext4_mb_good_group: free space, and at criteria 0
			 * to 2 at least the request's length */
			if (!ext4_mb_good_group(ac, group,
						v65 ? good_group_test[cr] : cr))
				continue;
			ac->groups++;
			if (cr == 0)
				ext4_mb_simple_scan_group(ac, group, &err);
			else
				ext4_mb_complex_scan_group(ac, group,
					v65 && cr < CR_GOAL_LEN_SLOW, &err);
			if (err)
				return err;
			if (ac->status != AC_CONTINUE)
				break;
		}
		if (v65 && i == ngroups && cr == CR_BEST_AVAIL_LEN)
			ac->g.len = ac->orig_goal_len;
	}
	if (ext4_mb_try_best_found(ac, &err)) {
		cr = ncr - 1;
		goto repeat;
	}
	return err;
}

errcode_t ext4_mb_regular_allocator(struct alloc_ctx *ac)
{
	int k = fls32(ac->g.len);
	errcode_t err = 0;

	/* the goal block itself only with TRY_GOAL (extent-mapped files
	 * next to a neighbour, a new tree root); else only its group */
	ext4_mb_find_by_goal(ac, &err);
	if (err || ac->status == AC_FOUND)
		return err;
	ac->order2 = 0;
	if (k >= MB_ORDER2_REQS && k <= (int)ac->mb->max_order + 1 &&
	    !(ac->g.len & ~(1u << (k - 1))))
		ac->order2 = k - 1;
	if (ac->flags & STREAM_ALLOC) {
		ac->g.group = ac->mb->last_group;
		ac->g.start = ac->mb->last_start;
	}
	if (ac->fs->kver >= KVER_MB_612)
		return mb_scan_criteria_loop2(ac);
	return mb_scan_criteria_loop(ac);
}
