// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext4_mb_new_blocks() as the ext4 driver of Linux 6.1 runs it for an
 * indirect-mapped or extent-mapped inode: a block at a time without
 * delayed allocation, a run at writeback with it (mballoc.h).  Names
 * follow fs/ext4/mballoc.c so that the two can be read side by side.
 * This file is the allocator: the request, its normalization, the goal
 * and the group scans by criteria; the buddy is in mb_buddy.c, the
 * preallocations in mb_prealloc.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/mb_internal.h"
#include "lib/orlov_err.h"

#define MB_MAX_TO_SCAN 200
#define MB_MIN_TO_SCAN 10
#define MB_ORDER2_REQS 2

/* ---- the request --------------------------------------------------- */

static void mb_group_or_file(struct alloc_ctx *ac)
{
	uint32_t bs = ac->fs->g.block_size;
	uint64_t size, isize;
	int inode_pa;

	if (!(ac->flags & HINT_DATA))
		return;
	size = (uint64_t)ac->o.logical + ac->o.len;
	isize = (ac->mi->i_size + bs - 1) / bs;
	/* no inode preallocation for a closed file's last blocks */
	inode_pa = !(size == isize && ac->mi->closed);
	if (isize > size)
		size = isize;
	if (size > ac->mb->stream_request || !ac->mb->group_prealloc) {
		ac->flags |= inode_pa ? STREAM_ALLOC : HINT_NOPREALLOC;
		return;
	}
	ac->flags |= HINT_GROUP_ALLOC;
}

#define KiB(n) ((uint64_t)(n) << 10)
#define MiB(n) ((uint64_t)(n) << 20)
#define NRL_CHECK_SIZE(req, size, max, chunk) ((req) <= (size) || (max) <= (chunk))
#define MB_EXT_MAX_BLOCKS 0xffffffffu	/* ext4's EXT_MAX_BLOCKS */

/* The first part of ext4_mb_normalize_request: the file's size
 * predicted from its table, in blocks, and where that range starts. */
static uint64_t mb_predict_size(const struct alloc_ctx *ac,
				unsigned int bsbits, uint64_t *start)
{
	uint64_t size, start_off = 0, max = 2u << bsbits;
	uint32_t logical = ac->o.logical;

	size = ((uint64_t)logical + ac->o.len) << bsbits;
	if (size < ac->mi->i_size)
		size = ac->mi->i_size;
	if (size <= MiB(1)) {
		/* the next power of two from 16 KiB up */
		uint64_t p = KiB(16);

		while (p < size)
			p <<= 1;
		size = p;
	} else if (NRL_CHECK_SIZE(size, MiB(4), max, 2048)) {
		start_off = ((uint64_t)logical >> (21 - bsbits)) << 21;
		size = MiB(2);
	} else if (NRL_CHECK_SIZE(size, MiB(8), max, 4096)) {
		start_off = ((uint64_t)logical >> (22 - bsbits)) << 22;
		size = MiB(4);
	} else if (NRL_CHECK_SIZE((uint64_t)ac->o.len, MiB(8) >> bsbits, max,
				  8192)) {
		start_off = ((uint64_t)logical >> (23 - bsbits)) << 23;
		size = MiB(8);
	} else {
		start_off = (uint64_t)logical << bsbits;
		size = (uint64_t)ac->o.len << bsbits;
	}
	*start = start_off >> bsbits;
	return size >> bsbits;
}

/* The goal moved next to a neighbour (ext4_get_group_no_and_offset),
 * with EXT4_MB_HINT_TRY_GOAL.  A block past the end is what the kernel's
 * ext4_mb_find_by_goal reports as corruption (no such group). */
static errcode_t mb_goal_at(struct alloc_ctx *ac, uint64_t block)
{
	if (block >= ac->fs->g.blocks_count)
		return ORLOV_ERR_CORRUPT;
	block_to_ex(ac->fs, (uint32_t)block, &ac->g);
	ac->flags |= HINT_TRY_GOAL;
	return 0;
}

