/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block goal that follows from an inode's group (fs/ext4/balloc.c's
 * ext4_inode_to_goal_block), with or without flex_bg, without bigalloc
 * (a cluster is a block).
 */
#ifndef ORLOV_EXT4_BALLOC_H
#define ORLOV_EXT4_BALLOC_H

#include "model/fsstate.h"

/* What ext4_inode_to_goal_block reads: the filesystem's one geometry,
 * and what its callers hold beside it. */
struct ext_fs {
	struct fs_geom g;
	/* groups per flex group, 1 without flex_bg: the caller's, as its
	 * int holds 1 << g.log_groups_per_flex */
	uint32_t flex_size;
	int delalloc;		/* mounted with delayed allocation */
	/* ext4_writepages on a dioread_nolock mount
	 * (EXT4_GET_BLOCKS_IO_CREATE_EXT): a regular file's new extents
	 * are unwritten until their writes complete */
	int unwritten;
	unsigned int colour;	/* the writer's pid % 16 */
};

/* ext4_inode_to_goal_block: the inode's group's first block (with flex
 * groups of 4 or more, its flex group's first group, the next one for
 * regular files), plus the writer's colour without delayed allocation. */
uint64_t ext4_inode_to_goal_block(const struct ext_fs *fs, uint32_t group,
				  int is_reg);

/*
 * ext4_inode_to_goal_block on @fs's geometry: the first goal
 * of an inode of group @block_group (i_block_group): its
 * group's first block, with flex_size >= 4 its flex group's (the second
 * group of it for a regular file, @is_reg), coloured by the writer's pid
 * (@colour, pid % 16) unless @delalloc.  A goal past the end of the
 * filesystem is returned as the first data block, as mballoc takes it.
 */
uint32_t ext4_goal_block(const struct fs_state *fs, uint32_t block_group,
			 int is_reg, int delalloc, unsigned int colour);

#endif
