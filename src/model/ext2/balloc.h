/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block allocation, read side by side with fs/ext2/balloc.c of Linux 6.1:
 * ext2_new_blocks() with per-inode reservation windows kept in one
 * filesystem-wide ordered set, exactly as the driver searches, grows and
 * drops them.
 */
#ifndef ORLOV_EXT2_BALLOC_H
#define ORLOV_EXT2_BALLOC_H

#include "model/fsstate.h"

#define EXT2_DEFAULT_RESERVE_BLOCKS 8
#define EXT2_MAX_RESERVE_BLOCKS 1027

/* ext2_block_alloc_info: only regular files get one (on first allocation). */
struct blk_alloc_info {
	struct rsv_window rsv;
	uint32_t last_alloc_logical_block;
	uint32_t last_alloc_physical_block;
};

void ext2_init_block_alloc_info(struct blk_alloc_info *bi);
/* On last close of a file written to: the window goes, the size stays. */
void ext2_discard_reservation(struct fs_state *fs, struct blk_alloc_info *bi);

/*
 * Allocate up to *count blocks near @goal for inode @ino (used only for the
 * trace).  @bi is NULL for inodes without reservation info (directories,
 * symlinks).  On success *first is the first block and *count how many
 * contiguous blocks were taken; ORLOV_ERR_NO_BLOCKS when the filesystem is
 * full.
 */
errcode_t ext2_new_blocks(struct fs_state *fs, uint32_t ino,
			  struct blk_alloc_info *bi, uint32_t goal,
			  unsigned long *count, uint32_t *first);

/* Give @count blocks from @block back to their group, for inode @ino
 * (traced as ext2_block_free). */
void ext2_free_blocks(struct fs_state *fs, uint32_t ino, uint32_t block,
		      unsigned long count);

#endif