/* ext4_mb_normalize_request of Linux 6.1 (not the later fixes of its
 * neighbour trims): the predicted range, cut at the mapped blocks either
 * side (an extent-mapped file's neighbours), at a group's length and at
 * the file's other preallocations; then, when the range ends against a
 * neighbour, the goal is next to it, the left one winning. */
static errcode_t mb_normalize_request(struct alloc_ctx *ac)
{
	const struct fs_state *fs = ac->fs;
	const struct mb_request *ar = ac->ar;
	unsigned int bsbits = (unsigned int)__builtin_ctz(fs->g.block_size);
	uint64_t size, start, end;
	uint32_t logical = ac->o.logical;
	unsigned int i;
	errcode_t err = 0;

	if (!(ac->flags & HINT_DATA) || (ac->flags & HINT_NOPREALLOC))
		return 0;
	if (ac->flags & HINT_GROUP_ALLOC) {
		ac->g.len = ac->mb->group_prealloc;
		return 0;
	}
	/* neighbours that do not surround the request: the kernel BUGs */
	if ((ar->pleft && ar->lleft >= logical) ||
	    (ar->pright && ar->lright <= logical))
		return ORLOV_ERR_CORRUPT;
	size = mb_predict_size(ac, bsbits, &start);
	if (start < logical - logical % fs->g.blocks_per_group)
		start = logical - logical % fs->g.blocks_per_group;
	if (start + size > MB_EXT_MAX_BLOCKS)
		size = MB_EXT_MAX_BLOCKS - start;
	if (ar->pleft && start <= ar->lleft) {
		size -= (uint64_t)ar->lleft + 1 - start;
		start = (uint64_t)ar->lleft + 1;
	}
	if (ar->pright && start + size - 1 >= ar->lright)
		size -= start + size - ar->lright;
	if (size > fs->g.blocks_per_group)
		size = fs->g.blocks_per_group;
	end = start + size;
	/* not over the file's other preallocations */
	for (i = 0; i < ac->mi->pas.n; i++) {
		const struct mb_pa *pa = ac->mi->pas.pa[i];
		uint64_t pa_end = (uint64_t)pa->lstart + pa->len;

		if (pa->lstart >= end || pa_end <= start)
			continue;
		if (pa_end <= logical)
			start = pa_end;
		else if (pa->lstart > logical)
			end = pa->lstart;
	}
	size = end - start;
	ac->g.logical = (uint32_t)start;
	ac->g.len = (uint32_t)size;
	if (ar->pright && ar->lright == end && ar->pright >= size &&
	    ar->pright - size >= fs->g.first_data_block)
		err = mb_goal_at(ac, ar->pright - size);
	if (!err && ar->pleft && ar->lleft + 1 == start &&
	    ar->pleft + 1 < fs->g.blocks_count)
		err = mb_goal_at(ac, ar->pleft + 1);
	return err;
}

/* ---- the scans ----------------------------------------------------- */

static void mb_use_best_found(struct alloc_ctx *ac, errcode_t *err)
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
		*err = mb_new_preallocation(ac);
}

static void mb_check_limits(struct alloc_ctx *ac, uint32_t group,
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
		mb_use_best_found(ac, err);
}

static void mb_measure_extent(struct alloc_ctx *ac, const struct free_ex *ex,
			      errcode_t *err)
{
	struct free_ex *bex = &ac->b;

	ac->found++;
	if ((ac->flags & HINT_FIRST) || ex->len == ac->g.len) {
		*bex = *ex;
		mb_use_best_found(ac, err);
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
	mb_check_limits(ac, ex->group, 0, err);
}

static void mb_simple_scan_group(struct alloc_ctx *ac, uint32_t group,
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
			e = next_set_bit(map, mb->cpg, s);
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
		mb_use_best_found(ac, err);
		return;
	}
}

