// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * find_group_orlov() of fs/ext4/ialloc.c (Linux 6.1) with flex_size 1.
 * The figures keep ext4's types: the free-inode figures are unsigned,
 * the free-cluster ones 64-bit, max_dirs and min_inodes int and
 * min_clusters an ext4_grpblk_t (int), so that the same comparisons give
 * the same answers on the same numbers.
 */
#include "config.h"

#include "model/ext4_ialloc.h"

int ext4_find_group_orlov(const struct fs_state *fs, int parent_group,
			  int last_alloc_group, int topdir, uint32_t hash,
			  struct orlov_figures *f)
{
	uint32_t ngroups = fs->g.ngroups;
	int inodes_per_group = (int)fs->g.inodes_per_group;
	unsigned int freei, avefreei;
	uint64_t freec, avefreec;
	unsigned int ndirs;
	int max_dirs, min_inodes, min_clusters;
	uint32_t i, grp, start = (uint32_t)parent_group;

	orlov_figures_reset(f, parent_group);
	freei = (unsigned int)percpu_counter_read_positive(&fs->freei);
	avefreei = freei / ngroups;
	freec = (uint64_t)percpu_counter_read_positive(&fs->freeb);
	avefreec = freec / ngroups;
	ndirs = (unsigned int)percpu_counter_read_positive(&fs->dirs);
	f->avefreei = (int)avefreei;
	f->avefreeb = (int)avefreec;

	if (topdir) {
		unsigned int best_ndir = (unsigned int)inodes_per_group;
		int best = -1;

		start = hash % ngroups;
		f->pgroup = (int)start;
		for (i = 0; i < ngroups; i++) {
			uint32_t g = (start + i) % ngroups;

			if (!fs->free_inodes[g])
				continue;
			if (fs->used_dirs[g] >= best_ndir)
				continue;
			if (fs->free_inodes[g] < avefreei)
				continue;
			if (fs->free_blocks[g] < avefreec)
				continue;
			best = (int)g;
			best_ndir = fs->used_dirs[g];
		}
		if (best >= 0) {
			f->branch = BR_ORLOV_TOP;
			return best;
		}
		goto fallback;
	}

	max_dirs = (int)(ndirs / ngroups) + inodes_per_group / 16;
	min_inodes = (int)avefreei - inodes_per_group / 4;
	if (min_inodes < 1)
		min_inodes = 1;
	/* A 64-bit difference cut to an int, as the kernel's assignment
	 * does; only then is a negative one raised to 0. */
	min_clusters = (int)(avefreec - fs->g.blocks_per_group / 4);
	if (min_clusters < 0)
		min_clusters = 0;
	f->max_dirs = max_dirs;
	f->min_inodes = min_inodes;
	f->min_blocks = min_clusters;

	if (last_alloc_group != EXT4_NO_LAST_ALLOC_GROUP) {
		start = (uint32_t)last_alloc_group;
		f->pgroup = last_alloc_group;
	}
	for (i = 0; i < ngroups; i++) {
		grp = (start + i) % ngroups;
		/* int limits compared with unsigned counts: both are
		 * positive here, so the conversion changes nothing */
		if (fs->used_dirs[grp] >= (unsigned int)max_dirs)
			continue;
		if (fs->free_inodes[grp] < (unsigned int)min_inodes)
			continue;
		if (fs->free_blocks[grp] < (uint64_t)min_clusters)
			continue;
		f->branch = BR_ORLOV_NEAR;
		return (int)grp;
	}

fallback:
	f->branch = BR_ORLOV_FALLBACK;
	/* the fallback starts at the parent's own group, whatever the
	 * search above started from */
	for (;;) {
		for (i = 0; i < ngroups; i++) {
			grp = ((uint32_t)parent_group + i) % ngroups;
			if (fs->free_inodes[grp] &&
			    fs->free_inodes[grp] >= avefreei)
				return (int)grp;
		}
		/* The counter is approximate, and on small filesystems
		 * the average can exclude every group. */
		if (!avefreei)
			break;
		avefreei = 0;
	}
	return -1;
}
