/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The extent map of one inode and its growth, read side by side with
 * fs/ext4/extents.c of Linux 6.1: ext4_ext_map_blocks() looks the block up
 * (ext4_find_extent), sizes the request to the hole and EXT_INIT_MAX_LEN,
 * finds the neighbours (ext4_ext_search_left/right) and the goal
 * (ext4_ext_find_goal, ext4_inode_to_goal_block), asks for the data blocks,
 * then inserts the new extent (ext4_ext_insert_extent): merged with a
 * neighbour if it continues it, else in the leaf, in the next leaf, or in a
 * new leaf (ext4_ext_create_new_leaf: ext4_ext_split, or
 * ext4_ext_grow_indepth first), each tree block asked for with the goal
 * the kernel gives it, after the data.
 *
 * The tree is kept as the kernel keeps it: the root's 60 bytes (i_block)
 * and each tree block's bytes in the on-disk encoding of
 * <ext2fs/ext3_extents.h>, changed as the kernel changes its buffers, so
 * that what is written is what the kernel writes, stale entries past
 * eh_entries included.  A leaf holds (blocksize - 12) / 12 entries
 * whatever the features (ext4_ext_space_block), which leaves the 4 bytes
 * of ext3_extent_tail free; the checksum is the image's to set.
 */
#ifndef ORLOV_EXT4_EXTENTS_H
#define ORLOV_EXT4_EXTENTS_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/balloc.h"
#include "model/ext4/mballoc.h"

#define EXT_MAX_BLOCKS 0xffffffffu	/* no block: ext4's EXT_MAX_BLOCKS */
#define EXT_TREE_MAX_DEPTH 5		/* EXT4_MAX_EXTENT_DEPTH */

/* One tree block (index or leaf): its number and its bytes. */
struct ext_node {
	uint64_t blk;
	unsigned char *buf;	/* block_size bytes */
};

struct ext_tree {
	uint32_t i_block[EXT2_N_BLOCKS];	/* the root, on-disk bytes */
	struct ext_node **node;	/* tree blocks in the order they came */
	size_t n, cap;
	uint32_t block_size;
	uint32_t group;		/* i_block_group */
	int is_reg;		/* regular file: data requests, goal group */
	uint64_t nblocks;	/* blocks held, tree blocks included */
};

/*
 * struct ext4_allocation_request as ext4_ext_map_blocks fills it: @len is
 * capped to the hole and EXT_INIT_MAX_LEN; the neighbours are the last
 * mapped block before @logical and the first after it (0 in pleft/pright:
 * none).  @is_data: EXT4_MB_HINT_DATA (regular files).
 */
struct ext_alloc_req {
	uint32_t logical;
	uint32_t len;
	uint64_t goal;
	uint32_t lleft, lright;
	uint64_t pleft, pright;
	int is_data;
};

/* Where the blocks come from (ext4_mb_new_blocks and ext4_free_blocks). */
struct ext_alloc_ops {
	/* Data: the first block in *blk, how many in *got (1..ar->len). */
	errcode_t (*data)(void *ctx, const struct ext_alloc_req *ar,
			  uint64_t *blk, uint32_t *got);
	/* One tree block (ext4_new_meta_blocks) near @goal; @try_goal:
	 * EXT4_MB_HINT_TRY_GOAL. */
	errcode_t (*meta)(void *ctx, uint64_t goal, int try_goal,
			  uint64_t *blk);
	/* Blocks given back: a tree block folded into the inode
	 * (ext4_ext_try_to_merge_up), or what a failed insertion had
	 * allocated. */
	void (*release)(void *ctx, uint64_t blk, uint32_t count, int meta);
	void *ctx;
};

/* ext4_ext_tree_init: an empty root for a new inode of group @group (one
 * that carries EXT4_EXTENTS_FL). */
void ext4_ext_tree_init(struct ext_tree *t, uint32_t block_size, uint32_t group,
			int is_reg);