static void mb_complex_scan_group(struct alloc_ctx *ac, uint32_t group,
				  errcode_t *err)
{
	const struct mb_state *mb = ac->mb;
	const uint8_t *map = gmap(ac->fs, group);
	uint32_t free = grp(ac->fs, group)->free, i = 0;
	struct free_ex ex;

	while (free && ac->status == AC_CONTINUE) {
		i = find_next_zero_bit(map, mb->cpg, i);
		if (i >= mb->cpg)
			break;
		mb_find_extent(ac->fs, group, i, ac->g.len, &ex);
		if (!ex.len || free < ex.len)
			break;
		mb_measure_extent(ac, &ex, err);
		i += ex.len;
		free -= ex.len;
	}
	mb_check_limits(ac, group, 1, err);
}

static int mb_good_group(const struct alloc_ctx *ac, uint32_t group, int cr)
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

/* should_optimize_scan; an image without the extent feature has only
 * indirect-mapped inodes (kver_mb_optimize_indirect) */
static int optimize(const struct alloc_ctx *ac, int cr)
{
	if (!ac->fs->g.extents && !kver_mb_optimize_indirect(ac->fs->kver))
		return 0;
	return ac->mb->optimize_scan && cr < 2;
}

/* ext4_mb_choose_next_group: the next group in turn, or with
 * optimize_scan (after max_linear_groups in turn) the first good group of
 * the lists, or a higher criterion in *new_cr when no list has one. */
static void mb_choose_next_group(struct alloc_ctx *ac, int cr, int *new_cr,
				 uint32_t *group, unsigned int *linear)
{
	const struct mb_state *mb = ac->mb;
	uint32_t ngroups = ac->fs->g.ngroups;
	unsigned int i, k;

	*new_cr = cr;
	if (!optimize(ac, cr) || *linear) {
		if (optimize(ac, cr))
			(*linear)--;
		*group = *group + 1 >= ngroups ? 0 : *group + 1;
		return;
	}
	if (cr == 0) {
		for (i = (unsigned int)ac->order2; i <= mb->max_order; i++)
			for (k = 0; k < mb->lfo[i].n; k++)
				if (mb_good_group(ac, mb->lfo[i].g[k], 0)) {
					*group = mb->lfo[i].g[k];
					ac->flags |= CR0_OPTIMIZED;
					return;
				}
		*new_cr = 1;
		return;
	}
	for (i = (unsigned int)mb_avg_fragment_size_order(mb, ac->g.len);
	     i <= mb->max_order; i++)
		for (k = 0; k < mb->avg[i].n; k++)
			if (mb_good_group(ac, mb->avg[i].g[k], 1)) {
				*group = mb->avg[i].g[k];
				ac->flags |= CR1_OPTIMIZED;
				return;
			}
	*new_cr = 2;
}

/* ext4_mb_find_by_goal: with EXT4_MB_HINT_TRY_GOAL, the goal itself if
 * the whole request is free there (no RAID stripe; EXT4_MB_HINT_MERGE,
 * which would take less, no caller of 6.1 sets). */
static void mb_find_by_goal(struct alloc_ctx *ac, errcode_t *err)
{
	struct free_ex ex;

	if (!(ac->flags & HINT_TRY_GOAL) || !grp(ac->fs, ac->g.group)->free)
		return;
	if (mb_find_extent(ac->fs, ac->g.group, ac->g.start, ac->g.len, &ex) >=
	    ac->g.len) {
		ac->found++;
		ac->b = ex;
		mb_use_best_found(ac, err);
	}
}

