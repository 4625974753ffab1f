// SPDX-License-Identifier: GPL-2.0-or-later
/* The mballoc model for extent-mapped files: what 6.1's
 * ext4_mb_normalize_request does with the request's neighbours (the
 * range cut at them, the goal next to them with TRY_GOAL, the left one
 * winning), ext4_mb_find_by_goal, EXT_MAX_BLOCKS, the 64-bit goal, a tree
 * block's TRY_GOAL, and all of it through ext_mb_ops.  Every expected
 * block is worked out from fs/ext4/mballoc.c in the comments. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/mballoc.h"
#include "model/ext4/extents.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"
#include "ext_fixture.h"

/* 4 groups of 8192 blocks of 1 KiB, blocks 0..299 of each in use (as in
 * t-mballoc): a free run [300, 8192) is cut into the buddy's chunks 4@300,
 * 16@304, 64@320, 128@384, 512@512, 1024@1024 and 2048@2048, @4096,
 * @6144.  hold() marks more blocks in use before mb_go() loads the
 * buddy. */
static void mkstate(struct fs_state *fs)
{
	memset(fs, 0, sizeof(*fs));
	fixture_state(fs, 4, 2048, 8192, 300);
}

static void hold(struct fs_state *fs, uint32_t group, uint32_t start,
		 uint32_t len)
{
	uint32_t i;

	for (i = start; i < start + len; i++)
		bit_set(group_bbitmap(fs, group), i);
	fs->free_blocks[group] -= len;
}

static void mb_go(struct fs_state *fs)
{
	fs_state_sum(fs);
	if (mb_state_init(fs, 1))
		exit(99);
}

static void done(struct fs_state *fs, struct mb_inode *mi)
{
	if (mi)
		mb_inode_release(mi);
	mb_state_free(fs);
	fs_state_free(fs);
}

static uint64_t gblock(uint32_t group, uint32_t off)
{
	return 1 + (uint64_t)group * 8192 + off;
}

/* One data block of an open regular file of @isize bytes at @logical. */
static uint64_t data1(struct fs_state *fs, struct mb_inode *mi,
		      uint64_t isize, struct mb_request *ar)
{
	uint64_t b = 0;
	uint32_t got = 0;

	mi->i_size = isize;
	ar->mi = mi;
	ar->len = 1;
	return ext4_mb_new_blocks_ar(fs, ar, &b, &got) || got != 1 ? 0 : b;
}

/*
 * Block 40 of a 64 KiB file whose blocks 0-39 are at 1000-1039 of group 2.
 * Stream allocation (64 blocks > s_mb_stream_request 16); the range is
 * 64 KiB from 0, cut at the left neighbour to [40, 64): 24 blocks, and
 * lleft + 1 == start puts the goal at pleft + 1 = 1040 with TRY_GOAL.
 * mb_find_extent(1040, 24) gives 16@1040 + 32@1056 = 48 >= 24: found, 24
 * used, an inode preallocation [40, 64) at 1040.  Without the neighbours
 * the range is [0, 64), order 6, the stream goal's group 0: 64@320 and
 * block 40 at 360.
 */
static void test_merge_left(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 40, .goal = gblock(2, 1040),
				 .lleft = 39, .pleft = gblock(2, 1039) };

	mkstate(&fs);
	hold(&fs, 2, 1000, 40);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 64 * 1024, &ar), gblock(2, 1040),
	       "next to the left neighbour: the goal itself (TRY_GOAL), "
	       "not the stream goal's group");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->lstart == 40 &&
	       mi.pas.pa[0]->len == 24 &&
	       mi.pas.pa[0]->pstart == gblock(2, 1040),
	       "the preallocation covers [40, 64): 64 KiB less the blocks "
	       "left of the hole");
	is_int(fs.mb->last_group, 2, "the stream goal follows the find");
	is_int(fs.mb->last_start, 1040, "to its first block");
	done(&fs, &mi);
}

/*
 * Block 10 of a 20 KiB file whose block 20 on is at 3000 of group 2.  The
 * range, 32 KiB from 0, ends at lright: [0, 20), and lright == start +
 * size puts the goal at pright - 20 = 2980 with TRY_GOAL.  The free run
 * [2048, 3000) ends in 16@2976 and 8@2992: mb_find_extent(2980, 20) = 12
 * + 8 = 20, found; block 10 is at 2990, the file's last free block before
 * 3000.  Without the neighbours: 32 blocks, order 5, group 0 has no
 * 32-chunk and takes 64@320: block 10 at 330.
 */
