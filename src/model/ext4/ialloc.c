// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * find_group_orlov() and find_group_other() of fs/ext4/ialloc.c (Linux
 * 6.1), and the group descriptors' flags __ext4_new_inode leaves.  The
 * figures keep ext4's types: the free-inode figures are unsigned, the
 * free-cluster ones 64-bit, max_dirs and min_inodes int and min_clusters
 * an ext4_grpblk_t (int), flex_size an int, so that the same comparisons
 * give the same answers on the same numbers.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "model/ext4/ialloc.h"
#include "model/ext2/ialloc.h"

/* What the kernel's (int) flex_size holds: 1 << s_log_groups_per_flex
 * made an int, negative at 31 (so that "flex_size > 1" is then false). */
static int flex_size_of(const struct fs_state *fs)
{
	return (int)fs_flex_size(fs);
}

/* An int product wrapped as the kernel's (built -fno-strict-overflow)
 * wraps it, without the undefined behaviour of a C overflow. */
static int int_mul(int a, int b)
{
	return (int)((uint32_t)a * (uint32_t)b);
}

struct orlov_stats {
	uint64_t free_clusters;
	uint32_t free_inodes;
	uint32_t used_dirs;
};

/* get_orlov_stats(): @g is a flex group with flex_size > 1, else a
 * group. */
static void get_orlov_stats(const struct fs_state *fs, uint32_t g,
			    int flex_size, struct orlov_stats *st)
{
	if (flex_size > 1) {
		const struct flex_groups *fg = &fs->flex[g];

		st->free_inodes = (uint32_t)fg->free_inodes;
		st->free_clusters = (uint64_t)fg->free_clusters;
		st->used_dirs = (uint32_t)fg->used_dirs;
		return;
	}
	st->free_inodes = fs->free_inodes[g];
	st->free_clusters = fs->free_blocks[g];
	st->used_dirs = fs->used_dirs[g];
}

/* found_flex_bg: with flex groups, the first group of flex group @fg
 * with a free inode (inodes are packed at the start of the flex group's
 * inode tables), or -1. */
static int64_t first_in_flex(const struct fs_state *fs, uint32_t fg,
			     int flex_size)
{
	uint32_t grp = fg * (uint32_t)flex_size, i;

	if (flex_size == 1)
		return fg;
	for (i = 0; i < (uint32_t)flex_size; i++) {
		if (grp + i >= fs->g.ngroups)
			break;
		if (fs->free_inodes[grp + i])
			return grp + i;
	}
	return -1;
}

/* The fallback: the real groups from the parent's own, whatever the
 * search above started from. */
