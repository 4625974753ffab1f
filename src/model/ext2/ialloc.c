// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode group choice as fs/ext2/ialloc.c (Linux 6.1) makes it.  The
 * arithmetic keeps the kernel's types (int figures, unsigned descriptor
 * counters promoted to int) so that the same comparisons give the same
 * answers on the same numbers.
 */
#include "config.h"

#include <string.h>

#include "model/ext2/ialloc.h"
#include "lib/hash.h"

#define INODE_COST 64
#define BLOCK_COST 256

int find_group_dir(const struct fs_state *fs, int parent_group,
		   struct orlov_figures *f)
{
	int ngroups = (int)fs->g.ngroups;
	/* ext2_count_free_inodes(): the descriptors' exact sum, not the
	 * percpu counter that find_group_orlov reads. */
	int avefreei = (int)(percpu_counter_sum(&fs->freei) / fs->g.ngroups);
	int group, best_group = -1;

	/* The parent's group is not used, only recorded for the trace. */
	orlov_figures_reset(f, parent_group);
	f->avefreei = avefreei;
	f->branch = BR_DIR;
	for (group = 0; group < ngroups; group++) {
		if (!fs->free_inodes[group])
			continue;
		if ((int)fs->free_inodes[group] < avefreei)
			continue;
		if (best_group < 0 ||
		    fs->free_blocks[group] > fs->free_blocks[best_group])
			best_group = group;
	}
	return best_group;
}

int find_group_orlov(const struct fs_state *fs, int parent_group, int topdir,
		     uint32_t start, struct orlov_figures *f)
{
	int ngroups = (int)fs->g.ngroups;
	int inodes_per_group = (int)fs->g.inodes_per_group;
	/* On SMP these lag the descriptors by up to a batch: the writer's
	 * own CPU has not folded its share yet. */
	int freei = (int)percpu_counter_read_positive(&fs->freei);
	int avefreei = freei / ngroups;
	int free_blocks = (int)percpu_counter_read_positive(&fs->freeb);
	int avefreeb = free_blocks / ngroups;
	int ndirs = (int)percpu_counter_read_positive(&fs->dirs);
	int blocks_per_dir, max_debt, max_dirs, min_blocks, min_inodes;
	int group = -1, i;

	orlov_figures_reset(f, parent_group);
	f->avefreei = avefreei;
	f->avefreeb = avefreeb;

	if (topdir) {
		int best_ndir = inodes_per_group;
		int best_group = -1;

		parent_group = (int)(start % fs->g.ngroups);
		f->pgroup = parent_group;
		for (i = 0; i < ngroups; i++) {
			group = (parent_group + i) % ngroups;
			if (!fs->free_inodes[group])
				continue;
			if ((int)fs->used_dirs[group] >= best_ndir)
				continue;
			if ((int)fs->free_inodes[group] < avefreei)
				continue;
			if ((int)fs->free_blocks[group] < avefreeb)
				continue;
			best_group = group;
			best_ndir = (int)fs->used_dirs[group];
		}
		if (best_group >= 0) {
			f->branch = BR_ORLOV_TOP;
			return best_group;
		}
		goto fallback;
	}

	/* The kernel guards against approximate percpu counters here. */
	if (ndirs == 0)
		ndirs = 1;

	blocks_per_dir = (int)((fs->g.blocks_count - (uint32_t)free_blocks) /
			       (uint32_t)ndirs);
	max_dirs = ndirs / ngroups + inodes_per_group / 16;
	min_inodes = avefreei - inodes_per_group / 4;
	min_blocks = avefreeb - (int)fs->g.blocks_per_group / 4;

	max_debt = (int)(fs->g.blocks_per_group /
			 (uint32_t)(blocks_per_dir > BLOCK_COST ?
				    blocks_per_dir : BLOCK_COST));
	if (max_debt * INODE_COST > inodes_per_group)
		max_debt = inodes_per_group / INODE_COST;
	if (max_debt > 255)
		max_debt = 255;
	if (max_debt == 0)
		max_debt = 1;

	f->max_dirs = max_dirs;
	f->min_inodes = min_inodes;
	f->min_blocks = min_blocks;
	f->max_debt = max_debt;

	for (i = 0; i < ngroups; i++) {
		group = (parent_group + i) % ngroups;
		if (!fs->free_inodes[group])
			continue;
		if (fs->debts[group] >= max_debt)
			continue;
		if ((int)fs->used_dirs[group] >= max_dirs)
			continue;
		if ((int)fs->free_inodes[group] < min_inodes)
			continue;
		if ((int)fs->free_blocks[group] < min_blocks)
			continue;
		f->branch = BR_ORLOV_NEAR;
		return group;
	}

fallback:
	f->branch = BR_ORLOV_FALLBACK;
	for (;;) {
		for (i = 0; i < ngroups; i++) {
			group = (parent_group + i) % ngroups;
			if (!fs->free_inodes[group])
				continue;
			if ((int)fs->free_inodes[group] >= avefreei)
				return group;
		}
		/* Small filesystems: the average can exclude every group. */
		if (!avefreei)
			break;
		avefreei = 0;
	}
	return -1;
}

static int group_has_room(const struct fs_state *fs, int group)
{
	return fs->free_inodes[group] && fs->free_blocks[group];
}

int find_group_other(const struct fs_state *fs, int parent_group,
		     uint32_t parent_ino, struct orlov_figures *f)
{
	int ngroups = (int)fs->g.ngroups;
	int group, i;

	orlov_figures_reset(f, parent_group);
	if (group_has_room(fs, parent_group)) {
		f->branch = BR_OTHER_PARENT;
		return parent_group;
	}

	/* Files of one directory should meet in one group, files of other
	 * directories sharing the parent's group elsewhere: the parent's
	 * inode number seeds the quadratic probe. */
	group = (int)(((uint32_t)parent_group + parent_ino) % (uint32_t)ngroups);
	for (i = 1; i < ngroups; i <<= 1) {
		group += i;
		if (group >= ngroups)
			group -= ngroups;
		if (group_has_room(fs, group)) {
			f->branch = BR_OTHER_HASH;
			return group;
		}
	}

	/* Last resort: any free inode, even in a group with no free block. */
	group = parent_group;
	for (i = 0; i < ngroups; i++) {
		if (++group >= ngroups)
			group = 0;
		if (fs->free_inodes[group]) {
			f->branch = BR_OTHER_LINEAR;
			return group;
		}
	}
	return -1;
}

uint32_t ialloc_random_start(uint64_t *rng, uint32_t ngroups)
{
	/* scaled as prandom_u32_max() scales */
	uint64_t z = splitmix64(rng);

	return (uint32_t)(((z & 0xffffffffU) * ngroups) >> 32);
}

int ext2_ialloc_find_group(const struct fs_state *fs, struct ialloc_policy *p,
			   const struct ialloc_parent *parent, int is_dir,
			   const char *name, int len, struct orlov_figures *f)
{
	uint32_t start = 0;

	if (!is_dir)
		return find_group_other(fs, parent->group, parent->ino, f);
	if (p->oldalloc)
		return find_group_dir(fs, parent->group, f);
	if (parent->topdir && p->topdir_hash)
		start = dirhash_half_md4(p->seed, name, len) % fs->g.ngroups;
	else if (parent->topdir)
		start = ialloc_random_start(&p->rng, fs->g.ngroups);
	return find_group_orlov(fs, parent->group, parent->topdir, start, f);
}