static void test_merge_right(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 10, .goal = gblock(2, 2990),
				 .lright = 20, .pright = gblock(2, 3000) };

	mkstate(&fs);
	hold(&fs, 2, 3000, 10);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 20 * 1024, &ar), gblock(2, 2990),
	       "before the right neighbour: the range ends where it starts");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->lstart == 0 &&
	       mi.pas.pa[0]->len == 20,
	       "the preallocation is [0, 20): 32 KiB cut at the right "
	       "neighbour");
	done(&fs, &mi);
}

/*
 * Both neighbours against the range (blocks 0-5 at 1000, 20 on at 3000):
 * [6, 20), 14 blocks.  The right goal (3000 - 14) is set first, then the
 * left one (1006) replaces it: 2@1006 + 16@1008 >= 14, block 10 at 1010.
 */
static void test_left_wins(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 10, .goal = gblock(2, 1010),
				 .lleft = 5, .pleft = gblock(2, 1005),
				 .lright = 20, .pright = gblock(2, 3000) };

	mkstate(&fs);
	hold(&fs, 2, 1000, 6);
	hold(&fs, 2, 3000, 10);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 20 * 1024, &ar), gblock(2, 1010),
	       "two neighbours: the left one's goal wins");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->lstart == 6 &&
	       mi.pas.pa[0]->len == 14, "the range between them: [6, 20)");
	done(&fs, &mi);
}

/*
 * The block after the left neighbour is in use (1040-1044): TRY_GOAL
 * finds nothing there, and the scan starts from the stream goal (group
 * 0), not from the goal's group.  24 blocks at criterion 1: group 0's
 * first free extent, 4 + 16 + 64 from 300, is the best fit found
 * (extents of 128 and more are not smaller), so 24 at 300.
 */
static void test_goal_taken(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 40, .goal = gblock(2, 1040),
				 .lleft = 39, .pleft = gblock(2, 1039) };

	mkstate(&fs);
	hold(&fs, 2, 1000, 45);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 64 * 1024, &ar), gblock(0, 300),
	       "the goal block in use: the stream scan, for the 24 blocks "
	       "the neighbour left");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->len == 24,
	       "the cut range stays cut");
	done(&fs, &mi);
}

/*
 * A small file (5 blocks, under s_mb_stream_request) goes to the
 * locality group: ext4_mb_normalize_request returns before the
 * neighbours, so no TRY_GOAL (which would find 512 free from 3004); the
 * 512-block group preallocation starts at the goal group's first
 * 512-chunk, 512@512.
 */
static void test_small_no_merge(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 4, .goal = gblock(2, 3004),
				 .lleft = 3, .pleft = gblock(2, 3003) };

	mkstate(&fs);
	hold(&fs, 2, 3000, 4);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 4 * 1024, &ar), gblock(2, 512),
	       "a small file's block: the locality group's, not next to its "
	       "neighbour");
	done(&fs, &mi);
}

/*
 * A block near the last logical block: with 1 KiB blocks max (2 << 10)
 * <= 2048, so any file over 1 MiB takes the 2 MiB range aligned down:
 * [0xfffff800, +2048), one past EXT_MAX_BLOCKS, cut to 2047.  Not a
 * power of two, so criterion 1: group 0's extents from 300 (3796) and
 * from 4096 (2048) fit, the smaller one wins; block 0xfffffff0 at 4096 +
 * 0x7f0.  Uncut, 2048 is order 11 and criterion 0 takes 2048@2048.
 */
static void test_ext_max_blocks(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request ar = { .logical = 0xfffffff0u, .goal = gblock(0, 0) };

	mkstate(&fs);
	mb_go(&fs);
	is_int(data1(&fs, &mi, 0, &ar), gblock(0, 4096 + 0x7f0),
	       "the range stops at EXT_MAX_BLOCKS");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->lstart == 0xfffff800u &&
	       mi.pas.pa[0]->len == 2047, "2047 blocks preallocated");
	done(&fs, &mi);
}

/* Neighbours the kernel would BUG on, or a goal next to one past the
 * end (no such group: ext4_mb_find_by_goal's -EFSCORRUPTED). */
