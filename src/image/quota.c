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

errcode_t image_read_quota(struct image *img, const struct fs_state *fs,
			   int type, struct qtree *q, struct ifile *f)
{
	ext2_filsys e = img->fs;
	uint32_t ino = quota_inum(e->super, type);
	struct ext2_inode_large in;
	ext2_file_t file = NULL;
	unsigned char *data = NULL;
	uint64_t size;
	unsigned int got;
	errcode_t err = ext2fs_read_inode_full(e, ino, (struct ext2_inode *)&in,
					      sizeof(in));

	if (err)
		return err;
	size = EXT2_I_SIZE(&in);
	/* a quota file of more than a few MiB is not one mke2fs or the
	 * kernel made for an image's owners */
	if (!LINUX_S_ISREG(in.i_mode) || size > (64u << 20) || in.i_file_acl)
		return ORLOV_ERR_QUOTA_FILE;
	data = malloc(size ? size : 1);
	if (!data)
		return ENOMEM;
	err = ext2fs_file_open2(e, ino, (struct ext2_inode *)&in, 0, &file);
	if (!err)
		err = ext2fs_file_read(file, data, (unsigned int)size, &got);
	if (file)
		ext2fs_file_close(file);
	if (!err && got != size)
		err = ORLOV_ERR_QUOTA_FILE;
	if (!err)
		err = qtree_load(q, type, data, size);
	free(data);
	if (err || !f)
		return err;
	ifile_init(f, ino, fs->g.inodes_per_group);
	err = load_map(img, fs, &in, f);
	/* its blocks (tree blocks too), as the writes that grow it count
	 * them; the kernel holds the file, no writer has it open */
	f->nblocks = in.i_blocks / (e->blocksize / 512);
	f->extents = (in.i_flags & EXT4_EXTENTS_FL) != 0;
	f->mb.i_size = size;
	f->mb.closed = 1;
	f->mb.quota_file = 1;
	f->ext.is_reg = 1;	/* its blocks are data requests */
	if (err) {
		ifile_release(fs, f);
		qtree_free(q);
	}
	return err;
}

errcode_t image_write_quota(struct image *img, const struct fs_state *fs,
			    int type, const struct qtree *q,
			    const struct ifile *f)
{
	ext2_filsys e = img->fs;
	uint32_t ino = quota_inum(e->super, type), bs = e->blocksize;
	uint64_t size = (uint64_t)qtree_blocks(q) << QT_BLKSIZE_BITS, off;
	struct ext2_inode_large in;
	fsblk_t phys;
	errcode_t err = ext2fs_read_inode_full(e, ino, (struct ext2_inode *)&in,
					      sizeof(in));

	for (off = 0; !err && off < size; off += bs) {
		uint64_t n = size - off < bs ? size - off : bs;

		bmap_lookup(fs, f, (uint32_t)(off / bs), &phys);
		if (!phys)
			return ORLOV_ERR_QUOTA_FILE;
		/* past the file's end the block keeps what it has */
		if (n < bs)
			err = image_read_block(img, phys, img->buf);
		if (!err) {
			memcpy(img->buf, q->buf + off, n);
			err = put_blocks(img, phys, 1, img->buf, 0);
		}
	}
	if (err || (size <= EXT2_I_SIZE(&in) &&
		    f->nblocks == in.i_blocks / (bs / 512)))
		return err;
	/* ext4_quota_write: i_size follows the last block written; the
	 * blocks it mapped (ext4_bread) in the map */
	in.i_size = (uint32_t)size;
	in.i_size_high = (uint32_t)(size >> 32);
	in.i_blocks = (uint32_t)(f->nblocks * (bs / 512));
	ifile_i_block(f, in.i_block);
	err = image_write_indirect(img, fs, f);
	return err ? err : image_stage_inode(img, ino, &in);
}
