// SPDX-License-Identifier: GPL-2.0-or-later
/* Block numbers past 2^32 (64bit images of more than 2^32 blocks):
 * mballoc's extents, goals and preallocations there, and an inode that is
 * not extent-mapped kept to the groups below 2^32 (s_blockfile_groups),
 * as ext4_get_allocation_groups_count and ext4_find_goal do it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/ext4/mballoc_int.h"
#include "model/ext4/ialloc.h"
#include "model/ext4/balloc.h"
#include "tap.h"
#include "fixture.h"

#define BPG 65536u
#define NGROUPS 65538u	/* 2^32 + 2 * 65536 + 1 blocks */
#define FIRST(g) (1 + (fsblk_t)(g) * BPG)

/* Every group empty: the model's bitmaps stay pages of zeros, so this
 * costs a few MiB, not the 512 MiB a flat bitmap of 2^32 bits takes. */
static void mkstate(struct fs_state *fs)
{
	fixture_state(fs, NGROUPS, 16, BPG, 0);
	fs->kver = KVER_REF_6_1;
	fs->g.extents = 1;
	if (mb_state_init(fs, 1))
		exit(99);
}

static void test_geometry(void)
{
	struct fs_state fs;
	struct free_ex ex;

	fixture_state(&fs, NGROUPS, 16, BPG, 0);
	is_int(fs.g.blocks_count, (fsblk_t)NGROUPS * BPG + 1,
	       "the block count past 2^32");
	is_int(group_first_block(&fs, 65536), 4294967297LL,
	       "group 65536 starts past 2^32");
	is_int(group_last_block(&fs, NGROUPS - 1), (fsblk_t)NGROUPS * BPG,
	       "the last group ends at the last block");
	block_to_ex(&fs, 4294967297LL + 77, &ex);
	tap_ok(ex.group == 65536 && ex.start == 77,
	       "a block past 2^32 to its group and offset");
	ex.group = 65537;
	ex.start = 5;
	is_int(ex_block(&fs, &ex), FIRST(65537) + 5, "and back");
	fs_state_free(&fs);
}

static void test_extent_mapped(void)
{
	struct fs_state fs;
	struct mb_inode mi = { .i_size = 0 };
	struct mb_request ar = { .len = 1, .goal = FIRST(65536) + 100 };
	uint64_t b = 0, c = 0;
	uint32_t got = 0;

	mkstate(&fs);
	is_int(ext4_mb_new_blocks_ar(&fs, &ar, &b, &got), 0,
	       "metadata with a goal past 2^32");
	is_int(b, FIRST(65536), "its group's first free block: past 2^32");
	tap_ok(bit_test(group_bbitmap(&fs, 65536), 0) &&
	       fs.free_blocks[65536] == BPG - 1,
	       "taken in that group's bitmap and count");

	ar.mi = &mi;
	ar.goal = FIRST(65537);
	ar.logical = 0;
	mi.i_size = 4096;
	is_int(ext4_mb_new_blocks_ar(&fs, &ar, &b, &got), 0, "file data there");
	is_int(b, FIRST(65537), "at the goal");
	/* the locality group's preallocation, used from the front */
	tap_ok(fs.mb->all.n == 1 && fs.mb->all.pa[0]->group_pa &&
	       fs.mb->all.pa[0]->pstart == FIRST(65537) + 1,
	       "a small file: the locality group's preallocation, past 2^32");
	is_int(fs.mb->all.pa[0]->lstart, (uint32_t)(FIRST(65537) + 1),
	       "whose pa_lstart (32 bits in the kernel) is the start cut");
	ar.logical = 1;
	mi.i_size = 4096 * 2;
	is_int(ext4_mb_new_blocks_ar(&fs, &ar, &c, &got), 0, "the next block");
	is_int(c, b + 1, "from that preallocation, contiguous");
	ext4_free_blocks(&fs, 0, b, 2);
	tap_ok(!bit_test(group_bbitmap(&fs, 65537), 0) &&
	       fs.free_blocks[65537] == BPG,
	       "freed past 2^32: the bitmap and count again");

	/* a big file: a stream request from where the last one ended
	 * (s_mb_last_group, here past 2^32), its own preallocation */
	fs.mb->last_group = 65536;
	fs.mb->last_start = 4096;
	ar.goal = FIRST(3);
	ar.logical = 0;
	mi.i_size = 1 << 20;
	is_int(ext4_mb_new_blocks_ar(&fs, &ar, &b, &got), 0, "a 1 MiB file");
	is_int(b, FIRST(65536) + 1024,
	       "in the stream's group past 2^32: its first free 1024-block chunk");
	tap_ok(mi.pas.n == 1 && mi.pas.pa[0]->pstart == b &&
	       mi.pas.pa[0]->len == 1024,
	       "its inode preallocation there, 1 MiB long");
	is_int(fs.mb->last_group, 65536, "the stream goes on in that group");
	is_int(fs.mb->last_start, 1024, "from the extent found");
	ext4_discard_preallocations(&fs, &mi);
	mb_inode_release(&mi);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static void test_indirect(void)
{
	struct fs_state fs;
	struct mb_request ar = {
		.len = 1, .goal = FIRST(65536) + 100, .indirect = 1,
	};
	uint64_t b = 0;
	uint32_t got = 0, b32 = 0;

	mkstate(&fs);
	is_int(ext4_mb_new_blocks_ar(&fs, &ar, &b, &got), 0,
	       "an inode without extents, goal past 2^32");
	is_int(b, 1, "scanned from group 0: below 2^32");
	is_int(ext4_goal_block(&fs, 65536, 1, 0, 0), 1,
	       "ext4_find_goal cuts the goal of group 65536 to 32 bits");
	is_int(ext4_mb_new_block(&fs, NULL, 0, 0, 65535u * BPG + 1, &b32), 0,
	       "a goal in the last group below 2^32");
	is_int(b32, 2, "outside s_blockfile_groups: the scan starts at 0");
	mb_state_free(&fs);
	fs_state_free(&fs);
}

int main(void)
{
	test_geometry();
	test_extent_mapped();
	test_indirect();
	return tap_done();
}
