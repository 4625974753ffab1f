// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Room on the host for an in-place commit: every block it will write
 * allocated in the image file before the first is written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
#include "image/io_guard.h"
#include "lib/util.h"
#include "lib/orlov_err.h"
#include "model/ext4/ialloc.h"

struct blist {
	blk64_t *b;
	size_t n, cap;
};

static errcode_t bl_add(struct blist *l, blk64_t first, blk64_t count)
{
	for (; count; count--, first++) {
		if (grow_array(&l->b, &l->cap, l->n + 1, sizeof(*l->b), 256))
			return ENOMEM;
		l->b[l->n++] = first;
	}
	return 0;
}

static int blk_cmp(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;

	return x < y ? -1 : x > y;
}

/* Bytes [off, off + len) of @fd allocated, its holes filled with zeros
 * where fallocate(2) is not supported: the contents stay the same. */
static errcode_t fill_holes(int fd, off_t off, off_t len)
{
	static const char zero[4096];
	off_t end = off + len, d, h;

	if (!fallocate(fd, FALLOC_FL_KEEP_SIZE, off, len))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return (errcode_t)errno;
	while (off < end) {
		d = lseek(fd, off, SEEK_DATA);
		if (d < 0 && errno != ENXIO)
			return 0;	/* no SEEK_DATA: nothing known of holes */
		h = d < 0 ? end : d;
		for (; off < h && off < end; off += (off_t)sizeof(zero)) {
			size_t n = end - off < (off_t)sizeof(zero) ?
				   (size_t)(end - off) : sizeof(zero);
			errcode_t err = pwrite_all(fd, zero, n, off);

			if (err)
				return err;
		}
		if (d < 0 || d >= end)
			break;
		off = lseek(fd, d, SEEK_HOLE);
		if (off < 0)
			return 0;
	}
	return 0;
}

int commit_writes_bitmap(ext2_filsys e, const struct fs_state *fs,
			 uint32_t g, int inode)
{
	uint32_t unused;
	uint16_t flags;

	if (!fs->ext4 || !ext2fs_has_group_desc_csum(e))
		return 1;
	ext4_group_after(fs, g, &flags, &unused);
	return !(flags & (inode ? EXT2_BG_INODE_UNINIT : EXT2_BG_BLOCK_UNINIT));
}

/* Superblocks and descriptor tables (each copy) and the bitmaps the
 * flush writes, of every group. */
static errcode_t add_group_meta(ext2_filsys e, const struct fs_state *fs,
				struct blist *l)
{
	errcode_t err = 0;
	dgrp_t g;

	for (g = 0; !err && g < e->group_desc_count; g++) {
		blk64_t super = 0, old_desc = 0, new_desc = 0;
		blk_t used = 0;

		if (ext2fs_bg_has_super(e, g)) {
			err = ext2fs_super_and_bgd_loc2(e, g, &super, &old_desc,
							&new_desc, &used);
			if (!err)
				err = bl_add(l, super, 1);
			if (!err && old_desc)
				err = bl_add(l, old_desc, e->desc_blocks);
			if (!err && new_desc)
				err = bl_add(l, new_desc, 1);
		}
		if (!err && commit_writes_bitmap(e, fs, g, 0))
			err = bl_add(l, ext2fs_block_bitmap_loc(e, g), 1);
		if (!err && commit_writes_bitmap(e, fs, g, 1))
			err = bl_add(l, ext2fs_inode_bitmap_loc(e, g), 1);
	}
	return err;
}

/* write_inodes rewrites whole runs of table blocks: from the first
 * staged inode's block of a group to the last one's. */
static errcode_t add_itable_runs(ext2_filsys e, const struct inode_cache *c,
				 struct blist *l)
{
	uint32_t ipg = e->super->s_inodes_per_group;
	uint32_t isz = EXT2_INODE_SIZE(e->super), bs = e->blocksize;
	struct icache_it it = { 0, 0 };
	uint32_t ino = icache_next(c, &it);
	errcode_t err = 0;

	while (!err && ino) {
		uint32_t group = (ino - 1) / ipg;
		uint64_t first = (uint64_t)((ino - 1) % ipg) * isz / bs;
		uint64_t last = first;

		for (; ino && (ino - 1) / ipg == group; ino = icache_next(c, &it))
			last = (uint64_t)((ino - 1) % ipg) * isz / bs;
		err = bl_add(l, ext2fs_inode_table_loc(e, group) + first,
			     last - first + 1);
	}
	return err;
}

/*
 * An image file on a host filesystem that runs out of room: a write of
 * the commit into one of its holes fails half way, and writing the old
 * contents back (zeros, into holes) fails the same way.  So every block
 * the in-place commit writes (superblocks and descriptors, bitmaps, the
 * staged inodes' table blocks, the held writes and @extra, the journal's)
 * is allocated first; when it cannot be, nothing has been written.
 */
errcode_t reserve_commit(struct image *img, const struct fs_state *fs,
			 const blk64_t *extra, size_t nextra)
{
	ext2_filsys e = img->fs;
	uint32_t bs = e->blocksize;
	struct blist l = { 0 };
	struct stat st;
	errcode_t err;
	size_t i, k;

	if (img->lock_fd < 0 || fstat(img->lock_fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	err = add_group_meta(e, fs, &l);
	if (!err)
		err = add_itable_runs(e, &img->icache, &l);
	for (i = 0; !err && i < img->held.n; i++)
		err = bl_add(&l, img->held.late[i].blk, 1);
	for (i = 0; !err && i < nextra; i++)
		err = bl_add(&l, extra[i], 1);
	if (!err && l.n)
		qsort(l.b, l.n, sizeof(*l.b), blk_cmp);
	for (i = 0; !err && i < l.n; i = k) {
		for (k = i + 1; k < l.n && l.b[k] <= l.b[k - 1] + 1; k++)
			;
		off_t off = (off_t)(img->region.offset + l.b[i] * bs);
		off_t len = (off_t)(l.b[k - 1] - l.b[i] + 1) * bs;

		/* a failed run gives the reservation back (image_abort) */
		err = io_guard_note_holes(e->io, (unsigned long long)off,
					  (unsigned long long)len);
		if (!err)
			err = fill_holes(img->lock_fd, off, len);
	}
	free(l.b);
	return err == ENOSPC || err == EDQUOT || err == EFBIG ?
	       ORLOV_ERR_NO_HOST_SPACE : err;
}
