/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which find_group_* a new inode goes through, as ext2_new_inode() and
 * __ext4_new_inode() choose (fs/ext2/ialloc.c, fs/ext4/ialloc.c of Linux
 * 6.1): a directory by Orlov (or oldalloc's find_group_dir), anything
 * else by find_group_other; for ext2 a top-level directory's spread
 * search starts at a group drawn at random (or at its name's hash), ext4
 * always takes the hash and searches from the parent's
 * i_last_alloc_group.  Pure: the group is taken by orlov_take_inode.
 */
#ifndef ORLOV_IALLOC_H
#define ORLOV_IALLOC_H

#include "model/orlov.h"

/* What the user chose: kept for the whole run. */
struct ialloc_policy {
	int oldalloc;		/* the oldalloc mount option: find_group_dir */
	int topdir_hash;	/* ext2: a top-level start group by name hash,
				   not at random */
	uint32_t seed[4];	/* s_hash_seed: the half-MD4 name hash's */
	uint64_t rng;		/* the random start groups' state (--seed) */
};

/* The directory a new inode goes into. */
struct ialloc_parent {
	int group;		/* i_block_group */
	uint32_t ino;
	int topdir;		/* the root, or EXT2_TOPDIR_FL */
	int last_alloc_group;	/* ext4's i_last_alloc_group */
};

/* prandom_u32_max(@ngroups) of the stock ext2 driver, from a splitmix64
 * stream seeded by --seed: the start of a top-level directory's search. */
uint32_t ialloc_random_start(uint64_t *rng, uint32_t ngroups);

/*
 * The group ext2_new_inode / __ext4_new_inode picks for a new inode named
 * @name in @parent (@is_dir: a directory), with the figures it decided
 * by; -1 when no group has a free inode.  The caller remembers the group
 * as the parent's i_last_alloc_group (ext4 does it for every new inode).
 */
typedef int ialloc_find_group_fn(const struct fs_state *fs,
				 struct ialloc_policy *p,
				 const struct ialloc_parent *parent, int is_dir,
				 const char *name, int len,
				 struct orlov_figures *f);
ialloc_find_group_fn ext2_ialloc_find_group;
ialloc_find_group_fn ext4_ialloc_find_group;

#endif
