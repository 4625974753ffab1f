// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ext4 driver's placement with flex_bg: find_group_orlov and
 * find_group_other over flex groups, the flex groups' sums, the goal
 * block and mballoc's first-group rule.  Every expectation is worked out
 * by hand from Linux 6.1's fs/ext4 (the lines are named at each); the
 * states are 64 groups of 256 inodes and 8192 blocks of 1 KiB, flex_size
 * 16 (log 4: 4 flex groups) or 4 (log 2: 16 flex groups).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/ialloc.h"
#include "model/ext4/balloc.h"
#include "model/ialloc.h"
#include "model/ext4/mballoc.h"
#include "lib/orlov_err.h"
#include "tap.h"

#define IPG 256
#define BPG 8192

/* Every group: 200 free inodes, 6000 free blocks, 10 directories (the
 * bitmaps agree: the first ones in use). */
static void mkstate(struct fs_state *fs, uint32_t ngroups, uint32_t log)
{
	struct fs_geom g = {
		.ngroups = ngroups, .inodes_per_group = IPG,
		.blocks_per_group = BPG, .inodes_count = IPG * ngroups,
		.blocks_count = BPG * ngroups + 1, .first_data_block = 1,
		.first_ino = 11, .block_size = 1024, .inode_size = 128,
		.log_groups_per_flex = log,
	};
	uint32_t i, b;

	if (fs->free_inodes) {
		mb_state_free(fs);
		fs_state_free(fs);	/* a test may start over */
	}
	if (fs_state_init(fs, &g))
		exit(99);
	for (i = 0; i < ngroups; i++) {
		for (b = 0; b < BPG - 6000; b++)
			bit_set(group_bbitmap(fs, i), b);
		for (b = 0; b < IPG - 200; b++)
			bit_set(group_ibitmap(fs, i), b);
		fs->free_inodes[i] = 200;
		fs->free_blocks[i] = 6000;
		fs->used_dirs[i] = 10;
	}
	fs_state_sum(fs);
}

static void set_groups(struct fs_state *fs, uint32_t from, uint32_t to,
		       uint32_t *field, uint32_t v)
{
	uint32_t i;

	for (i = from; i <= to; i++)
		field[i] = v;
}

/* The flex groups' sums still what ext4_fill_flex_info would find. */
static int sums_agree(const struct fs_state *fs)
{
	uint32_t i, nflex = fs_flex_group(fs, fs->g.ngroups - 1) + 1;
	struct flex_groups want;

	for (i = 0; i < nflex; i++) {
		uint32_t g;

		memset(&want, 0, sizeof(want));
		for (g = 0; g < fs->g.ngroups; g++) {
			if (fs_flex_group(fs, g) != i)
				continue;
			want.free_inodes += (int32_t)fs->free_inodes[g];
			want.free_clusters += fs->free_blocks[g];
			want.used_dirs += (int32_t)fs->used_dirs[g];
		}
		if (memcmp(&want, &fs->flex[i], sizeof(want)))
			return 0;
	}
	return 1;
}

/* super.c 3182-3212, ext4_fill_flex_info: one entry per flex group (the
 * last may be short), each the sum of its groups' descriptors; a log
 * out of 1..31 means no flex groups. */
static void test_sums(void)
{
	struct fs_state fs = { 0 };

	mkstate(&fs, 66, 4);
	is_int(fs.flex[0].free_inodes, 16 * 200, "flex sums: free inodes");
	is_int(fs.flex[0].free_clusters, 16 * 6000, "flex sums: free clusters");
	is_int(fs.flex[0].used_dirs, 16 * 10, "flex sums: directories");
	is_int(fs.flex[4].free_inodes, 2 * 200,
	       "66 groups by 16: a fifth flex group of 2 groups");
	mkstate(&fs, 64, 0);
	is_int(fs.flex == NULL, 1, "no flex_bg: no sums");
	mkstate(&fs, 64, 32);
	is_int(fs.g.log_groups_per_flex, 0,
	       "a log past 31 is no flex_bg (ext4_fill_flex_info)");
	is_int(fs_flex_size(&fs), 1, "and the flex size is 1");
	fs_state_free(&fs);
}