static errcode_t mb_regular_allocator(struct alloc_ctx *ac)
{
	uint32_t ngroups = ac->fs->g.ngroups, group, i;
	int cr, new_cr, k = fls32(ac->g.len);
	unsigned int linear;
	errcode_t err = 0;

	/* the goal block itself only with TRY_GOAL (extent-mapped files
	 * next to a neighbour, a new tree root); else only its group */
	mb_find_by_goal(ac, &err);
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
	cr = ac->order2 ? 0 : 1;
repeat:
	for (; cr < 4 && ac->status == AC_CONTINUE; cr++) {
		ac->cr = (unsigned int)cr;
		group = ac->g.group < ngroups ? ac->g.group : 0;
		linear = ac->mb->max_linear_groups;
		for (i = 0; i < ngroups; i++) {
			if (i) {
				mb_choose_next_group(ac, cr, &new_cr, &group,
						     &linear);
				if (new_cr != cr) {
					cr = new_cr;
					goto repeat;
				}
			}
			/* ext4_mb_good_group_nolock's early checks are in
			 * mb_good_group: free space, and at criteria 0 to 2
			 * at least the request's length */
			if (!mb_good_group(ac, group, cr))
				continue;
			ac->groups++;
			if (cr == 0)
				mb_simple_scan_group(ac, group, &err);
			else
				mb_complex_scan_group(ac, group, &err);
			if (err)
				return err;
			if (ac->status != AC_CONTINUE)
				break;
		}
	}
	if (ac->b.len > 0 && ac->status != AC_FOUND &&
	    !(ac->flags & HINT_FIRST)) {
		struct free_ex ex;

		/* ext4_mb_try_best_found */
		if (mb_find_extent(ac->fs, ac->b.group, ac->b.start, ac->b.len,
				   &ex) > 0) {
			ac->b = ex;
			mb_use_best_found(ac, &err);
		} else {
			memset(&ac->b, 0, sizeof(ac->b));
			ac->status = AC_CONTINUE;
			ac->flags |= HINT_FIRST;
			cr = 3;
			goto repeat;
		}
	}
	return err;
}

/* ext4_mb_mark_diskspace_used */
static void mb_mark_diskspace_used(struct alloc_ctx *ac)
{
	struct fs_state *fs = ac->fs;

	set_range(group_bbitmap(fs, ac->b.group), ac->b.start, ac->b.len);
	fs->free_blocks[ac->b.group] -= ac->b.len;
	percpu_counter_add(&fs->freeb, -(int64_t)ac->b.len);
	fs_flex_add(fs, ac->b.group, 0, -(int64_t)ac->b.len, 0);
}

/* ---- --trace: ext4's own tracepoints (doc/trace-format.md) ---------- */

/* show_mballoc_flags: the names, then what is left in hex, as the
 * kernel's __print_flags writes them. */
static void trace_flags(FILE *f, unsigned int flags)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ HINT_MERGE, "HINT_MERGE" }, { 0x2, "HINT_RESV" },
		{ 0x4, "HINT_MDATA" }, { HINT_FIRST, "HINT_FIRST" },
		{ 0x10, "HINT_BEST" }, { HINT_DATA, "HINT_DATA" },
		{ HINT_NOPREALLOC, "HINT_NOPREALLOC" },
		{ HINT_GROUP_ALLOC, "HINT_GRP_ALLOC" },
		{ 0x100, "HINT_GOAL_ONLY" }, { HINT_TRY_GOAL, "HINT_TRY_GOAL" },
		{ DELALLOC_RESV, "DELALLOC_RESV" },
		{ STREAM_ALLOC, "STREAM_ALLOC" }, { 0x1000, "USE_ROOT_BLKS" },
		{ USE_RESV, "USE_RESV" }, { 0x4000, "STRICT_CHECK" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			flags &= ~names[i].bit;
			sep = "|";
		}
	if (flags)
		fprintf(f, "%s0x%x", sep, flags);
}

static void trace_ex(FILE *f, const char *what, const struct free_ex *ex,
		     uint32_t logical)
{
	fprintf(f, " %s %u/%u/%u@%u", what, ex->group, ex->start, ex->len,
		logical);
}

/* ext4_mb_collect_stats's record: ext4_mballoc_prealloc when a
 * preallocation served the request, else ext4_mballoc_alloc.  A
 * preallocation leaves ac_b_ex's logical block at the request's. */
