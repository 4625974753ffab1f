/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one place where the image layer meets the model's types: the
 * model's fs_state loaded from libext2fs's bitmaps and group descriptors
 * and stored back into them, a directory (dirbuf) and a file's block map
 * (ifile) read from the image and written to it, and the commit of it
 * all.  image.h names no model type; what crosses is declared here.
 */
#ifndef ORLOV_IMAGE_BRIDGE_H
#define ORLOV_IMAGE_BRIDGE_H

#include <ext2fs/ext2_fs.h>
#include <et/com_err.h>

#include "model/dir.h"
#include "model/quota_tree.h"
#include "lib/errctx.h"

struct image;

/* The model's state of the open image: geometry, per-group counts and
 * bitmaps.  ORLOV_ERR_BAD_COUNTS when the descriptors' counts disagree
 * with the bitmaps. */
errcode_t image_load_state(struct image *img, struct fs_state *fs);
/* The model's bitmaps and counts into libext2fs's, marked dirty: what
 * the commit writes. */
errcode_t image_store_state(struct image *img, const struct fs_state *fs);

/* Load an existing directory's blocks and block map. */
errcode_t image_load_dir(struct image *img, const struct fs_state *fs,
			 const struct ext2_inode_large *inode,
			 struct dirbuf *d);
/* Write a file's indirect blocks (held in memory by bmap). */
errcode_t image_write_indirect(struct image *img, const struct fs_state *fs,
			       const struct ifile *f);
errcode_t image_write_dir(struct image *img, const struct fs_state *fs,
			  const struct dirbuf *d);
/* The quota file of @type (image/quota.c) into @q, its block map into
 * @f (NULL: not wanted), as ext4 holds the quota inode: i_size, closed. */
errcode_t image_read_quota(struct image *img, const struct fs_state *fs,
			   int type, struct qtree *q, struct ifile *f);
/* @q back into the blocks @f maps (held until the commit: they are in
 * use); the inode's size, and its map where the tree grew into new
 * blocks. */
errcode_t image_write_quota(struct image *img, const struct fs_state *fs,
			    int type, const struct qtree *q,
			    const struct ifile *f);
/* An attribute block, its checksum set (metadata_csum). */
errcode_t image_write_xattr_block(struct image *img, blk64_t blk,
				  const void *data);

/* Before the write pass: where the image's journal is too short for a
 * commit of @inodes new inodes, whose inode-table blocks alone it could
 * not hold, the run writes a copy of the image from here on, as it does
 * an image without a journal, rather than copy at the commit every
 * block the run wrote.  Only a choice of where to write: an error to
 * tell is one that stops the run (out of memory). */
errcode_t image_plan_commit(struct image *img, const struct fs_state *fs,
			    uint64_t inodes);
/* Write inodes, bitmaps, counters and the superblock, and close; @img is
 * gone either way.  Ordered so that an interruption leaves the old
 * filesystem or one e2fsck repairs without loss (commit.c); a failed
 * write puts every block changed in place back (io_guard.h). */
errcode_t image_commit(struct image *img, const struct fs_state *fs,
		       struct errctx *ec);

#endif
