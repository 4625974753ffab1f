// SPDX-License-Identifier: GPL-2.0-or-later
/* ext2_new_blocks with and without reservation windows, the block map's
 * indirect-block order, and directory growth. */
#include "config.h"

#include <string.h>

#include "model/ext2/balloc.h"
#include "model/bmap.h"
#include "model/dir.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"

/* 4 groups of 1024 blocks of 1 KiB; blocks 1..100 of each group in use
 * (metadata), first data block 1. */
static void mkstate(struct fs_state *fs)
{
	if (fs->free_inodes)
		fs_state_free(fs);	/* a test may start over */
	fixture_state(fs, 4, 128, 1024, 100);
}

static uint32_t alloc(struct fs_state *fs, struct blk_alloc_info *bi,
		      uint32_t goal, unsigned long want, unsigned long *got)
{
	uint32_t first = 0;
	unsigned long n = want;
	errcode_t err = ext2_new_blocks(fs, 99, bi, goal, &n, &first);

	if (got)
		*got = n;
	return err ? 0 : first;
}

static void test_plain(void)
{
	struct fs_state fs = { .colour = 0 };
	unsigned long got;

	mkstate(&fs);
	is_int(alloc(&fs, NULL, 200, 1, NULL), 200, "free goal is taken");
	is_int(alloc(&fs, NULL, 200, 1, NULL), 201, "used goal: next free bit after it");
	is_int(fs.free_blocks[0], 922, "group counter follows");
	is_int(percpu_counter_sum(&fs.freeb), 924 * 4 - 2, "filesystem counter follows");
	is_int(alloc(&fs, NULL, 200, 4, &got), 202, "a run starts at the first free bit");
	is_int(got, 4, "and takes all it can");
	bit_set(group_bbitmap(&fs, 0), 207 - 1);	/* block 207 */
	alloc(&fs, NULL, 205, 5, &got);
	is_int(got, 1, "a run stops at the next used block");
	/* Goal 0 of group 1 is in use (metadata): find_next_usable_block then
	 * backs up over free blocks: none here, blocks 100.. are the first. */
	is_int(alloc(&fs, NULL, 1025, 1, NULL), 1125, "goal in metadata: first free of the group");
	/* Bad goal: the first data block stands in. */
	is_int(alloc(&fs, NULL, 999999, 1, NULL), 101, "goal past the end: first free from the first data block");
	fs_state_free(&fs);
}

static void test_backup(void)
{
	struct fs_state fs = { .colour = 0 };
	uint8_t *map;
	uint32_t b;

	mkstate(&fs);
	/* A used goal with no window: linear scan forward from the goal. */
	map = group_bbitmap(&fs, 2);
	for (b = 100; b < 297; b++)
		bit_set(map, b);
	is_int(alloc(&fs, NULL, 2049 + 150, 1, NULL), 2049 + 297,
	       "used goal: the first free block after it");

	/* Goal group full: the next group is searched with no goal, for a
	 * wholly free byte, then backing up over up to 7 free blocks. */
	memset(map, 0xff, fs.bytes_per_group);
	fs.free_blocks[2] = 0;
	map = group_bbitmap(&fs, 3);
	for (b = 100; b < 505; b++)
		bit_set(map, b);
	fs_state_sum(&fs);
	is_int(alloc(&fs, NULL, 2049 + 150, 1, NULL), 3073 + 505,
	       "no goal: free byte at 512, backed up to 505");
	fs_state_free(&fs);
}

static void test_reservation(void)
{
	struct fs_state fs = { .colour = 0 };
	struct blk_alloc_info a, b;
	uint32_t blk, i;

	mkstate(&fs);
	ext2_init_block_alloc_info(&a);
	ext2_init_block_alloc_info(&b);
	blk = alloc(&fs, &a, 300, 1, NULL);
	is_int(blk, 300, "first block of a file at its goal");
	is_int(a.rsv.start, 300, "window opens at the goal");
	is_int(a.rsv.end, 307, "default window of 8 blocks");
	is_int(fs.rsv.n, 2, "window is in the filesystem's set (with the head)");
	/* Another open file asking for the same goal skips the window. */
	blk = alloc(&fs, &b, 300, 1, NULL);
	is_int(blk, 308, "a second writer's window starts after the first's");
	for (i = 1; i < 8; i++)
		alloc(&fs, &a, 300 + i, 1, NULL);
	is_int(a.rsv.alloc_hit, 8, "all 8 blocks of the window used");
	blk = alloc(&fs, &a, 308, 1, NULL);
	is_int(a.rsv.goal_size, 16, "a window more than half used doubles");
	is_int(blk, 316, "the new window lies past the other writer's");
	ext2_discard_reservation(&fs, &b);
	is_int(b.rsv.end, 0, "closing a file drops its window");
	is_int(b.rsv.goal_size, 8, "but keeps its size");
	ext2_discard_reservation(&fs, &a);
	is_int(fs.rsv.n, 1, "only the head remains");

	/* A group with no more free blocks than half a window is skipped. */
	mkstate(&fs);
	fs.free_blocks[1] = 4;
	fs_state_sum(&fs);
	ext2_init_block_alloc_info(&a);
	memset(group_bbitmap(&fs, 0), 0xff, fs.bytes_per_group);
	fs.free_blocks[0] = 0;
	fs_state_sum(&fs);
	blk = alloc(&fs, &a, 10, 1, NULL);
	is_int(blk, 2049 + 100, "groups with <= window/2 free are skipped");
	ext2_discard_reservation(&fs, &a);
	fs_state_free(&fs);
}

