/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the three parts of the ext4 allocator share (fs/ext4/mballoc.h):
 * the allocation context of one request, the buddy's small helpers, and
 * the steps one part calls in another.  mballoc.c holds the request and
 * its goal, mballoc_scan.c the criteria and the group scans,
 * mballoc_buddy.c the buddy and its free extents, mballoc_prealloc.c the
 * inode and locality-group preallocations.
 */
#ifndef ORLOV_EXT4_MBALLOC_INT_H
#define ORLOV_EXT4_MBALLOC_INT_H

#include "model/ext4/mballoc.h"

/* ac_flags, with the kernel's values (fs/ext4/ext4.h): --trace prints
 * them as the ext4_mballoc_alloc tracepoint does. */
#define HINT_MERGE	0x0001
#define HINT_DATA	0x0020
#define HINT_NOPREALLOC	0x0040
#define HINT_GROUP_ALLOC 0x0080
#define HINT_FIRST	0x0008
#define HINT_TRY_GOAL	0x0200
#define DELALLOC_RESV	0x0400
#define STREAM_ALLOC	0x0800
#define USE_ROOT_BLKS	0x1000
#define USE_RESV	0x2000
#define CR0_OPTIMIZED	0x8000
#define CR1_OPTIMIZED	0x10000

enum { AC_CONTINUE, AC_FOUND, AC_BREAK };

struct free_ex {
	uint32_t group, start, len, logical;
};

struct alloc_ctx {
	struct fs_state *fs;
	struct mb_state *mb;
	struct mb_inode *mi;
	const struct mb_request *ar;
	unsigned int flags;
	struct free_ex o, g, b, f;
	/* ac_orig_goal_len: g.len before 6.12's CR_BEST_AVAIL_LEN trims it
	 * (the request's own length for a locality-group request) */
	uint32_t orig_goal_len;
	int status;
	unsigned int found;
	int order2;
	struct mb_pa *pa;	/* the preallocation used or made */
	/* for the ext4_mballoc_alloc record only: ac_groups_scanned,
	 * ac_criteria, and mb_mark_used's ac_tail and ac_buddy */
	unsigned int groups, cr, tail, buddy;
	uint64_t seq;		/* discard_pa_seq, enough of it to retry */
};

/* ---- the buddy (mballoc_buddy.c) ------------------------------------ */

static inline uint8_t *gmap(const struct fs_state *fs, uint32_t group)
{
	return fs->mb->map + (size_t)group * fs->bytes_per_group;
}

static inline int fls32(uint32_t x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* The buddy's chunk starting at @first in a free run ending at @end:
 * aligned, a power of two, at most 2^max_order (ext4_mb_mark_free_simple
 * cuts runs so, and mb_mark_used/mb_free_blocks keep it so). */
static inline unsigned int chunk_order(const struct mb_state *mb,
				       uint32_t first, uint32_t end)
{
	uint32_t border = 1u << mb->max_order;
	unsigned int align = (unsigned int)__builtin_ctz(first | border);
	unsigned int fit = (unsigned int)fls32(end - first) - 1;

	return align < fit ? align : fit;
}

static inline struct mb_group *grp(const struct fs_state *fs, uint32_t group)
{
	return &fs->mb->grp[group];
}

static inline void set_range(uint8_t *map, uint32_t start, uint32_t len)
{
	while (len--)
		bit_set(map, start++);
}

static inline fsblk_t ex_block(const struct fs_state *fs,
			       const struct free_ex *ex)
{
	return group_first_block(fs, ex->group) + ex->start;
}

/* ext4_get_group_no_and_offset */
static inline void block_to_ex(const struct fs_state *fs, fsblk_t block,
			       struct free_ex *ex)
{
	fsblk_t rel = block - fs->g.first_data_block;

	ex->group = (uint32_t)(rel / fs->g.blocks_per_group);
	ex->start = (uint32_t)(rel % fs->g.blocks_per_group);
}

int mb_avg_fragment_size_order(const struct mb_state *mb, uint32_t len);
void mb_group_changed(const struct fs_state *fs, uint32_t group);
/* The buddy's generation for @group, on none of the lists yet;
 * @all_free: its bitmap is all zero, and need not be read. */
void ext4_mb_init_group(const struct fs_state *fs, uint32_t group,
			int all_free);
uint32_t mb_find_extent(const struct fs_state *fs, uint32_t group,
			uint32_t block, uint32_t needed, struct free_ex *ex);
void mb_mark_used(struct fs_state *fs, const struct free_ex *ex);
/* What mb_mark_used would return for @ex (remaining length and order
 * where it first splits a chunk, 0 if it splits none), for --trace. */
uint32_t mb_mark_used_ret(const struct fs_state *fs, const struct free_ex *ex);
void mb_free_blocks(struct fs_state *fs, uint32_t group, uint32_t start,
		    uint32_t len);

/* ---- the scans (mballoc_scan.c) ------------------------------------ */

/* ext4_mb_regular_allocator: the goal, then the groups by criteria. */
errcode_t ext4_mb_regular_allocator(struct alloc_ctx *ac);

/* ---- preallocations (mballoc_prealloc.c) ---------------------------- */

int ext4_mb_use_preallocated(struct alloc_ctx *ac);
errcode_t ext4_mb_new_preallocation(struct alloc_ctx *ac);
uint32_t ext4_mb_discard_preallocations(struct fs_state *fs, uint32_t needed,
					uint64_t *seq);
errcode_t ext4_mb_release_context(struct alloc_ctx *ac);

#endif
