// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stddef.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <unistd.h>

#include <ext2fs/ext2fs.h>
#include <e2p/e2p.h>

#include "image/image_int.h"
#include "image/image_read.h"
#include "image/io_guard.h"
#include "lib/keymap.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* What the ext2 driver of Linux 6.1 mounts read-write. */
#define OK_INCOMPAT (EXT2_FEATURE_INCOMPAT_FILETYPE | EXT2_FEATURE_INCOMPAT_META_BG)
#define OK_RO_COMPAT (EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | \
		      EXT2_FEATURE_RO_COMPAT_LARGE_FILE | \
		      0x0004 /* btree_dir, never used */)

static errcode_t check_features(ext2_filsys fs, const char **feature)
{
	struct ext2_super_block *sb = fs->super;
	uint32_t bad, bit;

	if (sb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_RECOVER)
		return ORLOV_ERR_NEEDS_RECOVERY;
	if (!(sb->s_state & EXT2_VALID_FS) || (sb->s_state & EXT2_ERROR_FS))
		return ORLOV_ERR_NOT_CLEAN;
	bad = sb->s_feature_incompat & ~(uint32_t)OK_INCOMPAT;
	for (bit = 0; bit < 32; bit++)
		if (bad & (1U << bit)) {
			*feature = e2p_feature2string(E2P_FEATURE_INCOMPAT, 1U << bit);
			return ORLOV_ERR_UNSUPP_FEATURE;
		}
	bad = sb->s_feature_ro_compat & ~(uint32_t)OK_RO_COMPAT;
	for (bit = 0; bit < 32; bit++)
		if (bad & (1U << bit)) {
			*feature = e2p_feature2string(E2P_FEATURE_RO_INCOMPAT, 1U << bit);
			return ORLOV_ERR_UNSUPP_FEATURE;
		}
	if (fs->blocksize != 1024 && fs->blocksize != 2048 && fs->blocksize != 4096)
		return ORLOV_ERR_UNSUPP_BLOCKSIZE;
	return 0;
}

/* A cut image would be grown by the first write past its end, and its
 * missing blocks read as zeros: refuse it. */
static errcode_t check_size(ext2_filsys fs, const char *path)
{
	blk64_t have;
	errcode_t err = ext2fs_get_device_size2(path, (int)fs->blocksize, &have);

	if (err)
		return err;
	return have < ext2fs_blocks_count(fs->super) ? ORLOV_ERR_SHORT_IMAGE : 0;
}

