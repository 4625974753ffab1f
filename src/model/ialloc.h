/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which find_group_* a new inode goes through, as ext2_new_inode() and
 * __ext4_new_inode() choose (fs/ext2/ialloc.c, fs/ext4/ialloc.c of Linux
 * 6.1): a directory by Orlov (or oldalloc's find_group_dir), anything
 * else by find_group_other; for ext2 a top-level directory's spread
 * search starts at a group drawn at random (or at its name's hash), ext4
 * always takes the hash and searches from the parent's
 * i_last_alloc_group.  Each driver's choice is in its folder
 * (ext2/ialloc.c, ext4/ialloc.c); what both share is here: the trace's
 * figures and the taking of the inode once the group is chosen.
 */
#ifndef ORLOV_IALLOC_H
#define ORLOV_IALLOC_H

#include "model/fsstate.h"
#include "model/dirhash.h"

enum orlov_branch {
	BR_NONE = 0,
	BR_ORLOV_TOP,
	BR_ORLOV_NEAR,
	BR_ORLOV_FALLBACK,
	BR_OTHER_PARENT,
	BR_OTHER_HASH,
	BR_OTHER_LINEAR,
	BR_DIR,
	BR_OTHER_FLEX,		/* ext4 with flex_bg: the parent's flex group */
	BR_OTHER_LAST_ALLOC,	/* ... or i_last_alloc_group's */
};

/* What a find_group_* call decided and the figures it decided with;
 * -1 for a figure the branch did not compute (doc/trace-format.md). */
struct orlov_figures {
	enum orlov_branch branch;
	int pgroup;
	int avefreei, avefreeb, max_dirs, min_inodes, min_blocks, max_debt;
};

const char *orlov_branch_name(enum orlov_branch b);
/* No branch yet, every figure -1 (not computed). */
void orlov_figures_reset(struct orlov_figures *f, int pgroup);

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

/*
 * The rest of ext2_new_inode() and __ext4_new_inode(): take the first
 * free inode of @group (moving on to the next group if it has none),
 * update the counters, the flex group's sums and the debts.  Returns
 * ORLOV_ERR_NO_INODES when the filesystem is full.
 */
errcode_t orlov_take_inode(struct fs_state *fs, int group, int is_dir,
			   uint32_t *ino);

#endif
