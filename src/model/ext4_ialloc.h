/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inode placement of the ext4 driver, read side by side with
 * fs/ext4/ialloc.c of Linux 6.1, for the images this tool writes: no
 * flex_bg (flex_size 1) and no bigalloc (a cluster is a block).  Debian's
 * and Ubuntu's kernels have no ext2 driver (CONFIG_EXT4_USE_FOR_EXT2=y):
 * this is the code that places inodes when they mount an ext2 or ext3
 * image.
 *
 * What differs from fs/ext2/ialloc.c (orlov.h):
 *  - no debts;
 *  - a top-level directory's search starts at the half-MD4 hash of its
 *    name, always (ext2 draws it at random);
 *  - other directories search from the group of the parent's last new
 *    inode (i_last_alloc_group, set by every ext4_new_inode in it), not
 *    the parent's own group; the fallback still starts at the latter;
 *  - min_inodes is at least 1 and min_clusters at least 0, and the
 *    figures are unsigned where ext4's are.
 * find_group_other() is the same as ext2's with flex_size 1: orlov.h's
 * serves both.  Used with the ext4 driver's block allocator (mballoc.h),
 * whose free blocks the figures read.
 */
#ifndef ORLOV_EXT4_IALLOC_H
#define ORLOV_EXT4_IALLOC_H

#include "model/orlov.h"

/* i_last_alloc_group of an inode that has not allocated one yet (~0). */
#define EXT4_NO_LAST_ALLOC_GROUP (-1)

/*
 * parent_group: the parent's i_block_group; last_alloc_group: its
 * i_last_alloc_group or EXT4_NO_LAST_ALLOC_GROUP; topdir: the parent is
 * the root or has the TOPDIR flag; hash: the half-MD4 hash of the new
 * directory's name (dirhash_half_md4).  Returns a group, or -1.  The
 * figures are recorded as for ext2 (max_debt stays -1).
 */
int ext4_find_group_orlov(const struct fs_state *fs, int parent_group,
			  int last_alloc_group, int topdir, uint32_t hash,
			  struct orlov_figures *f);

#endif