/* Are the @len bytes at @p all zero? */
static int zeros(const unsigned char *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

errcode_t image_probe(const char *path, enum image_probe *kind)
{
	size_t cap = 1 << 16;
	unsigned char *buf;
	struct stat st;
	off_t off = 0, end;
	errcode_t err = 0;
	int fd;

	*kind = PROBE_MISSING;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : (errcode_t)errno;
	buf = malloc(cap);
	if (!buf || fstat(fd, &st)) {
		err = buf ? (errcode_t)errno : ENOMEM;
		goto out;
	}
	*kind = PROBE_OTHER;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		goto out;
	/* the superblock's magic, where a filesystem made by mke2fs has it */
	if (pread(fd, buf, 1082, 0) == 1082 &&
	    get_le16(buf + 1024 + offsetof(struct ext2_super_block, s_magic)) ==
	    EXT2_SUPER_MAGIC) {
		*kind = PROBE_EXT;
		goto out;
	}
	/* Only zeros: nothing to lose (a file made with truncate or
	 * fallocate).  Of a device, its first MiB. */
	end = S_ISREG(st.st_mode) ? st.st_size : 1 << 20;
	while (off < end) {
		off_t data = S_ISREG(st.st_mode) ? lseek(fd, off, SEEK_DATA) : off;
		ssize_t n;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			data = off;
		if (data >= end)
			break;
		n = pread(fd, buf, (size_t)(end - data) < cap ?
			  (size_t)(end - data) : cap, data);
		if (n <= 0 || !zeros(buf, (size_t)n))
			goto out;
		off = data + n;
	}
	*kind = PROBE_EMPTY;
out:
	free(buf);
	close(fd);
	return err;
}

/*
 * The default for an image file (IMAGE_COMMIT_AUTO): an ext3 journal
 * makes the commit atomic in place; without one, the run writes a copy.
 * Where a copy cannot be made or would change what the name stands for
 * (another hard link), the image is written in place, and *why says so.
 */
static errcode_t choose_commit(struct image *img, const struct image_opts *o,
				const struct ext2_super_block *sb)
{
	struct stat st;
	enum temp_step step;
	errcode_t err;

	if (fstat(img->lock_fd, &st))
		return (errcode_t)errno;
	if (!S_ISREG(st.st_mode))
		return 0;	/* a device: nothing to rename over it */
	if (ext2fs_le32_to_cpu(sb->s_feature_compat) &
	    EXT3_FEATURE_COMPAT_HAS_JOURNAL) {
		/* through the journal; if it cannot take the commit, a copy
		 * then, with the new blocks already in it, or in place */
		img->copy_at_commit = st.st_nlink == 1;
		if (!img->copy_at_commit)
			img->links_why = o->in_place_why;
		return 0;
	}
	if (st.st_nlink != 1) {
		if (o->in_place_why)
			*o->in_place_why = LINKS_WHY;
		return 0;
	}
	err = open_shadow(img, 1, &step);
	if (err == ENOMEM)
		return err;
	if (err) {
		drop_shadow(img);
		if (o->in_place_why)
			*o->in_place_why = err == ENOSPC || err == EDQUOT ?
			"there is no room for a copy next to it" :
			step == TEMP_CREATE ? "its directory takes no new file" :
			step == TEMP_OWNER ? "a copy could not have its owner" :
			step == TEMP_XATTR ? "a copy could not have its ACL "
					     "and extended attributes" :
			"a copy of it could not be made";
	}
	return 0;
}

errcode_t image_open(const char *path, const struct image_opts *opts,
		     struct image **out, const char **what, const char **feature)
{
	static const struct image_opts none;
	const char *undo, *fsname = path;
	struct ext2_super_block sb;
	struct image *img;
	io_manager io = unix_io_manager;
	struct io_fault f;
	io_channel guard;
	errcode_t err;
	int mount_flags = 0;

	opts = opts ? opts : &none;
	undo = opts->undo;
	*what = "reading ORLOV_FAULT";
	err = io_guard_parse(opts->fault, &f);
	if (err)
		return err;

	*what = "checking whether mounted";
	err = ext2fs_check_if_mounted(path, &mount_flags);
	if (err) {
		/* No /proc/mounts nor /etc/mtab (a chroot, a container): as
		 * mke2fs, go on with a warning; the flock and, for a device,
		 * the exclusive open still keep other writers out. */
		if (opts->mount_unknown)
			*opts->mount_unknown = 1;
		mount_flags = 0;
	}
	if (mount_flags & EXT2_MF_MOUNTED)
		return ORLOV_ERR_MOUNTED;

	img = calloc(1, sizeof(*img));
	if (!img)
		return ENOMEM;
	img->shadow_fd = img->lock_fd = -1;
	*what = "opening filesystem";
	img->dry = opts && opts->dry;
	err = lock_image(path, img->dry, opts->held_fd ? *opts->held_fd : -1,
			 &img->lock_fd);
	/* the lock is ours: what killed runs left can go, before this run
	 * makes a copy of its own */
	if (!err && !img->dry) {
		unsigned int n = 0;

		image_remove_stale(path, &n);
		if (opts->stale)
			*opts->stale += n;
	}
	if (!err) {
		*what = "checking superblock of";
		err = ir_check_super(path, &sb);
	}
	img->commit = img->dry ? IMAGE_COMMIT_IN_PLACE : opts->commit;
	if (!err && !(img->path = strdup(path)))
		err = ENOMEM;
	if (!err && img->commit == IMAGE_COMMIT_COPY) {
		enum temp_step step;

		*what = "copying for --atomic";
		err = open_shadow(img, 0, &step);
	} else if (!err && img->commit == IMAGE_COMMIT_AUTO && !undo) {
		*what = "copying for the commit";
		err = choose_commit(img, opts, &sb);
	}
	if (img->shadow)
		fsname = img->shadow;
	if (err) {
		unlock_image(img);
		free(img);
		return err;
	}
	/* EXCLUSIVE opens a block device with O_EXCL: refused while mounted
	 * or held by another exclusive opener (Linux ignores it for files,
	 * which the flock covers).  SKIP_MMP: an mmp image is refused below
	 * (incompat feature) and must not be left marked as being checked. */
	if (undo) {
		/* Every block's first contents go to the undo file before the
		 * block is overwritten: e2undo UNDO IMAGE puts them back. */
		*what = "creating undo file";
		err = set_undo_io_backing_manager(unix_io_manager);
		if (!err)
			err = set_undo_io_backup_file((char *)undo);
		if (err) {
			unlock_image(img);
			free(img);
			return err;
		}
		io = undo_io_manager;
		*what = "opening filesystem";
	}
	err = ext2fs_open2(fsname, NULL, (img->dry ? 0 : EXT2_FLAG_RW) |
			   EXT2_FLAG_64BITS |
			   EXT2_FLAG_EXCLUSIVE | EXT2_FLAG_SKIP_MMP, 0, 0,
			   io, &img->fs);
	if (err) {
		unlock_image(img);
		free(img);
		return err;
	}
	if (opts && opts->has_now) {
		img->fs->now = (time_t)opts->now;
#ifdef EXT2_FLAG2_USE_FAKE_TIME
		img->fs->flags2 |= EXT2_FLAG2_USE_FAKE_TIME;
#endif
	}
	/* Every later read and write goes through the guard (io_guard.h). */
	err = io_guard_wrap(img->fs->io, &f, &guard);
	if (!err)
		img->fs->io = img->fs->image_io = guard;
	*what = "checking filesystem";
	if (err) {
		image_abort(img);
		return err;
	}
	err = check_features(img->fs, feature);
	if (!err)
		err = check_size(img->fs, fsname);
	if (!err) {
		*what = "reading bitmaps";
		err = ext2fs_read_bitmaps(img->fs);
	}
	if (!err) {
		img->buf = malloc(img->fs->blocksize);
		img->ibuf = malloc(EXT2_INODE_SIZE(img->fs->super));
		if (!img->buf || !img->ibuf)
			err = ENOMEM;
	}
	if (err) {
		image_abort(img);
		return err;
	}
	*out = img;
	return 0;
}

void image_abort(struct image *img)
{
	if (!img)
		return;
	if (img->fs) {
		/* Forget every change: nothing dirty may reach the disk. */
		img->fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY |
				    EXT2_FLAG_IB_DIRTY);
		ext2fs_free(img->fs);
	}
	free_held(img);
	free(img->buf);
	free(img->ibuf);
	unlock_image(img);
	free(img);
}

