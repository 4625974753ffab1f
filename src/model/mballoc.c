// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext4_mb_new_blocks() for one block at a time, as the ext4 driver of
 * Linux 6.1 runs it for an indirect-mapped inode without delayed
 * allocation (mballoc.h).  Names follow fs/ext4/mballoc.c so that the two
 * can be read side by side.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/mballoc.h"
#include "lib/orlov_err.h"

/* ac_flags */
#define HINT_DATA	0x1
#define HINT_GROUP_ALLOC 0x2
#define HINT_NOPREALLOC	0x4
#define STREAM_ALLOC	0x8
#define HINT_FIRST	0x10

enum { AC_CONTINUE, AC_FOUND, AC_BREAK };

#define MB_MAX_TO_SCAN 200
#define MB_MIN_TO_SCAN 10
#define MB_ORDER2_REQS 2

struct free_ex {
	uint32_t group, start, len, logical;
};

struct alloc_ctx {
	struct fs_state *fs;
	struct mb_state *mb;
	struct mb_inode *mi;
	unsigned int flags;
	struct free_ex o, g, b, f;
	int status;
	unsigned int found;
	int order2;
	struct mb_pa *pa;	/* the preallocation used or made */
	uint64_t seq;		/* discard_pa_seq, enough of it to retry */
};

/* ---- lists of preallocations --------------------------------------- */

static errcode_t pa_list_insert(struct mb_pa_list *l, unsigned int at,
				struct mb_pa *pa)
{
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 8;
		struct mb_pa **n = realloc(l->pa, cap * sizeof(*n));

		if (!n)
			return ENOMEM;
		l->pa = n;
		l->cap = cap;
	}
	memmove(l->pa + at + 1, l->pa + at, (l->n - at) * sizeof(*l->pa));
	l->pa[at] = pa;
	l->n++;
	return 0;
}

static int pa_list_remove(struct mb_pa_list *l, const struct mb_pa *pa)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->pa[i] == pa) {
			memmove(l->pa + i, l->pa + i + 1,
				(l->n - i - 1) * sizeof(*l->pa));
			l->n--;
			return 1;
		}
	return 0;
}

/* ---- the buddy ----------------------------------------------------- */

static uint8_t *gmap(const struct fs_state *fs, uint32_t group)
{
	return fs->mb->map + (size_t)group * fs->bytes_per_group;
}

static uint32_t next_set_bit(const uint8_t *map, uint32_t size, uint32_t i)
{
	while (i < size && !bit_test(map, i))
		i++;
	return i;
}

static int fls32(uint32_t x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* The buddy's chunk starting at @first in a free run ending at @end:
 * aligned, a power of two, at most 2^max_order (ext4_mb_mark_free_simple
 * cuts runs so, and mb_mark_used/mb_free_blocks keep it so). */
static unsigned int chunk_order(const struct mb_state *mb, uint32_t first,
				uint32_t end)
{
	uint32_t border = 1u << mb->max_order;
	unsigned int align = (unsigned int)__builtin_ctz(first | border);
	unsigned int fit = (unsigned int)fls32(end - first) - 1;

	return align < fit ? align : fit;
}

static void group_refresh(const struct fs_state *fs, uint32_t group)
{
	struct mb_state *mb = fs->mb;
	struct mb_group *gr = &mb->grp[group];
	const uint8_t *map = gmap(fs, group);
	uint32_t i = 0, e;
	int k;

	gr->free = gr->fragments = 0;
	memset(gr->counters, 0, sizeof(gr->counters));
	while ((i = find_next_zero_bit(map, mb->cpg, i)) < mb->cpg) {
		e = next_set_bit(map, mb->cpg, i);
		gr->fragments++;
		gr->free += e - i;
		while (i < e) {
			unsigned int o = chunk_order(mb, i, e);

			gr->counters[o]++;
			i += 1u << o;
		}
	}
	gr->largest_order = -1;
	for (k = (int)mb->max_order; k >= 0; k--)
		if (gr->counters[k]) {
			gr->largest_order = k;
			break;
		}
}

static struct mb_group *grp(const struct fs_state *fs, uint32_t group)
{
	return &fs->mb->grp[group];
}

static void glist_remove(struct mb_glist *l, uint32_t group)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->g[i] == group) {
			memmove(l->g + i, l->g + i + 1, (l->n - i - 1) * sizeof(*l->g));
			l->n--;
			return;
		}
}

