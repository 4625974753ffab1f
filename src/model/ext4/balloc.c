// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The first block goal of an inode, ext4_inode_to_goal_block() of
 * fs/ext4/balloc.c (Linux 6.1), for the extent tree and for
 * indirect-mapped files.
 */
#include "config.h"

#include "model/ext4/balloc.h"

uint64_t ext4_inode_to_goal_block(const struct ext_fs *fs, uint32_t group,
				  int is_reg)
{
	uint64_t bg_start, last_block;
	int colour;

	if (fs->flex_size >= EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME) {
		/* the flex group's first group for directories and special
		 * files, regular files from its second */
		group &= ~(fs->flex_size - 1);
		if (is_reg)
			group++;
	}
	bg_start = fs->g.first_data_block +
		   (uint64_t)group * fs->g.blocks_per_group;
	last_block = fs->g.blocks_count - 1;
	if (fs->delalloc)
		return bg_start;	/* no colour with delayed allocation */
	/* A flex group's second group can be past the end: the kernel's
	 * unsigned difference then wraps, and its product is cut to the
	 * int colour (ext4_grpblk_t). */
	if (bg_start + fs->g.blocks_per_group <= last_block)
		colour = (int)(fs->colour * (fs->g.blocks_per_group / 16));
	else
		colour = (int)(uint32_t)((uint64_t)fs->colour *
					 ((last_block - bg_start) / 16));
	return bg_start + (uint64_t)(int64_t)colour;
}

uint32_t ext4_goal_block(const struct fs_state *fs, uint32_t block_group,
			 int is_reg, int delalloc, unsigned int colour)
{
	/* the kernel holds it in an int: negative at log 31 */
	int flex_size = (int)fs_flex_size(fs);
	struct ext_fs e = {
		.g = fs->g,
		/* (a negative int flex size is no flex_bg to the kernel) */
		.flex_size = flex_size > 0 ? (uint32_t)flex_size : 1,
		.delalloc = delalloc, .colour = colour,
	};
	/* ext4_find_goal cuts an indirect-mapped file's goal to 32 bits
	 * (EXT4_MAX_BLOCK_FILE_PHYS): past 2^32 it wraps to a low group */
	uint64_t goal = ext4_inode_to_goal_block(&e, block_group, is_reg) &
			0xffffffffu;

	/* mballoc (ext4_mb_initialize_context) starts a goal past the end
	 * at the first data block: said here, for 32-bit goals */
	if (goal >= fs->g.blocks_count)
		return fs->g.first_data_block;
	return (uint32_t)goal;
}