/* An inode's tree read from the image into @t (new or released): the
 * root, then each tree block (ext_tree_attach, any order).  The root is checked here, the blocks
 * when a lookup reaches them. */
errcode_t ext_tree_load(struct ext_tree *t, uint32_t block_size,
			uint32_t group, int is_reg,
			const uint32_t i_block[EXT2_N_BLOCKS]);
errcode_t ext_tree_attach(struct ext_tree *t, uint64_t blk, const void *buf);
void ext_tree_release(struct ext_tree *t);

int ext_tree_depth(const struct ext_tree *t);

/* While loading: a tree block an index points to that is not attached
 * yet, and the eh_depth it must have (1 while there is one). */
int ext_tree_wanted(const struct ext_tree *t, uint64_t *blk,
		    unsigned int *depth);

/* The inode's i_block as the kernel leaves it. */
void ext_tree_encode_root(const struct ext_tree *t,
			  uint32_t i_block[EXT2_N_BLOCKS]);
/* Every tree block's bytes (block_size, the checksum tail zero), in the
 * order they were allocated. */
typedef errcode_t (*ext_visit_fn)(void *ctx, uint64_t blk, const void *buf);
errcode_t ext_tree_visit(const struct ext_tree *t, ext_visit_fn fn, void *ctx);

/*
 * The writes of a file's writeback complete (ext4_end_io, its extents'
 * conversion): each unwritten extent, front to back, made initialized
 * (ext4_convert_unwritten_extents_endio) and merged with its neighbours,
 * a tree of one leaf that then fits folded back into the inode
 * (ext4_ext_try_to_merge), its block released.
 */
errcode_t ext4_ext_convert_unwritten(struct ext_tree *t,
				     const struct ext_alloc_ops *ops);

/*
 * ext4_ext_map_blocks with EXT4_GET_BLOCKS_CREATE: map up to @len blocks
 * from @lblk, allocating what is not mapped.  @len is the caller's request:
 * one block for a page-cache buffer without delayed allocation
 * (_ext4_get_block), the delayed run for the writeback
 * (mpage_map_one_extent).  *phys is the first block, *got how many
 * (contiguous, at least one).  Mapped blocks are returned as they are.
 */
errcode_t ext4_ext_map_blocks(struct ext_tree *t, const struct ext_fs *fs,
			      const struct ext_alloc_ops *ops, uint32_t lblk,
			      uint32_t len, uint64_t *phys, uint32_t *got);

/* The same without allocating: *phys 0 for a hole; *len how many blocks
 * from @lblk are mapped contiguously, or how long the hole is. */
errcode_t ext_lookup(const struct ext_tree *t, uint32_t lblk, uint64_t *phys,
		     uint32_t *len);

/*
 * The blocks from the mballoc model (model/ext4/mballoc.h): data through
 * ext4_mb_new_blocks with the request's neighbours and the file's
 * preallocation context (regular files; NULL otherwise), tree blocks as
 * metadata with their TRY_GOAL, freed blocks back to the buddy.
 */
struct ext_mb {
	struct fs_state *fs;
	struct mb_inode *mi;	/* the file's, with i_size set */
	uint32_t ino;		/* ar->inode, for --trace */
};

void ext_mb_ops(struct ext_mb *m, struct ext_alloc_ops *ops);
/* The filesystem as ext4_inode_to_goal_block reads it from @fs (mounted
 * with mballoc), with flex groups of @flex_size. */
void ext_fs_of(struct ext_fs *e, const struct fs_state *fs,
	       uint32_t flex_size);

/* The fewest blocks a file of @nblocks data blocks takes: extents of
 * EXT_INIT_MAX_LEN, leaves and index blocks full (as appends leave
 * them); used for the up-front space check. */
uint64_t ext_blocks_needed(uint32_t block_size, uint64_t nblocks);

/* ext4_max_size for extent-mapped files of blocks of 1 << @bits bytes:
 * the last block ee_block can address, less where i_blocks would overflow
 * without huge_file. */
uint64_t ext4_max_size(unsigned int bits, int huge_file);

#endif