/* Capacity is the group count: a group is on one list of a kind. */
static void glist_append(struct mb_glist *l, uint32_t group)
{
	l->g[l->n++] = group;
}

/* mb_avg_fragment_size_order */
static int avg_fragment_order(const struct mb_state *mb, uint32_t len)
{
	int order = fls32(len) - 2;

	if (order < 0)
		return 0;
	if (order == (int)mb->max_order + 1)
		order--;
	return order;
}

/* The end of mb_mark_used and mb_free_blocks (and of the buddy's
 * generation): the counters again, and mb_set_largest_free_order and
 * mb_update_avg_fragment_size move the group to the tail of its new
 * lists when its orders changed. */
static void mb_group_changed(const struct fs_state *fs, uint32_t group)
{
	struct mb_state *mb = fs->mb;
	struct mb_group *gr = &mb->grp[group];
	int new;

	group_refresh(fs, group);
	if (!mb->optimize_scan)
		return;
	if (gr->largest_order != gr->lfo_list || !gr->free) {
		if (gr->lfo_list >= 0)
			glist_remove(&mb->lfo[gr->lfo_list], group);
		gr->lfo_list = -1;
		if (gr->largest_order >= 0 && gr->free) {
			glist_append(&mb->lfo[gr->largest_order], group);
			gr->lfo_list = gr->largest_order;
		}
	}
	new = gr->fragments ? avg_fragment_order(mb, gr->free / gr->fragments) : -1;
	if (new != gr->avg_order) {
		if (gr->avg_order >= 0)
			glist_remove(&mb->avg[gr->avg_order], group);
		gr->avg_order = new;
		if (new >= 0)
			glist_append(&mb->avg[new], group);
	}
}

/* mb_find_extent: from @block, whole chunks until @needed is reached or
 * the free run ends. */
static uint32_t mb_find_extent(const struct fs_state *fs, uint32_t group,
			       uint32_t block, uint32_t needed,
			       struct free_ex *ex)
{
	const struct mb_state *mb = fs->mb;
	const uint8_t *map = gmap(fs, group);
	uint32_t rs = block, re, c;

	memset(ex, 0, sizeof(*ex));
	if (block >= mb->cpg || bit_test(map, block))
		return 0;
	while (rs > 0 && !bit_test(map, rs - 1))
		rs--;
	re = next_set_bit(map, mb->cpg, block);
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

static void set_range(uint8_t *map, uint32_t start, uint32_t len)
{
	while (len--)
		bit_set(map, start++);
}

/* mb_mark_used: the buddy only; the on-disk bitmap comes later. */
static void mb_mark_used(struct fs_state *fs, const struct free_ex *ex)
{
	set_range(gmap(fs, ex->group), ex->start, ex->len);
	mb_group_changed(fs, ex->group);
}

/* mb_free_blocks on the buddy. */
static void mb_free_range(struct fs_state *fs, uint32_t group, uint32_t start,
			  uint32_t len)
{
	uint8_t *map = gmap(fs, group);

	while (len--)
		bit_clear(map, start++);
	mb_group_changed(fs, group);
}

static uint32_t ex_block(const struct fs_state *fs, const struct free_ex *ex)
{
	return fs->g.first_data_block + ex->group * fs->g.blocks_per_group +
	       ex->start;
}

static void block_to_ex(const struct fs_state *fs, uint32_t block,
			struct free_ex *ex)
{
	uint32_t rel = block - fs->g.first_data_block;

	ex->group = rel / fs->g.blocks_per_group;
	ex->start = rel % fs->g.blocks_per_group;
}

/* ---- preallocations ------------------------------------------------ */

static errcode_t mb_use_inode_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	uint32_t start = pa->pstart + (ac->o.logical - pa->lstart);
	uint32_t end = pa->pstart + pa->len;

	if (start + ac->o.len < end)
		end = start + ac->o.len;
	block_to_ex(ac->fs, start, &ac->b);
	ac->b.len = end - start;
	ac->status = AC_FOUND;
	ac->pa = pa;
	pa->free -= ac->b.len;
	return 0;
}

static void mb_use_group_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	block_to_ex(ac->fs, pa->pstart, &ac->b);
	ac->b.len = ac->o.len;
	ac->status = AC_FOUND;
	ac->pa = pa;
}

