// SPDX-License-Identifier: GPL-2.0-or-later
/* mballoc of Linux 6.12 (from 6.12.77) and of 6.8 / 6.12.0-76 (6.5's
 * criteria, 6.1's lists) against 6.1's on the same states: the groups
 * scanned in turn before the optimize_scan lists and the lists' order,
 * CR_GOAL_LEN_FAST stepping over short free runs, CR_BEST_AVAIL_LEN's
 * trimmed goal, and --mb-optimize-scan (model/ext4/mballoc_scan.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/ext4/mballoc.h"
#include "tap.h"
#include "fixture.h"

#define K61 KVER(6, 1, 192)
#define K612 KVER(6, 12, 118)
#define K68 KVER(6, 8, 12)
#define K61276 KVER(6, 12, 76)

/* mkstate's rotational disk and the kernel's default mb_optimize_scan;
 * test_optimize_option changes them */
static int rotational = 1, optimize_scan = MB_OPTIMIZE_SCAN_DEFAULT;

/* @ngroups groups of 8192 blocks of 1 KiB, blocks 0..299 of each in use;
 * @shape marks more of them used before the buddy is loaded. */
static void mkstate(struct fs_state *fs, uint32_t ngroups, uint32_t kver,
		    void (*shape)(struct fs_state *))
{
	uint32_t g;

	fixture_state(fs, ngroups, 2048, 8192, 300);
	fs->kver = kver;
	if (shape)
		shape(fs);
	for (g = 0; g < ngroups; g++) {
		uint32_t b, used = 0;

		for (b = 0; b < 8192; b++)
			used += bit_test(group_bbitmap(fs, g), b) != 0;
		fs->free_blocks[g] = 8192 - used;
	}
	fs_state_sum(fs);
	if (mb_state_init_opt(fs, rotational, optimize_scan))
		exit(99);
}

static void done(struct fs_state *fs)
{
	mb_state_free(fs);
	fs_state_free(fs);
}

static uint32_t gblock(uint32_t group, uint32_t off)
{
	return 1 + group * 8192 + off;
}

static void use(struct fs_state *fs, uint32_t g, uint32_t from, uint32_t to)
{
	while (from < to)
		bit_set(group_bbitmap(fs, g), from++);
}

/* groups 0-3 full; group 10 free only in single blocks (its average
 * free run 1: the first average-fragment list); the others one run */
static void shape_linear(struct fs_state *fs)
{
	uint32_t g, b;

	for (g = 0; g < 4; g++)
		use(fs, g, 300, 8192);
	for (b = 300; b < 8192; b += 2)
		bit_set(group_bbitmap(fs, 10), b);
}

static uint32_t meta(struct fs_state *fs, uint32_t goal, uint32_t len)
{
	uint32_t b = 0, got;

	return ext4_mb_new_blocks(fs, NULL, 0, 0, goal, len, &b, &got) ? 0 : b;
}

static void test_linear_then_lists(void)
{
	struct fs_state fs = { 0 };

	mkstate(&fs, 16, K61, shape_linear);
	is_int(meta(&fs, gblock(0, 0), 1), gblock(4, 300),
	       "6.1, 16 groups: the goal's group and four more in turn, the "
	       "fifth (group 4) has room");
	done(&fs);
	mkstate(&fs, 16, K612, shape_linear);
	is_int(meta(&fs, gblock(0, 0), 1), gblock(10, 301),
	       "6.12: the goal's group and three more in turn, then the "
	       "average-fragment lists by group number from group 4: group "
	       "10 heads the first list");
	done(&fs);
	mkstate(&fs, 16, K68, shape_linear);
	is_int(meta(&fs, gblock(0, 0), 1), gblock(4, 300),
	       "6.8: as 6.1, the goal's group and four more in turn");
	done(&fs);
}

/* group 0: twelve single free blocks, then free runs of 16 at 1000 and of
 * 3 at 2000, and the group's second half: its average run passes 3 */