static void test_corrupt(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct mb_request left = { .logical = 10, .goal = gblock(1, 0),
				   .lleft = 10, .pleft = gblock(1, 500) };
	struct mb_request right = { .logical = 10, .goal = gblock(1, 0),
				    .lright = 20, .pright = 1ULL << 33 };
	uint64_t b;
	uint32_t got;

	mkstate(&fs);
	mb_go(&fs);
	mi.i_size = 64 * 1024;
	left.mi = right.mi = &mi;
	left.len = right.len = 1;
	is_int(ext4_mb_new_blocks_ar(&fs, &left, &b, &got), ORLOV_ERR_CORRUPT,
	       "a left neighbour at the requested block is refused");
	is_int(ext4_mb_new_blocks_ar(&fs, &right, &b, &got), ORLOV_ERR_CORRUPT,
	       "a right neighbour past the end is refused");
	is_int(fs.free_blocks[0] + fs.free_blocks[1], 2 * (8192 - 300),
	       "and nothing was allocated");
	done(&fs, &mi);
}

/*
 * Tree blocks through ext_mb_ops: ext4_ext_grow_indepth's TRY_GOAL takes
 * the goal block itself (free, in 2048@2048 of group 2); without it the
 * scan takes the group's smallest chunk that ends the search, 4@300
 * (t-mballoc's metadata case).  A goal past 2^32 is past the end: the
 * first data block's group, as ext4_mb_initialize_context does.
 */
static void test_meta_and_ops(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct ext_mb m = { .fs = &fs, .mi = &mi };
	struct ext_alloc_ops o;
	struct ext_alloc_req dir = { .logical = 0, .len = 1,
				     .goal = 1ULL << 33 };
	uint64_t b = 0;
	uint32_t got = 0;

	mkstate(&fs);
	mb_go(&fs);
	ext_mb_ops(&m, &o);
	tap_ok(!o.meta(o.ctx, gblock(2, 4000), 1, &b) && b == gblock(2, 4000),
	       "a new root's block with TRY_GOAL: the goal itself");
	tap_ok(!o.meta(o.ctx, gblock(2, 4000), 0, &b) && b == gblock(2, 300),
	       "a leaf without it: the goal's group");
	tap_ok(!o.data(o.ctx, &dir, &b, &got) && b == gblock(0, 300) &&
	       got == 1, "a goal past 2^32 falls back to the first group");
	is_int(fs.mb->all.n, 0, "a directory's block is no data request: "
	       "no preallocation of any kind");
	done(&fs, &mi);
}

/*
 * End to end: blocks 0-9 of a 64 KiB file appended through
 * ext4_ext_map_blocks (an inode preallocation of 64 at 320 of group 0, the
 * stream goal after mount), the file closed (its preallocation
 * discarded: [330, 384) free again), then block 10.  Its left neighbour
 * 9 at 329 cuts the range to [10, 64) and puts the goal at 330: 2@330,
 * 4@332, 16@336 and 32@352 make 54, found, and the extent grows to 11
 * blocks.  Without the neighbours [0, 64) is order 6, group 0 has no
 * 64-chunk left, 128@384 is taken and block 10 lands at 394.
 */
static void test_through_ops(void)
{
	struct fs_state fs;
	struct mb_inode mi = { 0 };
	struct ext_mb m = { .fs = &fs, .mi = &mi };
	struct ext_alloc_ops o;
	struct ext_fs efs;
	struct ext_tree t;
	struct ext3_extent ex;
	uint32_t lb;
	int ok = 1;

	mkstate(&fs);
	mb_go(&fs);
	ext_mb_ops(&m, &o);
	ext_fs_of(&efs, &fs, 1);
	ext4_ext_tree_init(&t, 1024, 1, 1);
	mi.i_size = 64 * 1024;
	for (lb = 0; lb < 10; lb++)
		ok &= map1(&t, &efs, &o, lb) == gblock(0, 320 + lb);
	tap_ok(ok, "ten blocks from the preallocation at 320");
	ext4_discard_preallocations(&fs, &mi);
	is_int(map1(&t, &efs, &o, 10), gblock(0, 330),
	       "the next block after closing: next to its left neighbour");
	tap_ok(nth_extent(&t, 0, &ex) && ee_len(&ex) == 11 &&
	       !nth_extent(&t, 1, &ex), "one extent of 11 blocks");
	ext_tree_release(&t);
	ext4_discard_preallocations(&fs, &mi);
	done(&fs, &mi);
}

int main(void)
{
	test_merge_left();
	test_merge_right();
	test_left_wins();
	test_goal_taken();
	test_small_no_merge();
	test_ext_max_blocks();
	test_corrupt();
	test_meta_and_ops();
	test_through_ops();
	return tap_done();
}