static errcode_t mb_new_preallocation(struct alloc_ctx *ac)
{
	struct mb_pa *pa = calloc(1, sizeof(*pa));
	errcode_t err;

	if (!pa)
		return ENOMEM;
	err = pa_list_insert(&ac->mb->all, ac->mb->all.n, pa);
	if (err) {
		free(pa);
		return err;
	}
	if (ac->flags & HINT_GROUP_ALLOC) {
		ac->f = ac->b;
		pa->pstart = pa->lstart = ex_block(ac->fs, &ac->b);
		pa->len = pa->free = ac->b.len;
		pa->group_pa = 1;
		mb_use_group_pa(ac, pa);
		return 0;	/* on the lg list at release */
	}
	/* ext4_mb_new_inode_pa: a shorter find than asked keeps the asked
	 * end, else the asked start, else starts at the request. */
	if (ac->b.len < ac->g.len) {
		uint32_t goal_end = ac->g.logical + ac->g.len;
		uint32_t l = goal_end - ac->b.len;

		if (ac->o.logical < l) {
			l = ac->g.logical;
			if (ac->o.logical + ac->o.len > l + ac->b.len)
				l = ac->o.logical;
		}
		ac->b.logical = l;
	}
	ac->f = ac->b;
	pa->lstart = ac->b.logical;
	pa->pstart = ex_block(ac->fs, &ac->b);
	pa->len = pa->free = ac->b.len;
	pa->owner = ac->mi;
	err = pa_list_insert(&ac->mi->pas, 0, pa);
	if (err)
		return err;	/* freed with the state */
	return mb_use_inode_pa(ac, pa);
}

/* ext4_mb_release_inode_pa: what the file did not use goes back, one
 * mb_free_blocks per free run of the on-disk bitmap. */
static uint32_t release_inode_pa(struct fs_state *fs, struct mb_pa *pa)
{
	struct free_ex ex;
	uint32_t i, end, freed = 0;
	const uint8_t *disk;

	block_to_ex(fs, pa->pstart, &ex);
	disk = group_bbitmap(fs, ex.group);
	end = ex.start + pa->len;
	for (i = ex.start; i < end;) {
		uint32_t next;

		i = find_next_zero_bit(disk, end, i);
		if (i >= end)
			break;
		next = next_set_bit(disk, end, i);
		mb_free_range(fs, ex.group, i, next - i);
		freed += next - i;
		i = next + 1;
	}
	return freed;
}

static void release_group_pa(struct fs_state *fs, struct mb_pa *pa)
{
	struct free_ex ex;

	block_to_ex(fs, pa->pstart, &ex);
	mb_free_range(fs, ex.group, ex.start, pa->len);
}

static int lg_order(uint32_t n)
{
	int o = fls32(n) - 1;

	return o > MB_PREALLOC_TB_SIZE - 1 ? MB_PREALLOC_TB_SIZE - 1 : o;
}

static int lg_remove(struct mb_state *mb, const struct mb_pa *pa)
{
	int i;

	for (i = 0; i < MB_PREALLOC_TB_SIZE; i++)
		if (pa_list_remove(&mb->lg[i], pa))
			return 1;
	return 0;
}

/* ext4_mb_put_pa's end, or a discard: the preallocation is gone. */
static void pa_forget(struct mb_state *mb, struct mb_pa *pa)
{
	pa_list_remove(&mb->all, pa);
	if (pa->owner)
		pa_list_remove(&pa->owner->pas, pa);
	else
		lg_remove(mb, pa);
	free(pa);
}

/* ext4_mb_discard_lg_preallocations: the oldest of a crowded order go,
 * except the one in use. */
static void discard_lg(struct fs_state *fs, int order, unsigned int total,
		       const struct mb_pa *busy)
{
	struct mb_pa_list *l = &fs->mb->lg[order];
	unsigned int i = 0;

	while (i < l->n) {
		struct mb_pa *pa = l->pa[i];

		if (pa == busy) {
			i++;
			continue;
		}
		release_group_pa(fs, pa);
		pa_forget(fs->mb, pa);
		if (--total <= 5)
			break;
	}
}

/* ext4_mb_add_n_trim: sorted by free space within the order's list. */
static errcode_t add_n_trim(struct fs_state *fs, struct mb_pa *pa)
{
	int order = lg_order(pa->free);
	struct mb_pa_list *l = &fs->mb->lg[order];
	unsigned int i, at = l->n, count = 1;
	errcode_t err;

	for (i = 0; i < l->n; i++) {
		if (at == l->n && pa->free < l->pa[i]->free)
			at = i;
		count++;
	}
	err = pa_list_insert(l, at, pa);
	if (err)
		return err;
	if (count > 8)
		discard_lg(fs, order, count, pa);
	return 0;
}


