/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#ifndef ORLOV_EXT4_GROUP_H
#define ORLOV_EXT4_GROUP_H

#include <ext2fs/ext2_fs.h>

#include "model/fsstate.h"

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