static void shape_short_runs(struct fs_state *fs)
{
	uint32_t b;

	use(fs, 0, 300, 8192);
	for (b = 301; b < 324; b += 2)
		bit_clear(group_bbitmap(fs, 0), b);
	for (b = 1000; b < 1016; b++)
		bit_clear(group_bbitmap(fs, 0), b);
	for (b = 2000; b < 2003; b++)
		bit_clear(group_bbitmap(fs, 0), b);
	for (b = 4096; b < 8192; b++)
		bit_clear(group_bbitmap(fs, 0), b);
}

static void test_skip_short(void)
{
	struct fs_state fs = { 0 };

	mkstate(&fs, 4, K61, shape_short_runs);
	is_int(meta(&fs, gblock(0, 0), 3), gblock(0, 1000),
	       "6.1: twelve one-block runs counted as found, the first run of "
	       "3 or more is taken past the tenth");
	done(&fs);
	mkstate(&fs, 4, K612, shape_short_runs);
	is_int(meta(&fs, gblock(0, 0), 3), gblock(0, 2000),
	       "6.12: CR_GOAL_LEN_FAST steps over runs shorter than 3, and "
	       "the run of exactly 3 ends the search");
	done(&fs);
	mkstate(&fs, 4, K68, shape_short_runs);
	is_int(meta(&fs, gblock(0, 0), 3), gblock(0, 2000),
	       "6.8: as 6.12, the short runs stepped over");
	done(&fs);
}

/* every group free in runs of 32 every 64 blocks from 320: no group has
 * a free chunk of 64 nor an average run of 64 */
static void shape_runs32(struct fs_state *fs)
{
	uint32_t g, b;

	for (g = 0; g < fs->g.ngroups; g++) {
		use(fs, g, 300, 320);
		for (b = 352; b < 8192; b += 64)
			use(fs, g, b, b + 32 < 8192 ? b + 32 : 8192);
	}
}

/* as shape_runs32, but group 0 has only its run at 320: 32 free blocks,
 * too few for criterion 2 or CR_GOAL_LEN_SLOW at a goal of 64 */
static void shape_runs32_g0(struct fs_state *fs)
{
	shape_runs32(fs);
	use(fs, 0, 352, 8192);
}

static void test_best_avail(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode f = { 0 };
	uint32_t b = 0;

	f.i_size = 64 * 1024;
	mkstate(&fs, 16, K61, shape_runs32);
	ext4_mb_new_block(&fs, &f, 0, 0, gblock(7, 0), &b);
	is_int(b, gblock(0, 320),
	       "6.1: a 64-block goal nowhere, criterion 2 measures 32-block "
	       "runs until 200 are found and takes the first (stream goal: "
	       "group 0)");
	is_int(f.pas.n == 1 ? f.pas.pa[0]->len : 0, 32,
	       "its preallocation: the 32 blocks");
	mb_inode_release(&f);
	done(&fs);

	f.i_size = 64 * 1024;
	mkstate(&fs, 16, K612, shape_runs32);
	ext4_mb_new_block(&fs, &f, 0, 0, gblock(7, 0), &b);
	is_int(b, gblock(4, 320),
	       "6.12: CR_BEST_AVAIL_LEN trims the goal to 32 and takes the "
	       "first group of that list after the four tried in turn");
	is_int(f.pas.n == 1 ? f.pas.pa[0]->len : 0, 32,
	       "its preallocation: the 32 blocks of the trimmed goal");
	is_int(f.pas.n == 1 ? f.pas.pa[0]->lstart : 99, 0,
	       "placed at the start of the untrimmed goal, which covers the "
	       "request");
	mb_inode_release(&f);
	done(&fs);

	f.i_size = 64 * 1024;
	mkstate(&fs, 16, K61276, shape_runs32);
	fs.g.extents = 1;
	b = ext_new_blocks(&fs, &f, gblock(7, 0), 1);
	is_int(b, gblock(0, 320),
	       "6.12.76: CR_BEST_AVAIL_LEN trims the goal to 32 and takes the "
	       "head of that list, which groups joined in order: group 0");
	is_int(f.pas.n == 1 ? f.pas.pa[0]->len : 0, 32,
	       "its preallocation: the 32 blocks of the trimmed goal");
	mb_inode_release(&f);
	done(&fs);

	f.i_size = 64 * 1024;
	mkstate(&fs, 16, K68, shape_runs32_g0);
	/* 6.8 keeps indirect-mapped files off the lists */
	fs.g.extents = 1;
	b = ext_new_blocks(&fs, &f, gblock(7, 0), 1);
	is_int(b, gblock(0, 320),
	       "6.8: group 0's one run of 32 heads the trimmed goal's list "
	       "(CR_GOAL_LEN_SLOW would pass it by for group 1)");
	mb_inode_release(&f);
	done(&fs);
}

