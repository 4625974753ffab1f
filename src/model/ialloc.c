// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What ext2_new_inode() and __ext4_new_inode() share once the group is
 * chosen: taking the inode and its counters.
 */
#include "config.h"

#include "model/ialloc.h"
#include "lib/orlov_err.h"

const char *orlov_branch_name(enum orlov_branch b)
{
	switch (b) {
	case BR_ORLOV_TOP: return "orlov-top";
	case BR_ORLOV_NEAR: return "orlov-near";
	case BR_ORLOV_FALLBACK: return "orlov-fallback";
	case BR_OTHER_PARENT: return "other-parent";
	case BR_OTHER_HASH: return "other-hash";
	case BR_OTHER_LINEAR: return "other-linear";
	case BR_DIR: return "dir";
	case BR_OTHER_FLEX: return "other-flex";
	case BR_OTHER_LAST_ALLOC: return "other-last-alloc";
	case BR_NONE: break;
	}
	return "none";
}

void orlov_figures_reset(struct orlov_figures *f, int pgroup)
{
	f->branch = BR_NONE;
	f->pgroup = pgroup;
	f->avefreei = f->avefreeb = f->max_dirs = -1;
	f->min_inodes = f->min_blocks = f->max_debt = -1;
}

errcode_t orlov_take_inode(struct fs_state *fs, int group, int is_dir,
			   uint32_t *ino)
{
	uint32_t ipg = fs->g.inodes_per_group;
	uint32_t i, bit;

	if (group < 0)
		return ORLOV_ERR_NO_INODES;
	for (i = 0; i < fs->g.ngroups; i++) {
		uint8_t *map = group_ibitmap(fs, (uint32_t)group);

		bit = find_next_zero_bit(map, ipg, 0);
		if (bit < ipg) {
			bit_set(map, bit);
			*ino = (uint32_t)group * ipg + bit + 1;
			if (*ino < fs->g.first_ino || *ino > fs->g.inodes_count)
				return ORLOV_ERR_CORRUPT;
			percpu_counter_add(&fs->freei, -1);
			fs->free_inodes[group]--;
			fs_flex_add(fs, (uint32_t)group, -1, 0, is_dir ? 1 : 0);
			if (is_dir) {
				percpu_counter_add(&fs->dirs, 1);
				fs->used_dirs[group]++;
				if (fs->debts[group] < 255)
					fs->debts[group]++;
			} else if (fs->debts[group]) {
				fs->debts[group]--;
			}
			return 0;
		}
		/* Counters said free, bitmap says full: the kernel moves on. */
		if (++group == (int)fs->g.ngroups)
			group = 0;
	}
	return ORLOV_ERR_NO_INODES;
}