/*
 * ialloc.c 443-446: Orlov counts in flex groups; 455-482: the top-level
 * spread starts at the name hash modulo the flex groups and takes the
 * fewest directories among those not below average; 499-508: inside it,
 * the first group with a free inode.
 */
static void test_topdir16(void)
{
	struct fs_state fs = { 0 };
	struct orlov_figures f;

	/* avefreei 12800 / 4 = 3200, avefreec 384000 / 4 = 96000; flex 2
	 * has 152 directories, the others 160. */
	mkstate(&fs, 64, 4);
	fs.used_dirs[40] = 2;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 0, EXT4_NO_LAST_ALLOC_GROUP, 1,
				     4 * 1000 + 1, &f), 32,
	       "flex 16 top-level: flex group 2 (fewest directories), its "
	       "first group");
	is_int(f.pgroup, 1, "the search starts at hash %% 4 flex groups");
	is_int(f.branch, BR_ORLOV_TOP, "top-level branch");
	is_int(f.avefreei, 3200, "avefreei per flex group");
	is_int(f.avefreeb, 96000, "avefreec per flex group");

	/* Group 32 full, 33 with twice as many: flex 2 still has 3200 free
	 * inodes, the average; the first group with a free inode is 33. */
	fs.free_inodes[32] = 0;
	fs.free_inodes[33] = 400;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 0, EXT4_NO_LAST_ALLOC_GROUP, 1,
				     4 * 1000 + 1, &f), 33,
	       "flex 16 top-level: the first group of the flex group with a "
	       "free inode");

	/* 455: best_ndir starts at inodes_per_group, unscaled: 20
	 * directories per group make 320 per flex group, never below 256,
	 * so no flex group wins; 542-556: the fallback over the 64 groups
	 * from the parent's group takes the first with avefreei = 12750 /
	 * 64 = 199 free inodes. */
	mkstate(&fs, 64, 4);
	set_groups(&fs, 0, 63, fs.used_dirs, 20);
	fs.free_inodes[0] = 150;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 0, EXT4_NO_LAST_ALLOC_GROUP, 1,
				     4 * 1000 + 1, &f), 1,
	       "flex 16 top-level: 256 directories per flex group make every "
	       "one lose; the fallback skips group 0 below the group average");
	is_int(f.branch, BR_ORLOV_FALLBACK, "fallback branch");
	fs_state_free(&fs);
}

/*
 * ialloc.c 512-518: max_dirs, min_inodes and min_clusters scaled by
 * flex_size; 524-528: from i_last_alloc_group's flex group; 530-539: the
 * first flex group within them; then its first group with a free inode.
 */
static void test_near16(void)
{
	struct fs_state fs = { 0 };
	struct orlov_figures f;

	mkstate(&fs, 64, 4);
	is_int(ext4_find_group_orlov(&fs, 20, EXT4_NO_LAST_ALLOC_GROUP, 0, 0,
				     &f), 16,
	       "flex 16 subdirectory: the parent's flex group 1, packed at "
	       "its first group (not the parent's group 20)");
	is_int(f.branch, BR_ORLOV_NEAR, "near branch");
	is_int(f.pgroup, 1, "the search starts at the parent's flex group");
	is_int(f.max_dirs, 640 / 4 + 256 * 16 / 16,
	       "max_dirs = ndirs / nflex + ipg * flex_size / 16");
	is_int(f.min_inodes, 3200 - 256 * 16 / 4,
	       "min_inodes = avefreei - ipg * flex_size / 4");
	is_int(f.min_blocks, 96000 - 8192 * 16 / 4,
	       "min_clusters = avefreec - cpg * flex_size / 4");
	is_int(ext4_find_group_orlov(&fs, 20, 50, 0, 0, &f), 48,
	       "flex 16 subdirectory: from i_last_alloc_group's flex group 3");
	is_int(f.pgroup, 3, "recorded as the search start");

	/* flex 1 with 2000 free blocks a group: 32000 against min_clusters
	 * 320000 / 4 - 32768 = 47232; flex 2 qualifies. */
	set_groups(&fs, 16, 31, fs.free_blocks, 2000);
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 20, EXT4_NO_LAST_ALLOC_GROUP, 0, 0,
				     &f), 32,
	       "flex 16: a flex group short of free clusters is passed over");
	is_int(f.min_blocks, 47232, "min_clusters of the new average");

	/* Every flex group fails one limit: 0 and 3 max_dirs (960 >= 2240 /
	 * 4 + 256 = 816), 1 min_inodes (800 < 10400 / 4 - 1024 = 1576), 2
	 * min_clusters (16000 < 304000 / 4 - 32768 = 43232).  542-556: the
	 * fallback from the parent's own group 20 (not i_last_alloc_group
	 * 5), avefreei 10400 / 64 = 162: groups 20-31 have 50. */
	mkstate(&fs, 64, 4);
	set_groups(&fs, 0, 15, fs.used_dirs, 60);
	set_groups(&fs, 48, 63, fs.used_dirs, 60);
	set_groups(&fs, 16, 31, fs.free_inodes, 50);
	set_groups(&fs, 32, 47, fs.free_blocks, 1000);
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 20, 5, 0, 0, &f), 32,
	       "flex 16: nothing qualifies, the fallback runs over groups from "
	       "the parent's own");
	is_int(f.branch, BR_ORLOV_FALLBACK, "fallback branch");
	is_int(f.max_dirs, 816, "max_dirs 816");
	is_int(f.min_inodes, 1576, "min_inodes 1576");
	is_int(f.min_blocks, 43232, "min_clusters 43232");
	fs_state_free(&fs);
}