static void test_full(void)
{
	struct fs_state fs = { .colour = 0 };
	uint32_t i, first = 0;
	unsigned long n = 1;

	mkstate(&fs);
	for (i = 0; i < 4; i++) {
		memset(group_bbitmap(&fs, i), 0xff, fs.bytes_per_group);
		fs.free_blocks[i] = 0;
	}
	fs_state_sum(&fs);
	is_int(ext2_new_blocks(&fs, 1, NULL, 100, &n, &first), ORLOV_ERR_NO_BLOCKS,
	       "full filesystem: no blocks");
	fs_state_free(&fs);
}

static void test_bmap(void)
{
	struct fs_state fs = { .colour = 0 };
	struct ifile f;
	fsblk_t phys;
	uint32_t i;

	mkstate(&fs);
	ifile_init(&f, 129, 128);	/* group 1 */
	bmap_get_block(&fs, &f, 1, 0, &phys);
	is_int(phys, 1025 + 100, "first block: group start + colour 0, next free");
	for (i = 1; i < 12; i++)
		bmap_get_block(&fs, &f, 1, i, &phys);
	is_int(phys, 1125 + 11, "direct blocks contiguous");
	bmap_get_block(&fs, &f, 1, 12, &phys);
	is_int(f.i_block[EXT2_IND_BLOCK], 1137, "indirect block comes first");
	is_int(phys, 1138, "then the data block it maps");
	is_int(f.nblocks, 14, "blocks counted with the indirect one");
	for (i = 13; i < 12 + 256; i++)
		bmap_get_block(&fs, &f, 1, i, &phys);
	bmap_get_block(&fs, &f, 1, 12 + 256, &phys);
	is_int(f.i_block[EXT2_DIND_BLOCK], 1138 + 256, "double indirect after the last mapped block");
	is_int(phys, 1138 + 258, "then its indirect block, then data");
	bmap_lookup(&fs, &f, 12 + 256, &phys);
	is_int(phys, 1138 + 258, "lookup finds it");
	bmap_lookup(&fs, &f, 5000, &phys);
	is_int(phys, 0, "a hole reads as 0");
	is_int(bmap_blocks_needed(256, 12 + 256 + 1), 12 + 256 + 1 + 3, "space estimate: ind, dind, one ind");
	ext2_discard_reservation(&fs, &f.bi);
	ifile_release(&fs, &f);

	/* A sparse file: the goal for a block after a hole is the left
	 * neighbour in the same map array. */
	ifile_init(&f, 130, 128);
	bmap_get_block(&fs, &f, 1, 0, &phys);
	ext2_discard_reservation(&fs, &f.bi);
	bmap_get_block(&fs, &f, 1, 5, &phys);
	is_int(f.i_block[5], f.i_block[0] + 1, "after a hole: near the left neighbour");
	ext2_discard_reservation(&fs, &f.bi);
	ifile_release(&fs, &f);
	fs_state_free(&fs);
}

static void test_dir(void)
{
	struct fs_state fs = { .colour = 0 };
	struct dirbuf d;
	char name[32];
	uint32_t ino, i;
	int found = 0;

	mkstate(&fs);
	dirbuf_init(&d, 12, 128, 1);
	dir_make_empty(&fs, &d, 2);
	is_int(dir_nblocks(&d), 1, "an empty directory has one block");
	is_int(!dir_lookup(&fs, &d, "..", 2, &found, &ino) && found, 1, "with ..");
	is_int(ino, 2, "pointing at the parent");
	/* 1024 - 12 - 12 = 1000 bytes of room; 16-byte records fit 62. */
	for (i = 0; i < 62; i++) {
		snprintf(name, sizeof(name), "file%04u", i);
		dir_add_link(&fs, &d, name, 8, 100 + i, EXT2_FT_REG_FILE);
	}
	is_int(dir_nblocks(&d), 1, "62 eight-byte names fit in one block");
	dir_add_link(&fs, &d, "file0062", 8, 200, EXT2_FT_REG_FILE);
	is_int(dir_nblocks(&d), 2, "the next one opens a block");
	dir_add_link(&fs, &d, "ab", 2, 201, EXT2_FT_REG_FILE);
	is_int(!dir_lookup(&fs, &d, "ab", 2, &found, &ino) && found &&
	       dir_nblocks(&d) == 2, 1,
	       "a short name takes room in an existing block");
	is_int(dir_add_link(&fs, &d, name, 300, 1, 1), ORLOV_ERR_NAME_TOO_LONG,
	       "names over 255 bytes refused");
	dirbuf_release(&fs, &d);
	fs_state_free(&fs);
}

/* s_maxbytes as ext2_max_size computes it: 1 and 2 KiB blocks are bound
 * by the block tree, 4 KiB ones by i_blocks' 32 bits of sectors. */
static void test_max_size(void)
{
	is_int(ext2_max_size(10), (12ULL + 256 + 65536 + 16777216) << 10,
	       "1 KiB blocks: the whole block tree (16 GiB)");
	is_int(ext2_max_size(11), (12ULL + 512 + 262144 + 134217728) << 11,
	       "2 KiB blocks: the whole block tree (256 GiB)");
	/* 2^29 - 1 blocks of 4 KiB less the 524801 indirect blocks they
	 * need: 12 direct, 1 + 1024 for the indirect and double indirect
	 * trees, 1 + 523263 + 511 for the triple */
	is_int(ext2_max_size(12), (536870911ULL - 524801) << 12,
	       "4 KiB blocks: bounded by i_blocks (2 TiB)");
}

int main(void)
{
	test_max_size();
	test_plain();
	test_backup();
	test_reservation();
	test_full();
	test_bmap();
	test_dir();
	return tap_done();
}
