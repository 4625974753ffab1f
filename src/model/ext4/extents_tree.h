/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the extent map (extents.h): the path from the root to a
 * leaf as ext4_find_extent builds it (struct ext4_ext_path), the tree
 * blocks, and the on-disk fields read and written in little endian.
 */
#ifndef ORLOV_EXT4_EXTENTS_TREE_H
#define ORLOV_EXT4_EXTENTS_TREE_H

#include "model/ext4/extents.h"

#include <ext2fs/ext3_extents.h>

#define EXT_HDR_SIZE ((int)sizeof(struct ext3_extent_header))
#define EXT_ENTRY_SIZE ((int)sizeof(struct ext3_extent))
#define EXT_ROOT_SIZE ((int)(EXT2_N_BLOCKS * sizeof(uint32_t)))

/* One level of a path: depth 0 is the root. */
struct ext_path {
	struct ext3_extent_header *hdr;
	struct ext3_extent_idx *idx;	/* index levels */
	struct ext3_extent *ext;	/* the leaf: NULL when empty */
	struct ext_node *node;		/* NULL for the root (p_bh) */
	int depth;			/* levels below this one */
};

#define EXT_PATH_LEN (EXT_TREE_MAX_DEPTH + 2)

static inline unsigned int eh_entries(const struct ext3_extent_header *h)
{
	return ext2fs_le16_to_cpu(h->eh_entries);
}

static inline unsigned int eh_max(const struct ext3_extent_header *h)
{
	return ext2fs_le16_to_cpu(h->eh_max);
}

static inline unsigned int eh_depth(const struct ext3_extent_header *h)
{
	return ext2fs_le16_to_cpu(h->eh_depth);
}

static inline void eh_add_entries(struct ext3_extent_header *h, int n)
{
	h->eh_entries = ext2fs_cpu_to_le16((uint16_t)(eh_entries(h) + n));
}

static inline uint32_t ee_block(const struct ext3_extent *e)
{
	return ext2fs_le32_to_cpu(e->ee_block);
}

/* ext4_ext_get_actual_len / ext4_ext_is_unwritten */
static inline unsigned int ee_len(const struct ext3_extent *e)
{
	unsigned int l = ext2fs_le16_to_cpu(e->ee_len);

	return l <= EXT_INIT_MAX_LEN ? l : l - EXT_INIT_MAX_LEN;
}

static inline int ee_unwritten(const struct ext3_extent *e)
{
	return ext2fs_le16_to_cpu(e->ee_len) > EXT_INIT_MAX_LEN;
}

static inline uint64_t ee_pblock(const struct ext3_extent *e)
{
	return ext2fs_le32_to_cpu(e->ee_start) |
	       (uint64_t)ext2fs_le16_to_cpu(e->ee_start_hi) << 32;
}

static inline void ee_store_pblock(struct ext3_extent *e, uint64_t pb)
{
	e->ee_start = ext2fs_cpu_to_le32((uint32_t)pb);
	e->ee_start_hi = ext2fs_cpu_to_le16((uint16_t)(pb >> 32));
}

static inline uint32_t ei_block(const struct ext3_extent_idx *i)
{
	return ext2fs_le32_to_cpu(i->ei_block);
}

static inline uint64_t ei_pblock(const struct ext3_extent_idx *i)
{
	return ext2fs_le32_to_cpu(i->ei_leaf) |
	       (uint64_t)ext2fs_le16_to_cpu(i->ei_leaf_hi) << 32;
}

/* ext4_idx_store_pblock: ei_unused keeps what it had */
static inline void ei_store_pblock(struct ext3_extent_idx *i, uint64_t pb)
{
	i->ei_leaf = ext2fs_cpu_to_le32((uint32_t)pb);
	i->ei_leaf_hi = ext2fs_cpu_to_le16((uint16_t)(pb >> 32));
}

static inline struct ext3_extent_header *ext_root(struct ext_tree *t)
{
	return (struct ext3_extent_header *)t->i_block;
}

/* ext4_ext_space_block / _idx: the same for leaves and indexes */
static inline unsigned int ext4_ext_space_block(const struct ext_tree *t)
{
	return (t->block_size - EXT_HDR_SIZE) / EXT_ENTRY_SIZE;
}

static inline unsigned int ext4_ext_space_root(void)
{
	return (EXT_ROOT_SIZE - EXT_HDR_SIZE) / EXT_ENTRY_SIZE;
}

/* ext4_find_extent: the path to @block, a binary search on each level. */
errcode_t ext4_find_extent(struct ext_tree *t, uint32_t block,
			   struct ext_path *path);
/* A tree block by number (read_extent_tree_block), checked against the
 * depth the index above expects. */
errcode_t read_extent_tree_block(struct ext_tree *t, uint64_t blk,
				 unsigned int depth,
				 struct ext3_extent_header **hdr,
				 struct ext_node **node);
/* A new zeroed tree block of number @blk. */
struct ext_node *ext_node_new(struct ext_tree *t, uint64_t blk);
/* Forget tree block @node (freed by the caller's ops). */
void ext_node_drop(struct ext_tree *t, struct ext_node *node);

/* ext4_ext_next_allocated_block / ext4_ext_next_leaf_block */
uint32_t ext4_ext_next_allocated_block(const struct ext_path *path);
uint32_t ext4_ext_next_leaf_block(const struct ext_path *path);
/* ext4_ext_find_hole: the hole at *lblk (moved to its start) and its
 * length. */
uint32_t ext4_ext_find_hole(const struct ext_path *path, uint32_t *lblk);

#endif
