// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read-only, for orlov-layout: what one inode holds: its ordered block
 * list and dump line, a symlink's target, a device's number, its times.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_read.h"
#include "lib/util.h"
/* After ext2fs.h, which defines the __u32 its structures use. */
#include <ext2fs/ext2_ext_attr.h>
#include "lib/orlov_err.h"

struct block_collect {
	struct ir_blocks *bl;
	errcode_t err;
};

static int collect_block(ext2_filsys fs, blk64_t *blocknr,
			 e2_blkcnt_t blockcnt, blk64_t ref_blk,
			 int ref_offset, void *priv)
{
	struct block_collect *bc = priv;
	struct ir_blocks *bl = bc->bl;

	if (grow_array(&bl->b, &bl->cap, bl->n + 1, sizeof(*bl->b), 64)) {
		bc->err = ENOMEM;
		return BLOCK_ABORT;
	}
	bl->b[bl->n++] = *blocknr;
	return 0;
}

errcode_t ir_block_list(ext2_filsys fs, ext2_ino_t ino,
			struct ext2_inode_large *inode, struct ir_blocks *out)
{
	struct block_collect bc = { out, 0 };
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/*
	 * Devices keep their number and fast symlinks their target in
	 * i_block; iterating those would list garbage "blocks".
	 */
	if (!ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode))
		return 0;
	/*
	 * Without BLOCK_FLAG_DEPTH_TRAVERSE each mapping block comes before
	 * the blocks it maps, which is the order the tool allocates them.
	 */
	err = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
				    collect_block, &bc);
	if (!err)
		err = bc.err;
	if (err)
		ir_blocks_free(out);
	return err;
}

void ir_blocks_free(struct ir_blocks *bl)
{
	free(bl->b);
	memset(bl, 0, sizeof(*bl));
}

errcode_t ir_format_blocks(const struct ir_blocks *bl, struct strbuf *out)
{
	size_t i = 0, j;
	errcode_t err;

	if (!bl->n)
		return sb_append(out, "-", 1);
	while (i < bl->n) {
		for (j = i; j + 1 < bl->n && bl->b[j + 1] == bl->b[j] + 1; j++)
			;
		if (j > i)
			err = sb_printf(out, "%s%llu-%llu", i ? "," : "",
					(unsigned long long)bl->b[i],
					(unsigned long long)bl->b[j]);
		else
			err = sb_printf(out, "%s%llu", i ? "," : "",
					(unsigned long long)bl->b[i]);
		if (err)
			return err;
		i = j + 1;
	}
	return 0;
}

errcode_t ir_describe(ext2_filsys fs, ext2_ino_t ino,
		      struct ext2_inode_large *inode, struct strbuf *out)
{
	const char *type = ir_type_name(inode->i_mode);
	struct ir_blocks bl;
	blk64_t acl;
	errcode_t err;

	if (!type)
		return ORLOV_ERR_CORRUPT;
	err = ir_block_list(fs, ino, inode, &bl);
	if (err)
		return err;
	err = sb_printf(out, "ino=%lu group=%lu %s blocks=", (unsigned long)ino,
			(unsigned long)((ino - 1) / fs->super->s_inodes_per_group),
			type);
	if (!err)
		err = ir_format_blocks(&bl, out);
	ir_blocks_free(&bl);
	acl = ext2fs_file_acl_block(fs, (struct ext2_inode *)inode);
	if (!err && acl) {
		/* The block's bytes count too: its reference count, and a
		 * CRC32C of the whole block, entries and value placement. */
		unsigned char *buf = NULL;

		err = ext2fs_get_mem(fs->blocksize, &buf);
		if (!err)
			err = io_channel_read_blk64(fs->io, acl, 1, buf);
		if (!err)
			err = sb_printf(out, " xattr=%llu xrefs=%lu xcrc=%08lx",
					(unsigned long long)acl,
					(unsigned long)ext2fs_le32_to_cpu(
				((struct ext2_ext_attr_header *)buf)->h_refcount),
					(unsigned long)ext2fs_crc32c_le(~0U, buf,
							fs->blocksize));
		ext2fs_free_mem(&buf);
	}
	return err;
}

errcode_t ir_symlink_target(ext2_filsys fs, ext2_ino_t ino,
			    struct ext2_inode_large *inode, struct strbuf *out)
{
	size_t size = EXT2_I_SIZE(inode);
	ext2_file_t f;
	unsigned int got;
	errcode_t err, err2;
	char *buf;

	sb_truncate(out, 0);
	if (ext2fs_is_fast_symlink((struct ext2_inode *)inode)) {
		if (size >= sizeof(inode->i_block))
			return ORLOV_ERR_CORRUPT;
		return sb_append(out, (const char *)inode->i_block, size);
	}
	if (size >= fs->blocksize)
		return ORLOV_ERR_CORRUPT;
	buf = malloc(size + 1);
	if (!buf)
		return ENOMEM;
	err = ext2fs_file_open2(fs, ino, (struct ext2_inode *)inode, 0, &f);
	if (!err) {
		err = ext2fs_file_read(f, buf, (unsigned int)size, &got);
		if (!err && got != size)
			err = ORLOV_ERR_CORRUPT;
		err2 = ext2fs_file_close(f);
		if (!err)
			err = err2;
	}
	if (!err)
		err = sb_append(out, buf, size);
	free(buf);
	return err;
}

void ir_rdev(const struct ext2_inode_large *inode, unsigned int *major,
	     unsigned int *minor)
{
	uint32_t old = ext2fs_le32_to_cpu(inode->i_block[0]);
	uint32_t nw = ext2fs_le32_to_cpu(inode->i_block[1]);

	/* Old 8:8 encoding in i_block[0]; else the 12:20 one in [1]. */
	if (old) {
		*major = (old >> 8) & 0xff;
		*minor = old & 0xff;
	} else {
		*major = (nw & 0xfff00) >> 8;
		*minor = (nw & 0xff) | ((nw >> 12) & 0xfff00);
	}
}

void ir_inode_time(ext2_filsys fs, const struct ext2_inode_large *inode,
		   enum ir_time which, int64_t *sec, uint32_t *nsec,
		   int *has_nsec)
{
	size_t end, room = 0;
	uint32_t base, extra;

	if (which == IR_MTIME) {
		base = inode->i_mtime;
		extra = inode->i_mtime_extra;
		end = offsetof(struct ext2_inode_large, i_mtime_extra);
	} else {
		base = inode->i_ctime;
		extra = inode->i_ctime_extra;
		end = offsetof(struct ext2_inode_large, i_ctime_extra);
	}
	end += sizeof(uint32_t);
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE)
		room = EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
	*sec = (int32_t)base;
	*nsec = 0;
	*has_nsec = room >= end &&
		    room <= (size_t)EXT2_INODE_SIZE(fs->super);
	if (*has_nsec) {
		*sec += (int64_t)(extra & EXT4_EPOCH_MASK) << 32;
		*nsec = extra >> EXT4_EPOCH_BITS;
	}
}