static void trace_mballoc(const struct alloc_ctx *ac, int prealloc)
{
	FILE *f = ac->fs->trace;

	fprintf(f, "ext4_mballoc_%s: inode %u", prealloc ? "prealloc" : "alloc",
		ac->ar->ino);
	trace_ex(f, "orig", &ac->o, ac->o.logical);
	if (prealloc) {
		trace_ex(f, "result", &ac->b, ac->o.logical);
		putc('\n', f);
		return;
	}
	trace_ex(f, "goal", &ac->g, ac->g.logical);
	trace_ex(f, "result", &ac->f, ac->f.logical);
	fprintf(f, " blks %u grps %u cr %u flags ", ac->found, ac->groups,
		ac->cr);
	/* the tracepoint keeps ac_flags in a __u16: CR1_OPTIMIZED is cut */
	trace_flags(f, ac->flags & 0xffff);
	fprintf(f, " tail %u broken %u\n", ac->tail,
		ac->buddy ? 1u << ac->buddy : 0);
}

/* The caller's ar->flags: data of a regular file, at writeback with
 * delayed allocation its reservation (ext4_ext_map_blocks,
 * ext4_ind_map_blocks), TRY_GOAL for a new tree root. */
static unsigned int ar_flags(const struct fs_state *fs,
			     const struct mb_request *ar)
{
	unsigned int flags = ar->try_goal ? HINT_TRY_GOAL : 0;

	if (ar->mi)
		flags |= HINT_DATA |
			 (fs->mb->delalloc ? DELALLOC_RESV | USE_RESV : 0);
	return flags;
}

static void trace_allocate_blocks(const struct fs_state *fs,
				  const struct mb_request *ar, uint64_t block,
				  uint32_t got)
{
	fprintf(fs->trace, "ext4_allocate_blocks: ino %u flags ", ar->ino);
	trace_flags(fs->trace, ar_flags(fs, ar));
	fprintf(fs->trace,
		" len %u block %llu lblk %u goal %llu lleft %u lright %u pleft %llu pright %llu\n",
		got, (unsigned long long)block, ar->logical,
		(unsigned long long)ar->goal, ar->lleft, ar->lright,
		(unsigned long long)ar->pleft, (unsigned long long)ar->pright);
}

errcode_t ext4_mb_new_blocks_ar(struct fs_state *fs,
				const struct mb_request *ar, uint64_t *block,
				uint32_t *got)
{
	struct alloc_ctx ac;
	int retries = 0, strict = 0;
	uint64_t seq, goal = ar->goal;
	uint32_t len = ar->len;
	int prealloc;
	errcode_t err;

	if (!len)
		return EINVAL;
	/* ext4_claim_free_clusters: root may use every free cluster */
	if (percpu_counter_sum(&fs->freeb) < 1)
		return ORLOV_ERR_NO_BLOCKS;
	if (len > fs->g.blocks_per_group)
		len = fs->g.blocks_per_group;

	memset(&ac, 0, sizeof(ac));
	ac.fs = fs;
	ac.mb = fs->mb;
	ac.mi = ar->mi;
	ac.ar = ar;
	if (goal < fs->g.first_data_block || goal >= fs->g.blocks_count)
		goal = fs->g.first_data_block;
	block_to_ex(fs, (uint32_t)goal, &ac.o);
	ac.o.logical = ar->logical;
	ac.o.len = len;
	ac.g = ac.o;
	ac.flags = ar_flags(fs, ar);
	ac.status = AC_CONTINUE;
	mb_group_or_file(&ac);

	prealloc = mb_use_preallocated(&ac);
	if (!prealloc) {
		err = mb_normalize_request(&ac);
		if (err)
			return err;
		for (;;) {
			seq = ac.seq;
			err = mb_regular_allocator(&ac);
			if (err)
				return err;
			if (ac.status == AC_FOUND || ++retries >= 3)
				break;
			/* ext4_mb_discard_preallocations_should_retry */
			if (mb_discard_preallocations(fs, ac.o.len, &ac.seq))
				continue;
			if (strict && ac.seq == seq)
				break;
			strict = 1;
		}
		if (ac.status != AC_FOUND)
			return ORLOV_ERR_NO_BLOCKS;
	}
	mb_mark_diskspace_used(&ac);
	*block = ex_block(fs, &ac.b);
	*got = ac.b.len;
	err = mb_release_context(&ac);
	if (!err && fs->trace) {
		trace_mballoc(&ac, prealloc);
		trace_allocate_blocks(fs, ar, *block, *got);
	}
	return err;
}

