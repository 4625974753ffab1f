/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block map of one inode and its growth one block at a time, read
 * side by side with ext2_get_blocks() in fs/ext2/inode.c (Linux 6.1):
 * the goal (ext2_find_goal / ext2_find_near with the writer's colour), the
 * indirect blocks a new branch needs and their allocation order
 * (ext2_alloc_branch), and the sequential-allocation hint.
 */
#ifndef ORLOV_BMAP_H
#define ORLOV_BMAP_H

#include <ext2fs/ext2_fs.h>

#include "model/ext2/balloc.h"
#include "model/ext4/extents.h"
#include "model/ext4/mballoc.h"

/* An indirect block held in memory until the inode is finished. */
struct ind_node {
	uint32_t blk;
	uint32_t *ptr;			/* addr_per_block entries */
	struct ind_node **child;	/* NULL at the last level */
};

struct ifile {
	uint32_t ino;
	uint32_t group;			/* i_block_group */
	int has_alloc_info;		/* regular files, from their first block */
	struct blk_alloc_info bi;
	uint32_t i_block[EXT2_N_BLOCKS];
	struct ind_node *ind[3];	/* under i_block[12], [13], [14] */
	uint64_t nblocks;		/* blocks held, indirect included */
	struct mb_inode mb;		/* ext4: preallocations, i_size */
	unsigned char *ibody;		/* ext4: the inode past i_extra_isize */
	size_t ibody_size;		/* (attributes in the inode), or NULL */
	int extents;			/* EXT4_EXTENTS_FL: @ext maps it, not
					   i_block and @ind */
	struct ext_tree ext;
};

void ifile_init(struct ifile *f, uint32_t ino, uint32_t ipg);
void ifile_release(const struct fs_state *fs, struct ifile *f);

/* 1 when @f holds nothing a new inode's allocation does not: no block
 * mapped or held, no preallocation, no reservation window, i_size 0
 * (its attributes in the inode aside); @f is then rebuilt whole from
 * its number and its EXTENTS_FL with ifile_init and ifile_use_extents. */
int ifile_is_new(const struct fs_state *fs, const struct ifile *f);

/* ext4_ext_tree_init: @f (new, no block yet) is mapped by extents, as
 * __ext4_new_inode makes every directory, regular file and symlink of a
 * filesystem with the extent feature (a fast symlink drops the flag
 * again: it simply never maps a block).  @is_reg: a regular file. */
void ifile_use_extents(const struct fs_state *fs, struct ifile *f, int is_reg);

/* An existing inode's extent tree into @f (ifile_init'ed): the root
 * from @i_block; the tree blocks are attached with ext_tree_attach. */
errcode_t ifile_load_extents(const struct fs_state *fs, struct ifile *f,
			     const uint32_t i_block[EXT2_N_BLOCKS]);

/* The inode's i_block as it goes to disk: the block pointers, or the
 * extent tree's root. */
void ifile_i_block(const struct ifile *f, uint32_t i_block[EXT2_N_BLOCKS]);

/*
 * Map logical block @iblock of @f, allocating it (and the indirect blocks
 * on its path) if it is not mapped yet, as a page-cache write of that one
 * block makes the kernel do.  @is_reg: regular files get reservation info.
 */
errcode_t bmap_get_block(struct fs_state *fs, struct ifile *f, int is_reg,
			 uint32_t iblock, fsblk_t *phys);

/*
 * Map up to @len blocks from logical @iblock in one request, allocating
 * what is not mapped yet: ext4_ind_map_blocks with a length (ext4's
 * writeback of delayed blocks), at most to the end of the indirect block
 * holding them; ext2 maps one.  *phys is the first block, *got how many
 * (contiguous).
 */
errcode_t bmap_map_blocks(struct fs_state *fs, struct ifile *f, int is_reg,
			  uint32_t iblock, uint32_t len, fsblk_t *phys,
			  uint32_t *got);

/* The writes of @f's writeback complete: its unwritten extents
 * converted (ext4_ext_convert_unwritten; nothing for a block-mapped
 * file). */
errcode_t bmap_writes_done(struct fs_state *fs, struct ifile *f);

/* Look up without allocating: 0 in *phys for a hole. */
void bmap_lookup(const struct fs_state *fs, const struct ifile *f,
		 uint32_t iblock, fsblk_t *phys);

/* Add an existing indirect block read from the image (slot 0..2 for
 * i_block[12..14]; @path gives the child indices below it). */
errcode_t bmap_attach(const struct fs_state *fs, struct ifile *f, int level,
		      const uint32_t *path, int depth, uint32_t blk,
		      const uint32_t *ptrs);

/* Visit every indirect block (to write it out); none for a file mapped
 * by extents, whose tree blocks ext_tree_visit gives. */
typedef errcode_t (*ind_visit_fn)(void *ctx, uint32_t blk, const uint32_t *ptr);
errcode_t bmap_visit_indirect(const struct fs_state *fs, const struct ifile *f,
			      ind_visit_fn fn, void *ctx);

/* Number of blocks (data and indirect) a file of @nblocks data blocks,
 * all mapped, needs: used for the up-front space check. */
uint64_t bmap_blocks_needed(uint32_t addr_per_block, uint64_t nblocks);

/* ext2_max_size(): the driver's s_maxbytes for blocks of 1 << @bits
 * bytes, the largest size a file can be written or truncated to (EFBIG
 * past it): what the block tree addresses, or less where a dense file's
 * i_blocks (512-byte sectors, 32 bits) would overflow. */
uint64_t ext2_max_size(unsigned int bits);

#endif