static int mb_use_preallocated(struct alloc_ctx *ac)
{
	struct mb_state *mb = ac->mb;
	struct mb_pa *cpa = NULL;
	uint32_t goal;
	unsigned int i, k;

	if (!(ac->flags & HINT_DATA))
		return 0;
	for (i = 0; i < ac->mi->pas.n; i++) {
		struct mb_pa *pa = ac->mi->pas.pa[i];

		if (ac->o.logical < pa->lstart ||
		    ac->o.logical >= pa->lstart + pa->len)
			continue;
		if (pa->free) {
			mb_use_inode_pa(ac, pa);
			return 1;
		}
	}
	if (!(ac->flags & HINT_GROUP_ALLOC))
		return 0;
	/* the group preallocation nearest the goal, first of equals */
	goal = ex_block(ac->fs, &ac->g);
	for (i = (unsigned int)lg_order(ac->o.len); i < MB_PREALLOC_TB_SIZE; i++)
		for (k = 0; k < mb->lg[i].n; k++) {
			struct mb_pa *pa = mb->lg[i].pa[k];

			if (pa->free < ac->o.len)
				continue;
			if (!cpa ||
			    labs((long)goal - (long)pa->pstart) <
			    labs((long)goal - (long)cpa->pstart))
				cpa = pa;
		}
	if (!cpa)
		return 0;
	mb_use_group_pa(ac, cpa);
	return 1;
}

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

static void mb_normalize_request(struct alloc_ctx *ac)
{
	const struct fs_state *fs = ac->fs;
	unsigned int bsbits = (unsigned int)__builtin_ctz(fs->g.block_size);
	uint64_t size, start_off = 0, max = 2u << bsbits, start, end;
	uint32_t logical = ac->o.logical;
	unsigned int i;

	if (!(ac->flags & HINT_DATA) || (ac->flags & HINT_NOPREALLOC))
		return;
	if (ac->flags & HINT_GROUP_ALLOC) {
		ac->g.len = ac->mb->group_prealloc;
		return;
	}
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
	size >>= bsbits;
	start = start_off >> bsbits;
	if (start < logical - logical % fs->g.blocks_per_group)
		start = logical - logical % fs->g.blocks_per_group;
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
	ac->g.logical = (uint32_t)start;
	ac->g.len = (uint32_t)(end - start);
}

/* ---- the scans ----------------------------------------------------- */

static void mb_use_best_found(struct alloc_ctx *ac, errcode_t *err)
{
	if (ac->b.len > ac->g.len)
		ac->b.len = ac->g.len;
	ac->b.logical = ac->g.logical;
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

	if (!gr->free || !gr->fragments)
		return 0;
	switch (cr) {
	case 0:
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

/* should_optimize_scan */
static int optimize(const struct alloc_ctx *ac, int cr)
{
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
					return;
				}
		*new_cr = 1;
		return;
	}
	for (i = (unsigned int)avg_fragment_order(mb, ac->g.len);
	     i <= mb->max_order; i++)
		for (k = 0; k < mb->avg[i].n; k++)
			if (mb_good_group(ac, mb->avg[i].g[k], 1)) {
				*group = mb->avg[i].g[k];
				return;
			}
	*new_cr = 2;
}

