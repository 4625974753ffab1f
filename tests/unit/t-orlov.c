// SPDX-License-Identifier: GPL-2.0-or-later
/* find_group_orlov / find_group_other / find_group_dir and the inode and
 * debt bookkeeping, on hand-built group states. */
#include "config.h"

#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/ext2/ialloc.h"
#include "model/ext4/ialloc.h"
#include "lib/orlov_err.h"
#include "tap.h"

/* 8 groups of 256 inodes and 8192 blocks, like a 64 MiB 1k-block image. */
static void mkstate(struct fs_state *fs, uint32_t ngroups)
{
	struct fs_geom g = {
		.ngroups = ngroups, .inodes_per_group = 256,
		.blocks_per_group = 8192, .inodes_count = 256 * ngroups,
		.blocks_count = 8192 * ngroups + 1, .first_data_block = 1,
		.first_ino = 11, .block_size = 1024, .inode_size = 128,
	};
	uint32_t i;

	if (fs->free_inodes)
		fs_state_free(fs);	/* a test may start over */
	fs_state_init(fs, &g);
	for (i = 0; i < ngroups; i++) {
		fs->free_inodes[i] = 200;
		fs->free_blocks[i] = 6000;
		fs->used_dirs[i] = 10;
	}
	fs_state_sum(fs);
}

static void test_topdir(void)
{
	struct fs_state fs = { .colour = 0 };
	struct orlov_figures f;
	int g;

	mkstate(&fs, 8);
	fs.used_dirs[5] = 2;
	fs.used_dirs[6] = 2;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 0, 1, 3, &f);
	is_int(g, 5, "top-level: fewest directories wins, first met from the start group");
	is_int(f.branch, BR_ORLOV_TOP, "top-level branch");
	is_int(f.pgroup, 3, "top-level pgroup is the start group");
	is_int(f.avefreei, 200, "avefreei");
	is_int(f.avefreeb, 6000, "avefreeb");
	is_int(f.max_dirs, -1, "top-level computes no max_dirs");
	g = find_group_orlov(&fs, 0, 1, 6, &f);
	is_int(g, 6, "top-level: a tie goes to the group met first from the start");

	/* Group 5 has the fewest dirs but too few free blocks. */
	fs.free_blocks[5] = 100;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 0, 1, 0, &f);
	is_int(g, 6, "top-level: below-average free blocks disqualify");
	fs.free_inodes[6] = 10;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 0, 1, 0, &f);
	is_int(g, 0, "top-level: below-average free inodes disqualify");

	/* No group is above average in both: fallback from the start group. */
	mkstate(&fs, 4);
	fs.free_inodes[0] = 250; fs.free_blocks[0] = 100;
	fs.free_inodes[1] = 50; fs.free_blocks[1] = 8000;
	fs.free_inodes[2] = 50; fs.free_blocks[2] = 8000;
	fs.free_inodes[3] = 250; fs.free_blocks[3] = 100;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 0, 1, 1, &f);
	is_int(f.branch, BR_ORLOV_FALLBACK, "top-level falls back when nothing qualifies");
	is_int(g, 3, "fallback: first group from the start with >= avefreei inodes");
	fs_state_free(&fs);
}

