// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening the image for writing: refused when mounted, locked, checked
 * raw and then by the features the ext2 driver writes (the feature
 * gate), the way the commit will go chosen, and closed without a write.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ext2fs/ext2fs.h>
#include <e2p/e2p.h>

#include "image/image_int.h"
#include "image/image_read.h"
#include "image/io_guard.h"
#include "lib/orlov_err.h"

/* What the ext2 driver of Linux 6.1 mounts read-write. */
#define OK_INCOMPAT (EXT2_FEATURE_INCOMPAT_FILETYPE | EXT2_FEATURE_INCOMPAT_META_BG)
#define OK_RO_COMPAT (EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | \
		      EXT2_FEATURE_RO_COMPAT_LARGE_FILE | \
		      0x0004 /* btree_dir, never used */)
/* What the ext4 driver mounts besides, that orlov-populate writes. */
#define OK_RO_COMPAT_EXT4 EXT4_FEATURE_RO_COMPAT_METADATA_CSUM
#define OK_INCOMPAT_EXT4 EXT4_FEATURE_INCOMPAT_CSUM_SEED

static errcode_t check_features(ext2_filsys fs, int ext4,
				const char **feature)
{
	struct ext2_super_block *sb = fs->super;
	uint32_t bad, bit;

	if (sb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_RECOVER)
		return ORLOV_ERR_NEEDS_RECOVERY;
	if (!(sb->s_state & EXT2_VALID_FS) || (sb->s_state & EXT2_ERROR_FS))
		return ORLOV_ERR_NOT_CLEAN;
	bad = sb->s_feature_incompat & ~(uint32_t)OK_INCOMPAT &
	      ~(uint32_t)(ext4 ? OK_INCOMPAT_EXT4 : 0);
	for (bit = 0; bit < 32; bit++)
		if (bad & (1U << bit)) {
			*feature = e2p_feature2string(E2P_FEATURE_INCOMPAT, 1U << bit);
			return ORLOV_ERR_UNSUPP_FEATURE;
		}
	bad = sb->s_feature_ro_compat & ~(uint32_t)OK_RO_COMPAT &
	      ~(uint32_t)(ext4 ? OK_RO_COMPAT_EXT4 : 0);
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

/* A mounted image is refused.  When it cannot be told (no /proc/mounts
 * nor /etc/mtab: a chroot, a container), as mke2fs, the run goes on
 * with a warning; the flock and, for a device, the exclusive open still
 * keep other writers out. */
static errcode_t check_mounted(const char *path, const struct image_opts *opts)
{
	int mount_flags = 0;

	if (ext2fs_check_if_mounted(path, &mount_flags)) {
		if (opts->mount_unknown)
			*opts->mount_unknown = 1;
		mount_flags = 0;
	}
	return mount_flags & EXT2_MF_MOUNTED ? ORLOV_ERR_MOUNTED : 0;
}

/* The image locked, the copies killed runs left removed, its superblock
 * checked, and the copy the run writes made (img->shadow) where the
 * commit goes through one from the start. */
static errcode_t lock_and_prepare(struct image *img, const char *path,
				  const struct image_opts *opts,
				  const char **what)
{
	struct ext2_super_block sb;
	errcode_t err;

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
	} else if (!err && img->commit == IMAGE_COMMIT_AUTO && !opts->undo) {
		*what = "copying for the commit";
		err = choose_commit(img, opts, &sb);
	}
	return err;
}

/* libext2fs on @fsname (the image or its copy), through the undo file
 * when one is asked for; every later read and write through the guard
 * (io_guard.h). */
static errcode_t open_fs(struct image *img, const char *fsname,
			 const struct image_opts *opts, struct io_fault *f,
			 const char **what)
{
	io_manager io = unix_io_manager;
	io_channel guard;
	errcode_t err;

	/* EXCLUSIVE opens a block device with O_EXCL: refused while mounted
	 * or held by another exclusive opener (Linux ignores it for files,
	 * which the flock covers).  SKIP_MMP: an mmp image is refused below
	 * (incompat feature) and must not be left marked as being checked. */
	if (opts->undo) {
		/* Every block's first contents go to the undo file before the
		 * block is overwritten: e2undo UNDO IMAGE puts them back. */
		*what = "creating undo file";
		err = set_undo_io_backing_manager(unix_io_manager);
		if (!err)
			err = set_undo_io_backup_file((char *)opts->undo);
		if (err)
			return err;
		io = undo_io_manager;
		*what = "opening filesystem";
	}
	err = ext2fs_open2(fsname, NULL, (img->dry ? 0 : EXT2_FLAG_RW) |
			   EXT2_FLAG_64BITS |
			   EXT2_FLAG_EXCLUSIVE | EXT2_FLAG_SKIP_MMP, 0, 0,
			   io, &img->fs);
	if (err)
		return err;
	if (opts->has_now) {
		img->fs->now = (time_t)opts->now;
#ifdef EXT2_FLAG2_USE_FAKE_TIME
		img->fs->flags2 |= EXT2_FLAG2_USE_FAKE_TIME;
#endif
	}
	err = io_guard_wrap(img->fs->io, f, &guard);
	if (!err)
		img->fs->io = img->fs->image_io = guard;
	if (!err && ext2fs_has_feature_metadata_csum(img->fs->super))
		io_guard_whole_super(guard);
	*what = "checking filesystem";
	return err;
}

/* What the ext2 driver would refuse, a cut image; then the bitmaps. */
static errcode_t check_opened(struct image *img, const char *fsname,
			      int ext4, const char **what, const char **feature)
{
	errcode_t err = check_features(img->fs, ext4, feature);

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
	return err;
}

errcode_t image_open(const char *path, const struct image_opts *opts,
		     struct image **out, const char **what, const char **feature)
{
	static const struct image_opts none;
	const char *fsname;
	struct image *img;
	struct io_fault f;
	errcode_t err;

	opts = opts ? opts : &none;
	*what = "reading ORLOV_FAULT";
	err = io_guard_parse(opts->fault, &f);
	if (err)
		return err;
	*what = "checking whether mounted";
	err = check_mounted(path, opts);
	if (err)
		return err;
	img = calloc(1, sizeof(*img));
	if (!img)
		return ENOMEM;
	img->shadow_fd = img->lock_fd = -1;
	err = lock_and_prepare(img, path, opts, what);
	fsname = img->shadow ? img->shadow : path;
	if (!err)
		err = open_fs(img, fsname, opts, &f, what);
	if (!err)
		err = check_opened(img, fsname, opts->ext4, what, feature);
	/* before libext2fs has it open, the same as unlock and free */
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