/* A small file's locality-group request (512 blocks) where no group has
 * 512 free in a row: 6.12 resets the goal after CR_BEST_AVAIL_LEN to
 * ac_orig_goal_len, which normalization set only for inode requests: the
 * request's own length. */
static void test_group_request(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode a = { 0 }, c = { 0 };
	uint32_t b = 0;

	mkstate(&fs, 16, K61, shape_runs32);
	ext4_mb_new_block(&fs, &a, 0, 0, gblock(7, 0), &b);
	ext4_mb_new_block(&fs, &c, 0, 0, gblock(9, 0), &b);
	is_int(b, gblock(7, 321),
	       "6.1: the first small file got the best run found (32 blocks) "
	       "as the locality group's preallocation, the second continues it");
	mb_inode_release(&a);
	mb_inode_release(&c);
	done(&fs);
	mkstate(&fs, 16, K612, shape_runs32);
	ext4_mb_new_block(&fs, &a, 0, 0, gblock(7, 0), &b);
	ext4_mb_new_block(&fs, &c, 0, 0, gblock(9, 0), &b);
	is_int(b, gblock(9, 320),
	       "6.12: each takes one block in its goal's group at "
	       "CR_GOAL_LEN_SLOW, no preallocation");
	mb_inode_release(&a);
	mb_inode_release(&c);
	done(&fs);
}

/* A metadata block of an extent-mapped image where groups 0-3 are full
 * and group 10 is first on the average-fragment lists, on a disk that is
 * not rotational (no group in turn before the lists) */
static uint32_t pick(uint32_t ngroups, uint32_t kver, int opt)
{
	struct fs_state fs = { 0 };
	uint32_t b;

	rotational = 0;
	optimize_scan = opt;
	mkstate(&fs, ngroups, kver, shape_linear);
	/* 6.8 keeps indirect-mapped files off the lists */
	fs.g.extents = 1;
	b = ext_new_blocks(&fs, NULL, gblock(0, 0), 1);
	done(&fs);
	rotational = 1;
	optimize_scan = MB_OPTIMIZE_SCAN_DEFAULT;
	return b;
}

static void test_optimize_option(void)
{
	static const uint32_t kv[] = { K61, K68, K612 };
	static const char *const name[] = { "6.1", "6.8", "6.12" };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		is_int(pick(16, kv[i], MB_OPTIMIZE_SCAN_DEFAULT),
		       gblock(10, 301), "%s, 16 groups, not rotational: the "
		       "lists at once, group 10", name[i]);
		is_int(pick(16, kv[i], MB_OPTIMIZE_SCAN_OFF), gblock(4, 300),
		       "%s, mb_optimize_scan=0: the groups in turn", name[i]);
		is_int(pick(12, kv[i], MB_OPTIMIZE_SCAN_DEFAULT),
		       gblock(4, 300), "%s, 12 groups: in turn", name[i]);
		is_int(pick(12, kv[i], MB_OPTIMIZE_SCAN_ON), gblock(10, 301),
		       "%s, 12 groups, mb_optimize_scan=1: the lists",
		       name[i]);
	}
}

int main(void)
{
	test_linear_then_lists();
	test_skip_short();
	test_best_avail();
	test_group_request();
	test_optimize_option();
	return tap_done();
}
