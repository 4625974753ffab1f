/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inode placement of the ext4 driver, read side by side with
 * fs/ext4/ialloc.c of Linux 6.1, with or without flex_bg
 * (fs_geom.log_groups_per_flex), without bigalloc (a cluster is a block),
 * and the group descriptors' lazy-init state it leaves (below).
 * Debian's and Ubuntu's kernels have no ext2 driver
 * (CONFIG_EXT4_USE_FOR_EXT2=y): this is the code that places inodes when
 * they mount an ext2 or ext3 image.
 *
 * What differs from fs/ext2/ialloc.c (model/ext2/ialloc.h):
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
 * Without flex_bg find_group_other() is ext2's, line for line: ext2's
 * serves both, as does its find_group_dir for oldalloc.
 * Used with the ext4 driver's block allocator (mballoc.h), whose free
 * blocks the figures read.
 */
#ifndef ORLOV_EXT4_IALLOC_H
#define ORLOV_EXT4_IALLOC_H

#include <ext2fs/ext2_fs.h>

#include "model/ialloc.h"

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
 * The lazy-init state of the group descriptors (uninit_bg, spelled
 * gdt_csum in the kernel, and metadata_csum) as the ext4 driver of Linux
 * 6.1 leaves it: bg_flags and bg_itable_unused.
 *
 * The kernel changes them at allocation time:
 *  - __ext4_new_inode (fs/ext4/ialloc.c), taking inode @ino (1-based in
 *    its group): BLOCK_UNINIT cleared (the block bitmap initialised), then
 *    free = inodes_per_group - itable_unused, 0 if INODE_UNINIT, which is
 *    cleared; itable_unused = inodes_per_group - ino where ino > free;
 *  - ext4_mb_mark_diskspace_used (fs/ext4/mballoc.c): BLOCK_UNINIT
 *    cleared on the first block taken in the group;
 *  - ITABLE_ZEROED is the lazyinit thread's, never the writer's.
 * None of it moves an inode or a block: an uninitialised bitmap reads as
 * the initialised one would (libext2fs and ext4_init_block_bitmap mark
 * the same metadata), find_inode_bit and the group loop read only the
 * bitmap and the free counts, and mballoc sees every group's buddy once
 * mb_groups has been read after mount (mballoc.h).
 *
 * Inodes are never freed and blocks are freed only where this run took
 * them, so the end state follows from the state at load and the
 * allocator's counts and bitmaps at the end: a group where the free
 * inodes or blocks went down is one the kernel touched, and its highest
 * inode in use is the highest taken (those in use before lie below
 * inodes_per_group - itable_unused).
 * Not seen: a block taken and given back again in a group where nothing
 * else is taken (an attribute block replaced in the same run).
 */
struct ext4_group {
	uint16_t flags;		/* bg_flags */
	uint32_t itable_unused;	/* bg_itable_unused */
	uint32_t free_inodes;	/* at load, to tell a group touched */
	uint32_t free_blocks;
};

struct ext4_groups {
	uint32_t ngroups;
	struct ext4_group g[];
};

/* fs->ext4 for @fs (geometry set), every group zero: the loader fills
 * in each group's flags and itable_unused, then ext4_groups_loaded. */
errcode_t ext4_groups_init(struct fs_state *fs);
/* The counts at load, after the bitmaps and counts are in @fs. */
void ext4_groups_loaded(struct fs_state *fs);
/* Group @i's bg_flags and bg_itable_unused as the kernel leaves them
 * after what the allocators did since ext4_groups_loaded. */
void ext4_group_after(const struct fs_state *fs, uint32_t i,
		      uint16_t *flags, uint32_t *itable_unused);

#endif
