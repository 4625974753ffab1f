/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inode placement of the ext4 driver, read side by side with
 * fs/ext4/ialloc.c of Linux 6.1, and the block goal that follows from it
 * (ext4_inode_to_goal_block of fs/ext4/balloc.c), with or without flex_bg
 * (fs_geom.log_groups_per_flex), without bigalloc (a cluster is a block).
 * Debian's and Ubuntu's kernels have no ext2 driver
 * (CONFIG_EXT4_USE_FOR_EXT2=y): this is the code that places inodes when
 * they mount an ext2 or ext3 image.
 *
 * What differs from fs/ext2/ialloc.c (orlov.h):
 *  - no debts;
 *  - a top-level directory's search starts at the half-MD4 hash of its
 *    name, always (ext2 draws it at random);
 *  - other directories search from the group of the parent's last new
 *    inode (i_last_alloc_group, set by every ext4_new_inode in it), not
 *    the parent's own group; the fallback still starts at the latter;
 *  - min_inodes is at least 1 and min_clusters at least 0, and the
 *    figures are unsigned where ext4's are;
 *  - with flex_bg, Orlov's searches run over flex groups (their sums in
 *    fs_state.flex, the limits scaled by flex_size) and take the first
 *    group of the chosen flex group that has a free inode; the fallback
 *    runs over the groups.  Files go to the first group with a free inode
 *    in the parent's flex group, else in i_last_alloc_group's, else
 *    where Orlov's near search (never the top-level one) puts them.
 * Without flex_bg find_group_other() is ext2's: orlov.h's serves both.
 * Used with the ext4 driver's block allocator (mballoc.h), whose free
 * blocks the figures read.
 */
#ifndef ORLOV_EXT4_IALLOC_H
#define ORLOV_EXT4_IALLOC_H

#include "model/orlov.h"

/* i_last_alloc_group of an inode that has not allocated one yet (~0). */
#define EXT4_NO_LAST_ALLOC_GROUP (-1)

/*
 * parent_group: the parent's i_block_group; last_alloc_group: its
 * i_last_alloc_group or EXT4_NO_LAST_ALLOC_GROUP; topdir: the new inode
 * is a directory and the parent is the root or has the TOPDIR flag;
 * hash: the half-MD4 hash of the new directory's name (dirhash_half_md4).
 * Returns a group, or -1.  The figures are recorded as for ext2
 * (max_debt stays -1); with flex_bg, pgroup and the averages are
 * per flex group.
 */
int ext4_find_group_orlov(const struct fs_state *fs, int parent_group,
			  int last_alloc_group, int topdir, uint32_t hash,
			  struct orlov_figures *f);

/* The group of a new inode that is not a directory, in @parent_group's
 * directory (inode @parent_ino); -1 when no group has a free inode. */
int ext4_find_group_other(const struct fs_state *fs, int parent_group,
			  uint32_t parent_ino, int last_alloc_group,
			  struct orlov_figures *f);

/*
 * ext4_inode_to_goal_block (extents.h) on @fs's geometry: the first goal
 * of an inode of group @block_group (i_block_group): its
 * group's first block, with flex_size >= 4 its flex group's (the second
 * group of it for a regular file, @is_reg), coloured by the writer's pid
 * (@colour, pid % 16) unless @delalloc.  A goal past the end of the
 * filesystem is returned as the first data block, as mballoc takes it.
 */
uint32_t ext4_goal_block(const struct fs_state *fs, uint32_t block_group,
			 int is_reg, int delalloc, unsigned int colour);

#endif
