// SPDX-License-Identifier: GPL-2.0-or-later
/* 6.1's per-inode preallocation trim (ext4_mb_trim_inode_pa): a sparse
 * file written in one open with more than 641 preallocations keeps its
 * 512 most recently used; 6.4 and later (the 6.12 model) trim none. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/ext4/mballoc.h"
#include "tap.h"
#include "fixture.h"

/* groups of 8192 blocks of 1 KiB, 300 in use in each: three free buddy
 * chunks of 2048 blocks a group (at 2048, 4096 and 6144) */
#define NGROUPS 240
#define RANGES 650

static void mkstate(struct fs_state *fs, uint32_t kver)
{
	fixture_state(fs, NGROUPS, 256, 8192, 300);
	fs->kver = kver;
	if (mb_state_init(fs, 1))
		exit(99);
}

/* One block every 2 MiB of a 1 KiB-block file past 1 MiB: each is asked
 * with a 2 MiB window of its own (ext4_mb_normalize_request), so each
 * makes a preallocation of 2048 blocks that no other block uses.
 * Returns the first range's block. */
static uint32_t write_ranges(struct fs_state *fs, struct mb_inode *f,
			     unsigned int n, unsigned int *most)
{
	uint32_t first = 0, b = 0;
	unsigned int k;

	*most = 0;
	for (k = 0; k < n; k++) {
		uint32_t logical = 1024 + 2048 * k;

		f->i_size = ((uint64_t)logical + 1) * 1024;
		if (ext4_mb_new_block(fs, f, 12, logical, 0, &b))
			return 0;
		if (!k)
			first = b;
		if (f->pas.n > *most)
			*most = f->pas.n;
	}
	return first;
}

static void test_trim(uint32_t kver, const char *name, int trims)
{
	struct fs_state fs = { 0 };
	struct mb_inode f = { 0 };
	uint32_t first, again = 0, used = 0, g;
	unsigned int most;

	mkstate(&fs, kver);
	first = write_ranges(&fs, &f, RANGES, &most);
	tap_ok(first != 0, "%s: %u separate ranges allocated", name, RANGES);
	for (g = 0; g < NGROUPS; g++)
		used += 8192 - 300 - fs.free_blocks[g];
	is_int(used, RANGES, "%s: the on-disk counts saw only the blocks used",
	       name);
	if (trims) {
		is_int(most, 641, "%s: at most 512 + 129 preallocations live "
		       "after an allocation", name);
		is_int(f.pas.n, 512 + RANGES - 642, "%s: the 642nd trims the "
		       "file's list to 512, then it grows again", name);
	} else {
		is_int(f.pas.n, RANGES, "%s: every preallocation stays", name);
	}
	/* a metadata block asked at the first range's block: its
	 * preallocation's next block if the trim gave it back */
	ext4_mb_new_block(&fs, NULL, 0, 0, first, &again);
	if (trims)
		is_int(again, first + 1, "%s: the least recently used went "
		       "back to the buddy (the first range's neighbour)", name);
	else
		tap_ok(again != first + 1, "%s: the first range's preallocation "
		   "still holds its neighbour", name);
	mb_inode_release(&f);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

int main(void)
{
	test_trim(KVER_REF_6_1, "6.1", 1);
	test_trim(KVER(6, 1, 164), "6.1.164", 1);
	test_trim(KVER_REF_6_12, "6.12", 0);
	return tap_done();
}