static void test_near(void)
{
	struct fs_state fs = { .colour = 0 };
	struct orlov_figures f;
	int g;

	mkstate(&fs, 8);
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(g, 2, "near: the parent's group when it passes every limit");
	is_int(f.branch, BR_ORLOV_NEAR, "near branch");
	/* ndirs 80: max_dirs = 80/8 + 256/16 = 26; min_inodes = 200 - 64;
	 * min_blocks = 6000 - 2048; blocks_per_dir = (65537-48000)/80 = 219,
	 * so max_debt = 8192/256 = 32, capped to 256/64 = 4. */
	is_int(f.max_dirs, 26, "max_dirs = ndirs/ngroups + ipg/16");
	is_int(f.min_inodes, 136, "min_inodes = avefreei - ipg/4");
	is_int(f.min_blocks, 3952, "min_blocks = avefreeb - bpg/4");
	is_int(f.max_debt, 4, "max_debt capped by ipg/INODE_COST");

	fs.debts[2] = 4;
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(g, 3, "near: a group at max_debt is skipped");
	fs.debts[2] = 3;
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(g, 2, "near: one below max_debt is fine");

	fs.used_dirs[2] = 40;	/* max_dirs becomes 110/8 + 16 = 29 */
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(g, 3, "near: a group at max_dirs is skipped");
	fs.used_dirs[2] = 10;

	fs.free_inodes[2] = 100;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(f.min_inodes, 123, "min_inodes follows the average");
	is_int(g, 3, "near: below min_inodes is skipped");
	fs.free_inodes[2] = 200;

	fs.free_blocks[2] = 3000;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 2, 0, 0, &f);
	is_int(g, 3, "near: below min_blocks is skipped");

	fs.free_blocks[7] = 3000;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 7, 0, 0, &f);
	is_int(g, 0, "near: the search wraps around past the last group");

	/* Every group at max_debt: fallback, parent group first. */
	mkstate(&fs, 4);
	for (g = 0; g < 4; g++)
		fs.debts[g] = 255;
	fs.free_inodes[1] = 100;
	fs_state_sum(&fs);
	g = find_group_orlov(&fs, 1, 0, 0, &f);
	is_int(f.branch, BR_ORLOV_FALLBACK, "fallback when every group is at max_debt");
	is_int(g, 2, "fallback skips a parent group below avefreei");

	/* No free inode anywhere. */
	for (g = 0; g < 4; g++)
		fs.free_inodes[g] = 0;
	fs_state_sum(&fs);
	is_int(find_group_orlov(&fs, 1, 0, 0, &f), -1, "no free inode: -1");
	is_int(find_group_orlov(&fs, 1, 1, 0, &f), -1, "no free inode at top level: -1");

	/* Tiny filesystem: one free inode left, average rounds to 0. */
	mkstate(&fs, 4);
	for (g = 0; g < 4; g++) {
		fs.free_inodes[g] = g == 3 ? 1 : 0;
		fs.used_dirs[g] = 100;
	}
	fs.freei.count = 1;
	fs.freeb.count = 24000;
	fs.dirs.count = 400;
	g = find_group_orlov(&fs, 0, 0, 0, &f);
	is_int(g, 3, "the last free inode is found");
	is_int(f.min_inodes, -64, "min_inodes may go negative, as in the kernel");
	fs_state_free(&fs);
}

static void test_other_dir(void)
{
	struct fs_state fs = { .colour = 0 };
	struct orlov_figures f;
	int g;

	mkstate(&fs, 8);
	g = find_group_other(&fs, 4, 1234, &f);
	is_int(g, 4, "other: the parent's group");
	is_int(f.branch, BR_OTHER_PARENT, "other-parent branch");
	fs.free_blocks[4] = 0;
	/* start (4 + 1234) % 8 = 6; probes 7, 1, 5 */
	fs.free_inodes[7] = 0;
	g = find_group_other(&fs, 4, 1234, &f);
	is_int(g, 1, "other: quadratic probe seeded by the parent's inode");
	is_int(f.branch, BR_OTHER_HASH, "other-hash branch");
	for (g = 0; g < 8; g++)
		fs.free_blocks[g] = 0;
	fs.free_inodes[5] = 0;
	g = find_group_other(&fs, 4, 1234, &f);
	is_int(g, 6, "other: linear search from the group after the parent's");
	is_int(f.branch, BR_OTHER_LINEAR, "other-linear branch");

	mkstate(&fs, 8);
	fs.free_blocks[3] = 7000;
	fs.free_blocks[6] = 7500;
	fs.free_inodes[6] = 150;	/* below average: not a candidate */
	fs_state_sum(&fs);
	g = find_group_dir(&fs, 5, &f);
	is_int(g, 3, "dir (oldalloc): most free blocks among groups >= avefreei");
	is_int(f.branch, BR_DIR, "dir branch");
	is_int(f.pgroup, 5, "dir records the parent's group");
	fs_state_free(&fs);
}

static void test_take(void)
{
	struct fs_state fs = { .colour = 0 };
	uint32_t ino = 0, i;
	errcode_t err;

	mkstate(&fs, 2);
	for (i = 0; i < 11; i++)
		bit_set(group_ibitmap(&fs, 0), i);
	err = orlov_take_inode(&fs, 0, 1, &ino);
	is_int(err, 0, "take a directory inode");
	is_int(ino, 12, "first free inode after the reserved ones");
	is_int(fs.debts[0], 1, "a directory raises the group's debt");
	is_int(fs.used_dirs[0], 11, "used_dirs counted");
	is_int(percpu_counter_sum(&fs.dirs), 21, "dirs counter");
	orlov_take_inode(&fs, 0, 0, &ino);
	is_int(fs.debts[0], 0, "a file lowers it");
	orlov_take_inode(&fs, 0, 0, &ino);
	is_int(fs.debts[0], 0, "never below zero");
	fs.debts[1] = 255;
	orlov_take_inode(&fs, 1, 1, &ino);
	is_int(fs.debts[1], 255, "never above 255");
	is_int(ino, 257, "group 1 starts at inode 257");
	memset(group_ibitmap(&fs, 0), 0xff, fs.ibytes_per_group);
	orlov_take_inode(&fs, 0, 0, &ino);
	is_int(ino, 258, "a full group moves on to the next");
	fs_state_free(&fs);
}

