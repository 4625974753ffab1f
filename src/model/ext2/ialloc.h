/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inode placement, read side by side with fs/ext2/ialloc.c of Linux 6.1:
 * find_group_orlov(), find_group_other(), find_group_dir(), and which of
 * them ext2_new_inode() calls.  Pure functions over fs_state.
 */
#ifndef ORLOV_EXT2_IALLOC_H
#define ORLOV_EXT2_IALLOC_H

#include "model/ialloc.h"

/*
 * parent_group: the parent's i_block_group.  topdir: the parent is the
 * root or carries EXT2_TOPDIR_FL.  start: for a top-level directory, the
 * group the spread search starts at (the stock kernel draws it at random;
 * our default takes ext4's half-MD4 name hash modulo the group count).
 * Returns a group, or -1 when no group has a free inode.
 */
int find_group_orlov(const struct fs_state *fs, int parent_group, int topdir,
		     uint32_t start, struct orlov_figures *f);
int find_group_other(const struct fs_state *fs, int parent_group,
		     uint32_t parent_ino, struct orlov_figures *f);
int find_group_dir(const struct fs_state *fs, int parent_group,
		   struct orlov_figures *f);
/* prandom_u32_max(@ngroups) of the stock ext2 driver, from a splitmix64
 * stream seeded by --seed: the start of a top-level directory's search. */
uint32_t ialloc_random_start(uint64_t *rng, uint32_t ngroups);

#endif