static errcode_t mb_regular_allocator(struct alloc_ctx *ac)
{
	uint32_t ngroups = ac->fs->g.ngroups, group, i;
	int cr, new_cr, k = fls32(ac->g.len);
	unsigned int linear;
	errcode_t err = 0;

	/* no TRY_GOAL for indirect-mapped files: the goal block itself is
	 * never tried, only its group */
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

/* ext4_mb_discard_preallocations on ENOSPC: group by group from the
 * first, until something is freed; in a group every preallocation, of
 * any file or the locality group, oldest first. */
static uint32_t mb_discard_preallocations(struct fs_state *fs, uint32_t needed,
					  uint64_t *seq)
{
	struct mb_state *mb = fs->mb;
	uint32_t group, freed = 0;
	unsigned int k;

	for (group = 0; group < fs->g.ngroups && freed < needed; group++) {
		uint32_t f = 0;
		struct free_ex ex;

		for (k = 0; k < mb->all.n;) {
			struct mb_pa *pa = mb->all.pa[k];

			block_to_ex(fs, pa->pstart, &ex);
			if (ex.group != group) {
				k++;
				continue;
			}
			f += pa->free;
			if (pa->group_pa)
				release_group_pa(fs, pa);
			else
				release_inode_pa(fs, pa);
			pa_forget(mb, pa);
		}
		if (f)
			(*seq)++;
		freed += f;
	}
	return freed;
}

/* ext4_mb_mark_diskspace_used */
static void mb_mark_diskspace_used(struct alloc_ctx *ac)
{
	struct fs_state *fs = ac->fs;

	set_range(group_bbitmap(fs, ac->b.group), ac->b.start, ac->b.len);
	fs->free_blocks[ac->b.group] -= ac->b.len;
	percpu_counter_add(&fs->freeb, -(int64_t)ac->b.len);
}

/* ext4_mb_release_context */
static errcode_t mb_release_context(struct alloc_ctx *ac)
{
	struct mb_pa *pa = ac->pa;

	if (!pa)
		return 0;
	if (pa->group_pa) {
		pa->pstart += ac->b.len;
		pa->lstart += ac->b.len;
		pa->free -= ac->b.len;
		pa->len -= ac->b.len;
		if (!pa->free) {
			pa_forget(ac->mb, pa);
			return 0;
		}
		lg_remove(ac->mb, pa);
		return add_n_trim(ac->fs, pa);
	}
	if (!pa->free) {
		pa_forget(ac->mb, pa);
		return 0;
	}
	pa_list_remove(&ac->mi->pas, pa);
	return pa_list_insert(&ac->mi->pas, 0, pa);
}

errcode_t ext4_mb_new_blocks(struct fs_state *fs, struct mb_inode *mi,
			     uint32_t logical, uint32_t goal, uint32_t len,
			     uint32_t *block, uint32_t *got)
{
	struct alloc_ctx ac;
	int retries = 0, strict = 0;
	uint64_t seq;
	errcode_t err;

	/* ext4_claim_free_clusters: root may use every free cluster */
	if (percpu_counter_sum(&fs->freeb) < 1)
		return ORLOV_ERR_NO_BLOCKS;
	if (len > fs->g.blocks_per_group)
		len = fs->g.blocks_per_group;

	memset(&ac, 0, sizeof(ac));
	ac.fs = fs;
	ac.mb = fs->mb;
	ac.mi = mi;
	if (goal < fs->g.first_data_block || goal >= fs->g.blocks_count)
		goal = fs->g.first_data_block;
	block_to_ex(fs, goal, &ac.o);
	ac.o.logical = logical;
	ac.o.len = len;
	ac.g = ac.o;
	ac.flags = mi ? HINT_DATA : 0;
	ac.status = AC_CONTINUE;
	mb_group_or_file(&ac);

	if (!mb_use_preallocated(&ac)) {
		mb_normalize_request(&ac);
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
	return mb_release_context(&ac);
}

errcode_t ext4_mb_new_block(struct fs_state *fs, struct mb_inode *mi,
			    uint32_t logical, uint32_t goal, uint32_t *block)
{
	uint32_t got;

	return ext4_mb_new_blocks(fs, mi, logical, goal, 1, block, &got);
}

void ext4_discard_inode_pa(struct fs_state *fs, struct mb_inode *mi)
{
	while (mi->pas.n) {
		release_inode_pa(fs, mi->pas.pa[0]);
		pa_forget(fs->mb, mi->pas.pa[0]);
	}
}

void mb_inode_moved(struct mb_inode *mi)
{
	unsigned int i;

	for (i = 0; i < mi->pas.n; i++)
		mi->pas.pa[i]->owner = mi;
}

void mb_inode_release(struct mb_inode *mi)
{
	unsigned int i;

	/* what is left stays the filesystem's until a discard (or the
	 * end: mb_state_free frees every preallocation) */
	for (i = 0; i < mi->pas.n; i++)
		mi->pas.pa[i]->owner = NULL;
	free(mi->pas.pa);
	memset(mi, 0, sizeof(*mi));
}

void ext4_mb_free_blocks(struct fs_state *fs, uint32_t block, uint32_t count)
{
	struct free_ex ex;
	uint32_t i;

	/* the callers free single blocks, in use and in one group */
	block_to_ex(fs, block, &ex);
	for (i = 0; i < count; i++)
		bit_clear(group_bbitmap(fs, ex.group), ex.start + i);
	mb_free_range(fs, ex.group, ex.start, count);
	fs->free_blocks[ex.group] += count;
	/* one counter update per call, as ext4_free_blocks makes */
	percpu_counter_add(&fs->freeb, count);
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