/*
 * ialloc.c 586-613, find_group_other with flex_bg: the first group with a
 * free inode in the parent's flex group (free blocks not asked), then in
 * i_last_alloc_group's, then Orlov's near search (the mode is not a
 * directory: never the top-level spread).
 */
static void test_other16(void)
{
	struct fs_state fs = { 0 };
	struct ialloc_policy p = { 0 };
	struct ialloc_parent root = { .group = 0, .ino = 2, .topdir = 1,
				      .last_alloc_group = -1 };
	struct orlov_figures f;

	mkstate(&fs, 64, 4);
	is_int(ext4_find_group_other(&fs, 20, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 16,
	       "flex 16 file: the first group of the parent's flex group");
	is_int(f.branch, BR_OTHER_FLEX, "other-flex branch");
	set_groups(&fs, 16, 18, fs.free_inodes, 0);
	fs.free_blocks[19] = 0;
	fs_state_sum(&fs);
	is_int(ext4_find_group_other(&fs, 20, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 19,
	       "flex 16 file: the first with a free inode, free blocks or not");

	/* 597-601: the parent's flex group full, i_last_alloc_group's. */
	set_groups(&fs, 16, 31, fs.free_inodes, 0);
	fs_state_sum(&fs);
	is_int(ext4_find_group_other(&fs, 20, 5000, 40, &f), 32,
	       "flex 16 file: then i_last_alloc_group's flex group, its first "
	       "group");
	is_int(f.branch, BR_OTHER_LAST_ALLOC, "other-last-alloc branch");

	/* 607-612: no i_last_alloc_group, or one in the same full flex
	 * group: Orlov near from it (flex 1, then 2: min_inodes 9600 / 4 -
	 * 1024 fails flex 1's 0). */
	is_int(ext4_find_group_other(&fs, 20, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 32,
	       "flex 16 file: Orlov's near search for another flex group");
	is_int(f.branch, BR_ORLOV_NEAR, "through the near branch");
	is_int(ext4_find_group_other(&fs, 20, 5000, 25, &f), 32,
	       "flex 16 file: the retry in the same full flex group, then "
	       "Orlov");

	/* A file in the root: other, never the top-level spread, whatever
	 * the name's hash (1028-1031 call find_group_other). */
	mkstate(&fs, 64, 4);
	is_int(ext4_ialloc_find_group(&fs, &p, &root, 0, "f", 1, &f), 0,
	       "flex 16 file in the root: the root's flex group");
	is_int(f.branch, BR_OTHER_FLEX, "by find_group_other");
	set_groups(&fs, 0, 15, fs.free_inodes, 0);
	fs_state_sum(&fs);
	ext4_ialloc_find_group(&fs, &p, &root, 0, "f", 1, &f);
	is_int(f.branch, BR_ORLOV_NEAR,
	       "flex 16 file in a full root flex group: near, not top-level");

	/* 590-593: the last flex group is cut at the groups' count. */
	mkstate(&fs, 66, 4);
	set_groups(&fs, 64, 64, fs.free_inodes, 0);
	fs_state_sum(&fs);
	is_int(ext4_find_group_other(&fs, 65, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 65,
	       "flex 16, 66 groups: the short last flex group");
	fs_state_free(&fs);
}

/* The same rules with flex_size 4: 16 flex groups. */
static void test_flex4(void)
{
	struct fs_state fs = { 0 };
	struct orlov_figures f;

	/* flex 9 (groups 36-39) has 30 directories, the others 40; the
	 * spread starts at (16 * 7 + 5) % 16 = 5. */
	mkstate(&fs, 64, 2);
	fs.used_dirs[37] = 0;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 0, EXT4_NO_LAST_ALLOC_GROUP, 1,
				     16 * 7 + 5, &f), 36,
	       "flex 4 top-level: flex group 9, its first group");
	is_int(f.pgroup, 5, "from hash %% 16 flex groups");
	is_int(ext4_find_group_orlov(&fs, 22, EXT4_NO_LAST_ALLOC_GROUP, 0, 0,
				     &f), 20,
	       "flex 4 subdirectory: the parent's flex group 5, first group");
	is_int(f.max_dirs, 630 / 16 + 256 * 4 / 16,
	       "max_dirs = 630 / 16 + 64");
	is_int(f.min_inodes, 800 - 256, "min_inodes = 800 - 256");
	is_int(f.min_blocks, 24000 - 8192, "min_clusters = 24000 - 8192");
	is_int(ext4_find_group_orlov(&fs, 22, 61, 0, 0, &f), 60,
	       "flex 4 subdirectory: i_last_alloc_group's flex group 15");
	is_int(ext4_find_group_other(&fs, 22, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 20,
	       "flex 4 file: the parent's flex group, first group");
	set_groups(&fs, 20, 23, fs.free_inodes, 0);
	fs_state_sum(&fs);
	is_int(ext4_find_group_other(&fs, 22, 5000, 9, &f), 8,
	       "flex 4 file: i_last_alloc_group's flex group 2");

	/* Without flex_bg the same parent keeps its own group. */
	mkstate(&fs, 64, 0);
	is_int(ext4_find_group_orlov(&fs, 22, EXT4_NO_LAST_ALLOC_GROUP, 0, 0,
				     &f), 22, "no flex_bg: the parent's group");
	is_int(ext4_find_group_other(&fs, 22, 5000, EXT4_NO_LAST_ALLOC_GROUP,
				     &f), 22, "no flex_bg: file in the parent's group");
	is_int(f.branch, BR_OTHER_PARENT, "by ext2's find_group_other");
	mb_state_free(&fs);
	fs_state_free(&fs);
}

/* ialloc.c 1228-1238 and 1258-1262: a new inode takes one free inode
 * off its flex group and, a directory, adds one directory. */
static void test_take(void)
{
	struct fs_state fs = { 0 };
	uint32_t ino;

	mkstate(&fs, 64, 4);
	is_int(orlov_take_inode(&fs, 17, 1, &ino), 0, "take a directory");
	is_int(ino, 17 * IPG + 57, "in group 17");
	is_int(fs.flex[1].free_inodes, 3199, "flex 1 free inodes - 1");
	is_int(fs.flex[1].used_dirs, 161, "flex 1 directories + 1");
	orlov_take_inode(&fs, 17, 0, &ino);
	is_int(fs.flex[1].free_inodes, 3198, "a file: free inodes - 1");
	is_int(fs.flex[1].used_dirs, 161, "a file: no directory");
	is_int(sums_agree(&fs), 1, "the sums agree with the groups");
	fs_state_free(&fs);
}

/*
 * balloc.c 951-990, ext4_inode_to_goal_block: from flex_size 4 the flex
 * group's first group, the second for a regular file; the colour
 * unless delalloc.
 */
static void test_goal(void)
{
	struct fs_state fs = { 0 };
	const uint32_t fdb = 1;

	mkstate(&fs, 64, 4);
	is_int(ext4_goal_block(&fs, 20, 1, 1, 3), fdb + 17 * BPG,
	       "flex 16 file: group 17, delalloc: no colour");
	is_int(ext4_goal_block(&fs, 20, 1, 0, 3),
	       fdb + 17 * BPG + 3 * (BPG / 16), "flex 16 file: coloured");
	is_int(ext4_goal_block(&fs, 20, 0, 1, 3), fdb + 16 * BPG,
	       "flex 16 directory: the flex group's first group");
	mkstate(&fs, 64, 2);
	is_int(ext4_goal_block(&fs, 22, 1, 1, 0), fdb + 21 * BPG,
	       "flex 4 file: group 21");
	is_int(ext4_goal_block(&fs, 22, 0, 1, 0), fdb + 20 * BPG,
	       "flex 4 directory: group 20");
	mkstate(&fs, 64, 1);
	is_int(ext4_goal_block(&fs, 22, 1, 1, 0), fdb + 22 * BPG,
	       "flex 2: below EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME, the inode's group");
	mkstate(&fs, 64, 0);
	is_int(ext4_goal_block(&fs, 22, 1, 0, 5),
	       fdb + 22 * BPG + 5 * (BPG / 16), "no flex_bg: the inode's group");

	/* 65 groups, flex 16: a file of group 64 aims at group 65, past
	 * the end.  delalloc: bg_start 532481 = blocks_count, which
	 * mballoc takes as the first data block.  Colour 3: 988-989 wrap,
	 * 3 * ((532480 - 532481) / 16) = 3 * (2^60 - 1) cut to an int is
	 * -3, and the goal 532478 lies in group 64. */
	mkstate(&fs, 65, 4);
	is_int(ext4_goal_block(&fs, 64, 1, 1, 3), fdb,
	       "flex 16 file past the end, delalloc: the first data block");
	is_int(ext4_goal_block(&fs, 64, 1, 0, 3), 532478,
	       "flex 16 file past the end, colour 3: the wrapped colour");
	is_int(ext4_goal_block(&fs, 64, 0, 0, 3),
	       fdb + 64 * BPG + 3 * ((65 * BPG - (fdb + 64 * BPG)) / 16),
	       "flex 16 directory of the last group: its group");
	fs_state_free(&fs);
}

/*
 * mballoc.c 2489-2494: at criterion 0, data leaves the first group of a
 * flex group (flex_size >= 4); 3919-3925 and 6154-6159: allocations and
 * frees keep the flex sums.  8 groups with 300 blocks in use each, as in
 * t-mballoc: a small file's 512-block group preallocation is the first
 * 512-block buddy chunk, at 512.
 */
static void test_mballoc(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode a = { 0 };
	uint32_t blk = 0, got = 0, g;
	int64_t before;

	mkstate(&fs, 8, 2);
	for (g = 0; g < 8; g++) {
		uint32_t b;

		for (b = 0; b < BPG; b++)
			bit_clear(group_bbitmap(&fs, g), b);
		for (b = 0; b < 300; b++)
			bit_set(group_bbitmap(&fs, g), b);
		fs.free_blocks[g] = BPG - 300;
	}
	fs_state_sum(&fs);
	if (mb_state_init(&fs, 1))
		exit(99);
	before = fs.flex[1].free_clusters;
	ext4_mb_new_blocks(&fs, &a, 0, 0, 1 + 4 * BPG, 1, &blk, &got);
	is_int(blk, 1 + 5 * BPG + 512,
	       "flex 4 data aimed at group 4: cr 0 passes over the flex "
	       "group's first group to group 5");
	is_int(fs.flex[1].free_clusters, before - 1,
	       "flex 1 free clusters - 1");
	ext4_mb_new_blocks(&fs, NULL, 0, 0, 1 + 4 * BPG, 1, &blk, &got);
	is_int(blk, 1 + 4 * BPG + 300,
	       "a metadata block keeps group 4 (no HINT_DATA)");
	ext4_free_blocks(&fs, 0, blk, 1);
	is_int(fs.flex[1].free_clusters, before - 1,
	       "a free gives the flex group its cluster back");
	is_int(sums_agree(&fs), 1, "the sums agree with the groups");
	mb_inode_release(&a);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

int main(void)
{
	test_sums();
	test_topdir16();
	test_near16();
	test_other16();
	test_flex4();
	test_take();
	test_goal();
	test_mballoc();
	return tap_done();
}
