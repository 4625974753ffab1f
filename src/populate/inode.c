// SPDX-License-Identifier: GPL-2.0-or-later
/* The inodes the write pass makes: from a source entry's metadata, with
 * the block map and attribute space the model gave them. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>

#include "lib/owner.h"
#include "populate/inode.h"
#include "source/meta.h"

static uint32_t extra_time(const struct timespec *ts)
{
	int64_t sec = (int64_t)ts->tv_sec;
	uint32_t epoch = (uint32_t)(((sec - (int64_t)(int32_t)sec) >> 32) & 3);

	return ((uint32_t)ts->tv_nsec << 2) | epoch;
}

uint32_t mask_flags(mode_t mode, uint32_t flags)
{
	if (S_ISDIR(mode))
		return flags;
	if (S_ISREG(mode))
		return flags & FL_REG_MASK;
	return flags & FL_OTHER_MASK;
}

void fill_inode(const struct pop_ctx *c, const struct src_entry *e,
		uint32_t flags, struct ext2_inode_large *in)
{
	const struct stat *st = &e->st;
	int extra = c->fs.g.inode_size >= EXT2_GOOD_OLD_INODE_SIZE + 32;
	struct timespec at = st->st_atim, mt = st->st_mtim, ct = st->st_ctim;
	int64_t tmin, tmax;

	meta_time_range(extra, &tmin, &tmax);
	meta_fit_time(&at, tmin, tmax);
	meta_fit_time(&mt, tmin, tmax);
	meta_fit_time(&ct, tmin, tmax);
	memset(in, 0, sizeof(*in));
	in->i_mode = (uint16_t)st->st_mode;
	inode_set_uid(*in, st->st_uid);
	inode_set_gid(*in, st->st_gid);
	in->i_atime = (uint32_t)at.tv_sec;
	in->i_mtime = (uint32_t)mt.tv_sec;
	in->i_ctime = (uint32_t)ct.tv_sec;
	in->i_links_count = 1;
	in->i_flags = flags;
	if (extra) {
		/* Room for the nanosecond fields, as mke2fs sizes them. */
		in->i_extra_isize = 32;
		in->i_atime_extra = extra_time(&at);
		in->i_mtime_extra = extra_time(&mt);
		in->i_ctime_extra = extra_time(&ct);
	}
}

void set_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		const struct ifile *f, fsblk_t xblk)
{
	uint64_t sectors = (f->nblocks + (xblk ? 1 : 0)) *
			   (c->fs.g.block_size / 512);

	inode_set_xattr_block(in, xblk);
	ifile_i_block(f, in->i_block);
	if (f->extents)
		in->i_flags |= EXT4_EXTENTS_FL;
	/* ext4_inode_blocks_set: past 2^32 sectors the high half goes to
	 * l_i_blocks_hi (huge_file; without it s_maxbytes keeps files
	 * below), past 2^48 the count is in blocks, EXT4_HUGE_FILE_FL */
	if (sectors >> 48) {
		sectors /= c->fs.g.block_size / 512;
		in->i_flags |= EXT4_HUGE_FILE_FL;
	}
	in->i_blocks = (uint32_t)sectors;
	in->osd2.linux2.l_i_blocks_hi = (uint16_t)(sectors >> 32);
}

void set_inline_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		       fsblk_t xblk)
{
	inode_set_xattr_block(in, xblk);
	/* ext4_create_inline_data: EXTENTS_FL off, INLINE_DATA_FL on */
	in->i_flags = (in->i_flags & ~(uint32_t)EXT4_EXTENTS_FL) |
		      EXT4_INLINE_DATA_FL;
	in->i_blocks = xblk ? c->fs.g.block_size / 512 : 0;
	in->osd2.linux2.l_i_blocks_hi = 0;
}

void set_dir_blocks(const struct pop_ctx *c, struct ext2_inode_large *in,
		    const struct dirbuf *d, fsblk_t xblk)
{
	in->i_size = (uint32_t)dir_size(d, c->fs.g.block_size);
	if (d->inline_dir) {
		set_inline_blocks(c, in, xblk);
		memcpy(in->i_block, d->inl, sizeof(d->inl));
		return;
	}
	/* converted, or never inline */
	in->i_flags &= ~(uint32_t)EXT4_INLINE_DATA_FL;
	set_blocks(c, in, &d->map, xblk);
}

/* Mode bits, owners and times of @e onto an inode the image has. */
void take_attrs(const struct pop_ctx *c, const struct src_entry *e,
		struct ext2_inode_large *in)
{
	struct ext2_inode_large fresh;

	fill_inode(c, e, in->i_flags, &fresh);
	in->i_mode = (uint16_t)((in->i_mode & S_IFMT) | (fresh.i_mode & 07777));
	inode_set_uid(*in, inode_uid(fresh));
	inode_set_gid(*in, inode_gid(fresh));
	in->i_atime = fresh.i_atime;
	in->i_mtime = fresh.i_mtime;
	in->i_ctime = fresh.i_ctime;
	if (in->i_extra_isize >= 24 && fresh.i_extra_isize) {
		in->i_atime_extra = fresh.i_atime_extra;
		in->i_mtime_extra = fresh.i_mtime_extra;
		in->i_ctime_extra = fresh.i_ctime_extra;
	}
}

void take_mode_owner(const struct src_entry *e, struct ext2_inode_large *in)
{
	in->i_mode = (uint16_t)((in->i_mode & S_IFMT) | (e->st.st_mode & 07777));
	inode_set_uid(*in, e->st.st_uid);
	inode_set_gid(*in, e->st.st_gid);
}

/* ext4: a new inode's attribute space (i_extra_isize 32, zeroed as
 * __ext4_new_inode leaves it); none for small inodes or ext2. */
errcode_t ibody_new(struct pop_ctx *c, struct ifile *f)
{
	size_t n = c->drv->xattr_ibody ? image_inode_tail_size(c->img) : 0;

	if (f->ibody)
		return 0;	/* an inline directory's, read with it */
	/* EXT4_INODE_HAS_XATTR_SPACE: the header and a terminator fit */
	if (n < 8)
		return 0;
	f->ibody = calloc(1, n);
	if (!f->ibody)
		return ENOMEM;
	f->ibody_size = n;
	return 0;
}

errcode_t stage_inode(struct pop_ctx *c, const struct ifile *f,
		      const struct ext2_inode_large *in)
{
	errcode_t err = image_stage_inode(c->img, f->ino, in);

	if (!err && f->ibody)
		err = image_stage_inode_tail(c->img, f->ino, f->ibody);
	return err;
}

/* The blocks of a directory the image has (@in its inode) into @d, set
 * up by dirbuf_init: an htree where ext4 would use its index. */
errcode_t load_dir(struct pop_ctx *c, const struct ext2_inode_large *in,
		   struct dirbuf *d)
{
	errcode_t err = image_load_dir(c->img, &c->fs, in, d);

	d->indexed = c->fs.dx.enabled && (in->i_flags & EXT2_INDEX_FL) &&
		     dir_nblocks(d) > 1;
	d->cf = (in->i_flags & EXT4_CASEFOLD_FL) ? c->fs.dx.encoding : NULL;
	return err;
}

/* The device number in i_block: old_encode_dev when it fits, else
 * new_encode_dev. */
void inode_set_rdev(struct ext2_inode_large *in, dev_t rdev)
{
	unsigned int ma = major(rdev), mi = minor(rdev);

	if (ma < 256 && mi < 256)
		in->i_block[0] = (ma << 8) | mi;
	else
		in->i_block[1] = (mi & 0xff) | (ma << 8) | ((mi & ~0xffU) << 12);
}
