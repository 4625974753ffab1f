/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The attribute blocks of one run, managed as fs/ext2/xattr.c of Linux 6.1
 * manages them.  ext2_xattr_set() edits a block in place when only this
 * inode uses it, else a copy; ext2_xattr_set2() then shares an identical
 * block the mbcache knows (never one whose refcount is already over
 * EXT2_EXT_ATTR_REFCOUNT_MAX; ext4: already at it), keeps the edited block, or allocates a new one
 * from the start of the inode's group; a block nobody uses any more is
 * freed.  The mbcache of a fresh mount knows only the blocks this run made
 * or kept, and is searched newest entry first, as mb_cache_entry_find_first
 * walks its hash chain.
 */
#ifndef ORLOV_XBLOCK_H
#define ORLOV_XBLOCK_H

#include <stdint.h>
#include <et/com_err.h>

#include "model/ext2/balloc.h"
#include "model/xattr.h"

struct xattr_blk {
	fsblk_t blk;		/* 0: freed again */
	int cached;		/* in the mbcache emulation */
	uint32_t chash;		/* the hash it is cached under */
	size_t next_hash;	/* cache chain, newer to older (index + 1) */
	size_t next_blk;	/* block number chain (index + 1) */
	unsigned char *data;	/* the block as it is now */
};

/* Both indexes chain through the blocks: a bucket holds index + 1 of the
 * first, 0 when empty.  The cache chain is kept newest first, the order
 * in which mb_cache_entry_find_first walks a hash bucket. */
struct xattr_blocks {
	struct xattr_blk *b;
	size_t n, cap;
	size_t *by_hash, *by_blk;
	size_t nbuckets;	/* a power of two */
	uint32_t block_size;
	unsigned char *scratch;	/* a copy being edited */
	int allocated;		/* a block was allocated (ext_attr feature) */
	enum name_hash name_hash;	/* the kernel's char signedness */
	/* Linux 6.12 allocates attribute blocks with EXT2_ALLOC_NORESERVE,
	 * never from the inode's reservation window; 6.1 may. */
	int noreserve;
	/* A block is shared while its refcount is below this: ext2 shares
	 * one at EXT2_EXT_ATTR_REFCOUNT_MAX once more (1025), ext4 stops at
	 * EXT4_XATTR_REFCOUNT_MAX (1024). */
	uint32_t share_below;
};

errcode_t xattr_blocks_init(struct xattr_blocks *xb, uint32_t block_size);
void xattr_blocks_free(struct xattr_blocks *xb);

/*
 * setxattr of @d (with @remove: removexattr) on inode @ino of @group whose
 * attribute block is *file_acl (0: none); *file_acl is updated.  @bi is the
 * inode's reservation info, NULL when it has none.  @extents: the inode
 * is extent-mapped (ext4), so its block may lie past 2^32.  Removing an
 * attribute that is not there changes nothing.
 */
errcode_t ext2_xattr_set(struct fs_state *fs, struct xattr_blocks *xb,
			 uint32_t ino, uint32_t group, int extents,
			 struct blk_alloc_info *bi, fsblk_t *file_acl,
			 const struct xattr_disk *d, int remove);

/* A block that was on disk before the run (the target directory's): known
 * from now on, not in the cache until ext2 reads it
 * (xattr_blocks_cache_insert). */
/* Is block @blk one of ours (adopted or allocated)? */
int xattr_blocks_known(const struct xattr_blocks *xb, fsblk_t blk);
errcode_t xattr_blocks_adopt(struct xattr_blocks *xb, fsblk_t blk,
			     const unsigned char *data);
/* ext2_xattr_cache_insert after a read (ext2_xattr_get): a block already
 * cached keeps its place. */
void xattr_blocks_cache_insert(struct xattr_blocks *xb, fsblk_t blk);

/* The current image of block @blk made by this run, or NULL. */
const unsigned char *xattr_blocks_data(const struct xattr_blocks *xb,
				       fsblk_t blk);

#endif