static void test_hash(void)
{
	static const char *names[] = { "usr", "home", "a", "lost+found",
		"a-name-longer-than-thirty-two-bytes-for-two-rounds",
		"\xe2\x82\xac-signed-bytes" };
	uint32_t seed[4] = { 0x12345678, 0x9abcdef0, 0x0fedcba9, 0x87654321 };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ext2_dirhash_t h = 0, minor;
		int len = (int)strlen(names[i]);

		ext2fs_dirhash(EXT2_HASH_HALF_MD4, names[i], len, seed, &h, &minor);
		is_int(dirhash_half_md4(seed, names[i], len), h,
		       "half-MD4 agrees with libext2fs for \"%s\"", names[i]);
		ext2fs_dirhash(EXT2_HASH_HALF_MD4, names[i], len, NULL, &h, &minor);
		is_int(dirhash_half_md4(NULL, names[i], len), h,
		       "half-MD4 with the default seed for \"%s\"", names[i]);
	}
}

/* lib/percpu_counter.c with one writer on one CPU, and what the lag does
 * to find_group_orlov. */
static void test_percpu(void)
{
	struct percpu_counter c = { .count = 1000, .pcpu = 0, .batch = 32 };
	struct fs_state fs = { .colour = 0 };
	struct orlov_figures f;
	uint32_t ino;
	int i;

	is_int(percpu_batch_for(CPUS_UP), 0, "uniprocessor: no batch");
	is_int(percpu_batch_for(1), 32, "1 CPU: batch 32");
	is_int(percpu_batch_for(16), 32, "16 CPUs: batch 32");
	is_int(percpu_batch_for(64), 128, "64 CPUs: batch 2 * 64");

	for (i = 0; i < 31; i++)
		percpu_counter_add(&c, -1);
	is_int(percpu_counter_read_positive(&c), 1000, "31 decrements stay on the CPU");
	is_int(percpu_counter_sum(&c), 969, "the exact sum has them");
	percpu_counter_add(&c, -1);
	is_int(c.count, 968, "the 32nd folds them all");
	is_int(c.pcpu, 0, "and empties the CPU's share");
	percpu_counter_add(&c, 20);
	percpu_counter_add(&c, -5);
	is_int(c.count, 968, "+20 -5 stays below the batch");
	percpu_counter_add(&c, 17);
	is_int(c.count, 1000, "+17 reaches 32 and folds");
	percpu_counter_add(&c, -40);
	is_int(c.count, 960, "one add larger than the batch folds at once");
	c.count = 10;
	percpu_counter_add(&c, -20);
	is_int(c.count, 10, "no fold below the batch");
	c.count = -3;
	is_int(percpu_counter_read_positive(&c), 0, "read_positive clamps at 0");

	c = (struct percpu_counter){ .count = 7, .batch = 0 };
	percpu_counter_add(&c, -1);
	is_int(c.count, 6, "uniprocessor: every add is exact");

	/* Eight groups of 200 free inodes; the parent's group 1 is down
	 * to 141 after 59 new inodes.  Exact totals give avefreei 192 and
	 * min_inodes 128: group 1 qualifies.  With 32 per CPU the counter
	 * still says 1600 - 32 = 1568 (the last 27 unfolded), avefreei 196,
	 * min_inodes 132: group 1 still qualifies, the figures differ. */
	mkstate(&fs, 8);
	fs_state_set_cpus(&fs, 2);
	for (i = 0; i < 59; i++)
		orlov_take_inode(&fs, 1, 0, &ino);
	is_int(percpu_counter_read_positive(&fs.freei), 1568, "32 folded of 59");
	is_int(percpu_counter_sum(&fs.freei), 1541, "exact free inodes");
	is_int(find_group_orlov(&fs, 1, 0, 0, &f), 1, "SMP: the parent's group");
	is_int(f.avefreei, 196, "SMP: avefreei from the lagging counter");
	is_int(f.min_inodes, 132, "SMP: min_inodes from it");
	is_int(find_group_dir(&fs, 1, &f), 0, "find_group_dir: the exact sum");
	is_int(f.avefreei, 192, "find_group_dir averages the descriptors");

	/* The decision itself changes: group 1 with 130 free inodes passes
	 * min_inodes 1530 / 8 - 64 = 127 of the exact total, but not 131
	 * of a counter that has 31 allocations still on the writer's CPU. */
	fs.free_inodes[1] = 130;
	fs_state_sum(&fs);
	fs.freei.count += 31;
	fs.freei.pcpu = -31;
	is_int(find_group_orlov(&fs, 1, 0, 0, &f), 2,
	       "SMP: group 1 falls under min_inodes of the lagging total");
	fs_state_set_cpus(&fs, CPUS_UP);
	fs_state_sum(&fs);
	is_int(find_group_orlov(&fs, 1, 0, 0, &f), 1,
	       "exact totals keep the directory in its parent's group");
	fs_state_free(&fs);
}