static int orlov_fallback(const struct fs_state *fs, uint32_t parent_group,
			  unsigned int freei)
{
	uint32_t ngroups = fs->g.ngroups, i, grp;
	unsigned int avefreei = freei / ngroups;

	for (;;) {
		for (i = 0; i < ngroups; i++) {
			grp = (parent_group + i) % ngroups;
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

/* The top-level spread: the flex group (or group) with the fewest
 * directories among those not worse than average, from @start; -1 if
 * none. */
static int64_t orlov_top(const struct fs_state *fs, uint32_t ngroups,
			 uint32_t start, unsigned int avefreei,
			 uint64_t avefreec, int flex_size)
{
	int best_ndir = (int)fs->g.inodes_per_group;
	int64_t best = -1;
	struct orlov_stats st;
	uint32_t i, g;

	for (i = 0; i < ngroups; i++) {
		g = (start + i) % ngroups;
		get_orlov_stats(fs, g, flex_size, &st);
		if (!st.free_inodes)
			continue;
		if (st.used_dirs >= (unsigned int)best_ndir)
			continue;
		if (st.free_inodes < avefreei)
			continue;
		if (st.free_clusters < avefreec)
			continue;
		best = g;
		best_ndir = (int)st.used_dirs;
	}
	return best;
}

int ext4_find_group_orlov(const struct fs_state *fs, int parent_group,
			  int last_alloc_group, int topdir, uint32_t hash,
			  struct orlov_figures *f)
{
	uint32_t ngroups = fs->g.ngroups;
	int inodes_per_group = (int)fs->g.inodes_per_group;
	int flex_size = flex_size_of(fs);
	unsigned int freei, avefreei;
	uint64_t freec, avefreec;
	unsigned int ndirs;
	int max_dirs, min_inodes, min_clusters;
	uint32_t i, grp, start = (uint32_t)parent_group;
	int64_t found = -1;
	struct orlov_stats st;

	orlov_figures_reset(f, parent_group);
	if (flex_size > 1) {
		ngroups = (ngroups + (uint32_t)flex_size - 1) >>
			  fs->g.log_groups_per_flex;
		start >>= fs->g.log_groups_per_flex;
		f->pgroup = (int)start;
	}
	freei = (unsigned int)percpu_counter_read_positive(&fs->freei);
	avefreei = freei / ngroups;
	freec = (uint64_t)percpu_counter_read_positive(&fs->freeb);
	avefreec = freec / ngroups;
	ndirs = (unsigned int)percpu_counter_read_positive(&fs->dirs);
	f->avefreei = (int)avefreei;
	f->avefreeb = (int)avefreec;

	if (topdir) {
		start = hash % ngroups;
		f->pgroup = (int)start;
		found = orlov_top(fs, ngroups, start, avefreei, avefreec,
				  flex_size);
		if (found < 0)
			goto fallback;
		f->branch = BR_ORLOV_TOP;
		goto found_flex_bg;
	}

	max_dirs = (int)(ndirs / ngroups +
			 (unsigned int)(int_mul(inodes_per_group, flex_size) /
					16));
	min_inodes = (int)(avefreei -
			   (unsigned int)(int_mul(inodes_per_group, flex_size) /
					  4));
	if (min_inodes < 1)
		min_inodes = 1;
	/* unsigned long arithmetic cut to an int, as the kernel's
	 * assignment does; only then is a negative one raised to 0 */
	min_clusters = (int)(avefreec - (uint64_t)fs->g.blocks_per_group *
					(uint64_t)flex_size / 4);
	if (min_clusters < 0)
		min_clusters = 0;
	f->max_dirs = max_dirs;
	f->min_inodes = min_inodes;
	f->min_blocks = min_clusters;

	/* from the flex group of the parent's last new inode */
	if (last_alloc_group != EXT4_NO_LAST_ALLOC_GROUP) {
		start = (uint32_t)last_alloc_group;
		if (flex_size > 1)
			start >>= fs->g.log_groups_per_flex;
		f->pgroup = (int)start;
	}
	for (i = 0; i < ngroups; i++) {
		grp = (start + i) % ngroups;
		get_orlov_stats(fs, grp, flex_size, &st);
		/* int limits compared with unsigned counts, converted as
		 * the kernel's comparisons convert them */
		if (st.used_dirs >= (unsigned int)max_dirs)
			continue;
		if (st.free_inodes < (unsigned int)min_inodes)
			continue;
		if (st.free_clusters < (uint64_t)(int64_t)min_clusters)
			continue;
		f->branch = BR_ORLOV_NEAR;
		found = grp;
		goto found_flex_bg;
	}
	goto fallback;

found_flex_bg:
	found = first_in_flex(fs, (uint32_t)found, flex_size);
	if (found >= 0)
		return (int)found;
fallback:
	f->branch = BR_ORLOV_FALLBACK;
	return orlov_fallback(fs, (uint32_t)parent_group, freei);
}

int ext4_find_group_other(const struct fs_state *fs, int parent_group,
			  uint32_t parent_ino, int last_alloc_group,
			  struct orlov_figures *f)
{
	int flex_size = flex_size_of(fs);
	uint32_t ngroups = fs->g.ngroups, pg = (uint32_t)parent_group, last, i;
	int retry = 0;

	if (flex_size <= 1)
		return find_group_other(fs, parent_group, parent_ino, f);
	orlov_figures_reset(f, parent_group);
	for (;;) {
		pg &= ~((uint32_t)flex_size - 1);
		last = pg + (uint32_t)flex_size;
		if (last > ngroups)
			last = ngroups;
		for (i = pg; i < last; i++) {
			if (fs->free_inodes[i]) {
				f->branch = retry ? BR_OTHER_LAST_ALLOC :
						    BR_OTHER_FLEX;
				return (int)i;
			}
		}
		if (retry || last_alloc_group == EXT4_NO_LAST_ALLOC_GROUP)
			break;
		retry = 1;
		pg = (uint32_t)last_alloc_group;
	}
	/* Orlov's near search for another flex group: a file never takes
	 * the top-level spread, whatever its parent. */
	return ext4_find_group_orlov(fs, parent_group, last_alloc_group, 0, 0,
				     f);
}

int ext4_ialloc_find_group(const struct fs_state *fs, struct ialloc_policy *p,
			   const struct ialloc_parent *parent, int is_dir,
			   const char *name, int len, struct orlov_figures *f)
{
	if (!is_dir)
		return ext4_find_group_other(fs, parent->group, parent->ino,
					     parent->last_alloc_group, f);
	if (p->oldalloc)
		return find_group_dir(fs, parent->group, f);
	return ext4_find_group_orlov(fs, parent->group,
				     parent->last_alloc_group, parent->topdir,
				     dirhash_half_md4(p->seed, name, len), f);
}

/* ---- the group descriptors' lazy-init state ----------------------- */

errcode_t ext4_groups_init(struct fs_state *fs)
{
	struct ext4_groups *e;

	e = calloc(1, sizeof(*e) + fs->g.ngroups * sizeof(e->g[0]));
	if (!e)
		return ENOMEM;
	e->ngroups = fs->g.ngroups;
	fs->ext4 = e;
	return 0;
}

void ext4_groups_loaded(struct fs_state *fs)
{
	uint32_t i;

	for (i = 0; i < fs->ext4->ngroups; i++) {
		fs->ext4->g[i].free_inodes = fs->free_inodes[i];
		fs->ext4->g[i].free_blocks = fs->free_blocks[i];
	}
}

/* The highest inode in use in group @i, 1-based; 0 when none. */
static uint32_t last_inode(const struct fs_state *fs, uint32_t i)
{
	const uint8_t *map = group_ibitmap(fs, i);
	uint32_t n = fs->g.inodes_per_group;

	while (n && !bit_test(map, n - 1))
		n--;
	return n;
}

void ext4_group_after(const struct fs_state *fs, uint32_t i,
		      uint16_t *flags, uint32_t *itable_unused)
{
	const struct ext4_group *g = &fs->ext4->g[i];
	uint32_t ipg = fs->g.inodes_per_group, used, ino;
	int took_inode = fs->free_inodes[i] < g->free_inodes;

	*flags = g->flags;
	*itable_unused = g->itable_unused;
	/* __ext4_new_inode initialises the block bitmap of the group it
	 * takes an inode in, mballoc that of the group it takes blocks in */
	if (took_inode || fs->free_blocks[i] < g->free_blocks)
		*flags &= (uint16_t)~EXT2_BG_BLOCK_UNINIT;
	if (!took_inode)
		return;
	used = ipg - g->itable_unused;
	if (g->flags & EXT2_BG_INODE_UNINIT) {
		*flags &= (uint16_t)~EXT2_BG_INODE_UNINIT;
		used = 0;
	}
	ino = last_inode(fs, i);
	if (ino > used)
		*itable_unused = ipg - ino;
}
