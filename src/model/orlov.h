/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inode placement, read side by side with fs/ext2/ialloc.c of Linux 6.1:
 * find_group_orlov(), find_group_other(), find_group_dir() and the inode
 * and debt bookkeeping of ext2_new_inode().  Pure functions over fs_state.
 */
#ifndef ORLOV_ORLOV_H
#define ORLOV_ORLOV_H

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

/*
 * The rest of ext2_new_inode() and __ext4_new_inode(): take the first
 * free inode of @group (moving on to the next group if it has none),
 * update the counters, the flex group's sums and the debts.  Returns ORLOV_ERR_NO_INODES when the filesystem is full.
 */
errcode_t orlov_take_inode(struct fs_state *fs, int group, int is_dir,
			   uint32_t *ino);

#endif