/* fs/ext4/ialloc.c's find_group_orlov with flex_size 1 */
static void test_ext4(void)
{
	struct fs_state fs = { .colour = 0 };
	struct orlov_figures f;
	int g;

	/* Top level: the search starts at hash % ngroups, fewest dirs wins. */
	mkstate(&fs, 8);
	fs.used_dirs[5] = 2;
	fs.used_dirs[6] = 2;
	fs_state_sum(&fs);
	g = ext4_find_group_orlov(&fs, 0, EXT4_NO_LAST_ALLOC_GROUP, 1, 8 * 1000 + 6, &f);
	is_int(f.pgroup, 6, "ext4 top-level: starts at the name hash modulo the groups");
	is_int(g, 6, "ext4 top-level: a tie goes to the group met first");
	is_int(f.branch, BR_ORLOV_TOP, "ext4 top-level branch");
	is_int(f.max_debt, -1, "ext4 has no debts");

	/* Near: no debt limit, and the parent's last allocation group first. */
	mkstate(&fs, 8);
	for (g = 0; g < 8; g++)
		fs.debts[g] = 255;
	g = ext4_find_group_orlov(&fs, 2, EXT4_NO_LAST_ALLOC_GROUP, 0, 0, &f);
	is_int(g, 2, "ext4 near: debts do not matter");
	is_int(f.branch, BR_ORLOV_NEAR, "ext4 near branch");
	is_int(f.max_dirs, 26, "ext4 max_dirs = ndirs/ngroups + ipg/16");
	is_int(f.min_inodes, 136, "ext4 min_inodes = avefreei - ipg/4");
	is_int(f.min_blocks, 3952, "ext4 min_clusters = avefreec - cpg/4");
	g = ext4_find_group_orlov(&fs, 2, 5, 0, 0, &f);
	is_int(g, 5, "ext4 near: starts at i_last_alloc_group");
	is_int(f.pgroup, 5, "and records it as the search start");

	/* Small averages: min_inodes stays 1, min_clusters 0. */
	mkstate(&fs, 8);
	for (g = 0; g < 8; g++) {
		fs.free_inodes[g] = 10;
		fs.free_blocks[g] = 100;
	}
	fs.free_inodes[3] = 0;
	fs_state_sum(&fs);
	g = ext4_find_group_orlov(&fs, 3, EXT4_NO_LAST_ALLOC_GROUP, 0, 0, &f);
	is_int(f.min_inodes, 1, "ext4 min_inodes is at least 1");
	is_int(f.min_blocks, 0, "ext4 min_clusters is at least 0");
	is_int(g, 4, "ext4 near: a group without free inodes fails min_inodes");

	/* Fallback from the parent's own group, not the last allocation's. */
	mkstate(&fs, 4);
	/* min_inodes 175 - 64 fails group 1, max_dirs 140/4 + 16 groups 0
	 * and 3, min_clusters 4525 - 2048 group 2 */
	fs.free_inodes[1] = 100;
	fs.used_dirs[0] = fs.used_dirs[3] = 60;
	fs.free_blocks[2] = 100;
	fs_state_sum(&fs);
	g = ext4_find_group_orlov(&fs, 1, 3, 0, 0, &f);
	is_int(f.branch, BR_ORLOV_FALLBACK, "ext4 fallback when nothing qualifies");
	is_int(g, 2, "ext4 fallback: from the parent's group, skipping one below avefreei");
	for (g = 0; g < 4; g++)
		fs.free_inodes[g] = g == 0 ? 3 : 0;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 1, 3, 0, 0, &f), 0,
	       "ext4 fallback: the last free inodes are found (average 0)");
	for (g = 0; g < 4; g++)
		fs.free_inodes[g] = 0;
	fs_state_sum(&fs);
	is_int(ext4_find_group_orlov(&fs, 1, 3, 0, 0, &f), -1, "ext4: no free inode, -1");
	fs_state_free(&fs);
}

int main(void)
{
	test_ext4();
	test_percpu();
	test_topdir();
	test_near();
	test_other_dir();
	test_take();
	test_hash();
	return tap_done();
}