void image_hash_seed(const struct image *img, uint32_t seed[4])
{
	const unsigned char *s = (const unsigned char *)img->fs->super->s_hash_seed;
	int i;

	for (i = 0; i < 4; i++)
		seed[i] = (uint32_t)s[4 * i] | (uint32_t)s[4 * i + 1] << 8 |
			  (uint32_t)s[4 * i + 2] << 16 | (uint32_t)s[4 * i + 3] << 24;
}

int image_has_filetype(const struct image *img)
{
	return ext2fs_has_feature_filetype(img->fs->super);
}

int image_dir_hash(const struct image *img, int *def_version, int *unsigned_adj)
{
	struct ext2_super_block *sb = img->fs->super;

	*def_version = sb->s_def_hash_version;
	/* ext4_fill_super: s_hash_unsigned is 3 with the unsigned flag */
	*unsigned_adj = (sb->s_flags & EXT2_FLAGS_UNSIGNED_HASH) ? 3 : 0;
	return ext2fs_has_feature_dir_index(sb);
}

void image_set_large_file(struct image *img)
{
	ext2fs_set_feature_large_file(img->fs->super);
}

int image_user_xattr(const struct image *img)
{
	return !!(img->fs->super->s_default_mount_opts & EXT2_DEFM_XATTR_USER);
}

int image_posix_acl(const struct image *img)
{
	/* IS_POSIXACL after a mount without acl/noacl options */
	return !!(img->fs->super->s_default_mount_opts & EXT2_DEFM_ACL);
}

void image_set_ext_attr(struct image *img)
{
	/* ext2_xattr_update_super_block, on the first new attribute block */
	ext2fs_set_feature_xattr(img->fs->super);
}
