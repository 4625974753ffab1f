/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An allocator state for the unit tests, without an image. */
#ifndef ORLOV_FIXTURE_H
#define ORLOV_FIXTURE_H

#include "model/fsstate.h"
#include "model/ext4/mballoc.h"

/* @ngroups groups of @bpg blocks of 1 KiB and @ipg inodes, first data block
 * 1; the first @used blocks of each group in use (metadata), all inodes
 * free. */
static inline void fixture_state(struct fs_state *fs, uint32_t ngroups,
				 uint32_t ipg, uint32_t bpg, uint32_t used)
{
	struct fs_geom g = {
		.ngroups = ngroups, .inodes_per_group = ipg,
		.blocks_per_group = bpg, .inodes_count = ngroups * ipg,
		.blocks_count = (fsblk_t)ngroups * bpg + 1,
		.first_data_block = 1,
		.first_ino = 11, .block_size = 1024, .inode_size = 128,
	};
	uint32_t i, b;

	fs_state_init(fs, &g);
	for (i = 0; i < ngroups; i++) {
		for (b = 0; b < used; b++)
			bit_set(group_bbitmap(fs, i), b);
		fs->free_blocks[i] = bpg - used;
		fs->free_inodes[i] = ipg;
	}
	fs_state_sum(fs);
}

/* Up to @len blocks for an extent-mapped inode (@mi: a regular file's
 * data, NULL: metadata), where ext4_mb_new_blocks asks for an
 * indirect-mapped one's; 0 when none. */
static inline uint32_t ext_new_blocks(struct fs_state *fs,
				      struct mb_inode *mi, uint32_t goal,
				      uint32_t len)
{
	struct mb_request ar = { .mi = mi, .len = len, .goal = goal };
	uint64_t b;
	uint32_t got;

	return ext4_mb_new_blocks_ar(fs, &ar, &b, &got) ? 0 : (uint32_t)b;
}

#endif