errcode_t ext4_mb_new_blocks(struct fs_state *fs, struct mb_inode *mi,
			     uint32_t logical, uint32_t goal, uint32_t len,
			     uint32_t *block, uint32_t *got)
{
	struct mb_request ar = {
		.mi = mi, .logical = logical, .len = len, .goal = goal,
	};
	uint64_t b;
	errcode_t err = ext4_mb_new_blocks_ar(fs, &ar, &b, got);

	if (!err)
		*block = (uint32_t)b;
	return err;
}

errcode_t ext4_mb_new_block(struct fs_state *fs, struct mb_inode *mi,
			    uint32_t logical, uint32_t goal, uint32_t *block)
{
	uint32_t got;

	return ext4_mb_new_blocks(fs, mi, logical, goal, 1, block, &got);
}

void ext4_mb_free_blocks(struct fs_state *fs, uint32_t block, uint32_t count)
{
	struct free_ex ex;
	uint32_t i;

	/* the callers free single blocks, in use and in one group */
	block_to_ex(fs, block, &ex);
	/* which inode, its mode and the caller's flags are not known here
	 * (doc/trace-format.md) */
	if (fs->trace)
		fprintf(fs->trace,
			"ext4_free_blocks: ino 0 mode 00 block %u count %u flags \n",
			block, count);
	for (i = 0; i < count; i++)
		bit_clear(group_bbitmap(fs, ex.group), ex.start + i);
	if (!fs->mb->journal)
		mb_free_range(fs, ex.group, ex.start, count);
	fs->free_blocks[ex.group] += count;
	/* one counter update per call, as ext4_free_blocks makes */
	percpu_counter_add(&fs->freeb, count);
	fs_flex_add(fs, ex.group, 0, count, 0);
}

errcode_t mb_state_init(struct fs_state *fs, int rotational)
{
	struct mb_state *mb = calloc(1, sizeof(*mb));
	uint32_t g, n = fs->g.ngroups;
	int i;

	if (!mb)
		return ENOMEM;
	fs->mb = mb;
	mb->map = malloc((size_t)n * fs->bytes_per_group);
	mb->grp = calloc(n, sizeof(*mb->grp));
	if (!mb->map || !mb->grp)
		goto nomem;
	for (i = 0; i < 16; i++) {
		mb->lfo[i].g = malloc(n * sizeof(uint32_t));
		mb->avg[i].g = malloc(n * sizeof(uint32_t));
		if (!mb->lfo[i].g || !mb->avg[i].g)
			goto nomem;
	}
	memcpy(mb->map, fs->bbitmap, (size_t)n * fs->bytes_per_group);
	mb->cpg = fs->g.blocks_per_group;
	mb->max_order = (unsigned int)__builtin_ctz(fs->g.block_size) + 1;
	mb->group_prealloc = 512;
	mb->stream_request = 16;
	mb->optimize_scan = n >= 16;
	mb->dirty.batch = fs->freeb.batch;
	mb->max_linear_groups = rotational ? 4 : 0;
	for (g = 0; g < n; g++) {
		mb->grp[g].lfo_list = mb->grp[g].avg_order = -1;
		mb_group_changed(fs, g);
	}
	return 0;
nomem:
	mb_state_free(fs);
	return ENOMEM;
}

void mb_state_free(struct fs_state *fs)
{
	struct mb_state *mb = fs->mb;
	unsigned int k;
	int i;

	if (!mb)
		return;
	for (k = 0; k < mb->all.n; k++)
		free(mb->all.pa[k]);
	free(mb->all.pa);
	for (i = 0; i < MB_PREALLOC_TB_SIZE; i++)
		free(mb->lg[i].pa);
	for (i = 0; i < 16; i++) {
		free(mb->lfo[i].g);
		free(mb->avg[i].g);
	}
	free(mb->map);
	free(mb->grp);
	free(mb);
	fs->mb = NULL;
}
