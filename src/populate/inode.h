/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_INODE_H
#define ORLOV_POPULATE_INODE_H

#include <linux/fs.h>

#include "populate/ctx.h"

/* EXT2_FL_INHERITED, EXT2_REG_FLMASK, EXT2_OTHER_FLMASK of fs/ext2/ext2.h,
 * and ext4's EXT4_CASEFOLD_FL (only ext4 mounts an image with casefold,
 * and only there a directory has it): subdirectories inherit it, files
 * do not (EXT4_REG_FLMASK) */
#define FL_INHERITED (FS_SECRM_FL | FS_UNRM_FL | FS_COMPR_FL | FS_SYNC_FL | \
		      FS_NODUMP_FL | FS_NOATIME_FL | FS_COMPRBLK_FL | \
		      FS_NOCOMP_FL | FS_JOURNAL_DATA_FL | FS_NOTAIL_FL | \
		      FS_DIRSYNC_FL | FS_CASEFOLD_FL)
#define FL_REG_MASK (~(uint32_t)(FS_DIRSYNC_FL | FS_TOPDIR_FL | \
				 FS_CASEFOLD_FL))
#define FL_OTHER_MASK ((uint32_t)(FS_NODUMP_FL | FS_NOATIME_FL))

/* The directory entry's file type for @m. */
/* The inherited @flags an inode of @mode keeps (ext2_mask_flags). */
uint32_t mask_flags(mode_t mode, uint32_t flags);
/* A new inode of @e's metadata with @flags, one link. */
void fill_inode(const struct pop_ctx *c, const struct src_entry *e,
		uint32_t flags, struct ext2_inode_large *in);
/* @f's block map, its attribute block @xblk (0: none) and i_blocks
 * into @in. */
void set_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		const struct ifile *f, fsblk_t xblk);
/* An inode whose data is inline (model/ext4/inline.h): no block map,
 * only its attribute block @xblk (0: none) in i_blocks. */
void set_inline_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		       fsblk_t xblk);
/* A directory's i_size and blocks: @d's map, or its inline entries. */
void set_dir_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		    const struct dirbuf *d, fsblk_t xblk);
/* Mode bits, owners and times of @e onto an inode the image has. */
void take_attrs(const struct pop_ctx *c, const struct src_entry *e,
		struct ext2_inode_large *in);
/* Mode bits and owners alone (a device table line for "/"). */
void take_mode_owner(const struct src_entry *e, struct ext2_inode_large *in);
/* ext4: a new inode's attribute space; none for small inodes or ext2. */
errcode_t ibody_new(struct pop_ctx *c, struct ifile *f);
/* Queue the inode (and its attribute space) for the commit. */
errcode_t stage_inode(struct pop_ctx *c, const struct ifile *f,
		      const struct ext2_inode_large *in);
/* The blocks of a directory the image has (@in its inode) into @d. */
errcode_t load_dir(struct pop_ctx *c, const struct ext2_inode_large *in,
		   struct dirbuf *d);
void inode_set_rdev(struct ext2_inode_large *in, dev_t rdev);

/* i_file_acl with its high 16 bits (ext2fs_file_acl_block): on an image
 * of more than 2^32 blocks the attribute block may lie past 2^32; the
 * high half is 0 on every other image. */
static inline fsblk_t inode_xattr_block(const struct ext2_inode_large *in)
{
	return in->i_file_acl |
	       (fsblk_t)in->osd2.linux2.l_i_file_acl_high << 32;
}

static inline void inode_set_xattr_block(struct ext2_inode_large *in,
					 fsblk_t blk)
{
	in->i_file_acl = (uint32_t)blk;
	in->osd2.linux2.l_i_file_acl_high = (uint16_t)(blk >> 32);
}

#endif
