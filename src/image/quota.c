// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The quota feature's hidden quota inodes (s_usr_quota_inum,
 * s_grp_quota_inum): their files read whole, and written back at the
 * commit through the held writes, as ext4_quota_write leaves them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "image/image_int.h"
#include "image/bridge.h"
#include "lib/orlov_err.h"

errcode_t image_read_quota(struct image *img, int type, struct qtree *q,
			   uint64_t *room)
{
	ext2_filsys e = img->fs;
	uint32_t ino = quota_inum(e->super, type);
	struct ext2_inode_large in;
	ext2_file_t f = NULL;
	unsigned char *data = NULL;
	uint64_t size;
	blk64_t lb, phys;
	unsigned int got;
	errcode_t err = ext2fs_read_inode_full(e, ino, (struct ext2_inode *)&in,
					      sizeof(in));

	if (err)
		return err;
	size = EXT2_I_SIZE(&in);
	/* a quota file of more than a few MiB is not one mke2fs or the
	 * kernel made for an image's owners */
	if (!LINUX_S_ISREG(in.i_mode) || size > (64u << 20))
		return ORLOV_ERR_QUOTA_FILE;
	data = malloc(size ? size : 1);
	if (!data)
		return ENOMEM;
	err = ext2fs_file_open2(e, ino, (struct ext2_inode *)&in, 0, &f);
	if (!err)
		err = ext2fs_file_read(f, data, (unsigned int)size, &got);
	if (f)
		ext2fs_file_close(f);
	if (!err && got != size)
		err = ORLOV_ERR_QUOTA_FILE;
	if (!err)
		err = qtree_load(q, type, data, size);
	free(data);
	/* the bytes its mapped blocks hold from the start: what the tree
	 * may grow into without an allocation */
	for (lb = 0, *room = 0; !err; lb++, *room += e->blocksize) {
		err = ext2fs_bmap2(e, ino, (struct ext2_inode *)&in, NULL, 0,
				   lb, NULL, &phys);
		if (err || !phys)
			break;
	}
	if (err)
		qtree_free(q);
	return err;
}

errcode_t image_write_quota(struct image *img, int type, const struct qtree *q)
{
	ext2_filsys e = img->fs;
	uint32_t ino = quota_inum(e->super, type), bs = e->blocksize;
	uint64_t size = (uint64_t)qtree_blocks(q) << QT_BLKSIZE_BITS, off;
	struct ext2_inode_large in;
	blk64_t phys;
	errcode_t err = ext2fs_read_inode_full(e, ino, (struct ext2_inode *)&in,
					      sizeof(in));

	for (off = 0; !err && off < size; off += bs) {
		uint64_t n = size - off < bs ? size - off : bs;

		err = ext2fs_bmap2(e, ino, (struct ext2_inode *)&in, NULL, 0,
				   off / bs, NULL, &phys);
		if (!err && !phys)
			err = ORLOV_ERR_QUOTA_GROWS;
		/* past the file's end the block keeps what it has */
		if (!err && n < bs)
			err = image_read_block(img, phys, img->buf);
		if (!err) {
			memcpy(img->buf, q->buf + off, n);
			err = put_blocks(img, phys, 1, img->buf, 0);
		}
	}
	/* ext4_quota_write: i_size follows the last block written */
	if (!err && size > EXT2_I_SIZE(&in)) {
		in.i_size = (uint32_t)size;
		in.i_size_high = (uint32_t)(size >> 32);
		err = image_stage_inode(img, ino, &in);
	}
	return err;
}

