// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening the image for writing: refused when mounted, locked, checked
 * raw and then by the features the chosen driver writes (the feature
 * gate), the way the commit will go chosen, and closed without a write.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ext2fs/ext2fs.h>
#include <e2p/e2p.h>

#include "image/image_int.h"
#include "image/image_read.h"
#include "image/io_guard.h"
#include "lib/procstate.h"
#include "lib/orlov_err.h"

/*
 * The gate: the features written here, each with the driver that writes
 * it.  The ext2 driver of Linux 6.1 mounts read-write only its own; the
 * ext4 driver's (the image mounted -t ext4) are refused with --driver
 * ext2.  Anything not listed is refused, named.
 */
static const struct gate_line {
	int type;		/* E2P_FEATURE_INCOMPAT or _RO_INCOMPAT */
	uint32_t mask;
	int ext4;		/* the ext4 driver's only */
} gate[] = {
	{ E2P_FEATURE_INCOMPAT, EXT2_FEATURE_INCOMPAT_FILETYPE, 0 },
	{ E2P_FEATURE_INCOMPAT, EXT2_FEATURE_INCOMPAT_META_BG, 0 },
	{ E2P_FEATURE_RO_INCOMPAT, EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER, 0 },
	{ E2P_FEATURE_RO_INCOMPAT, EXT2_FEATURE_RO_COMPAT_LARGE_FILE, 0 },
	{ E2P_FEATURE_RO_INCOMPAT, 0x0004 /* btree_dir, never used */, 0 },
	/* lazy init: bg_flags and bg_itable_unused (model/ext4/ialloc.h) */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_GDT_CSUM, 1 },
	/* htree directories past EXT4_LINK_MAX (populate/check.c) */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_DIR_NLINK, 1 },
	/* new inodes get i_extra_isize 32 (extra_isize_ok below) */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE, 1 },
	/* i_blocks past 2^32 sectors: no file here gets there */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_HUGE_FILE, 1 },
	/* every metadata block with its checksum (dir tails in model/dir.c),
	 * the journal's v3 checksums (journal.c) */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_METADATA_CSUM, 1 },
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_CSUM_SEED, 1 },
	/* new files and directories mapped by extents (model/ext4/extents.h) */
	{ E2P_FEATURE_INCOMPAT, EXT3_FEATURE_INCOMPAT_EXTENTS, 1 },
	/* inodes and blocks placed over flex groups (model/ext4/ialloc.h) */
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_FLEX_BG, 1 },
	/* 64-byte group descriptors (libext2fs's); block numbers past
	 * 2^32 are refused below */
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_64BIT, 1 },
	/* what may be encrypted or verity-protected later: everything
	 * written here is a plain file, as mke2fs -d writes it, and an
	 * unencrypted directory hashes its names as any other */
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_ENCRYPT, 1 },
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_VERITY, 1 },
	/* directories with EXT4_CASEFOLD_FL hash and compare their names
	 * casefolded (model/casefold.h); the encoding must be one libext2fs
	 * folds, as the kernel's mount needs one it knows */
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_CASEFOLD, 1 },
	/* small files and directories in the inode (model/ext4/inline.h):
	 * the ext2 driver cannot mount such an image */
	{ E2P_FEATURE_INCOMPAT, EXT4_FEATURE_INCOMPAT_INLINE_DATA, 1 },
	/* usage kept in the hidden quota inodes (image/quota.c): the ext2
	 * driver cannot write such an image */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_QUOTA, 1 },
	/* project ids in the large inode (a new inode's 0, or its
	 * PROJINHERIT parent's: populate/quota.c), a third quota file when
	 * quota is on */
	{ E2P_FEATURE_RO_INCOMPAT, EXT4_FEATURE_RO_COMPAT_PROJECT, 1 },
};

/* The first bit of @have of kind @type that the gate refuses, or 0. */
static uint32_t refused_bit(int type, uint32_t have, int ext4)
{
	uint32_t ok = 0, bit;
	size_t i;

	for (i = 0; i < sizeof(gate) / sizeof(gate[0]); i++)
		if (gate[i].type == type && (ext4 || !gate[i].ext4))
			ok |= gate[i].mask;
	for (bit = 1; bit; bit <<= 1)
		if (have & bit & ~ok)
			return bit;
	return 0;
}

/* An ext4 image, as blkid and so mount name it: a feature of the ext4
 * driver's only. */
static int ext4_only(const struct ext2_super_block *sb)
{
	size_t i;

	for (i = 0; i < sizeof(gate) / sizeof(gate[0]); i++)
		if (gate[i].ext4 &&
		    ((gate[i].type == E2P_FEATURE_INCOMPAT ?
		      sb->s_feature_incompat : sb->s_feature_ro_compat) &
		     gate[i].mask))
			return 1;
	return 0;
}

void image_mount_defaults(const char *path, const struct image_region *region,
			  int *ext4, int *delalloc)
{
	struct ext2_super_block sb;

	*ext4 = *delalloc = 0;
	/* unreadable or no ext2: image_open says why */
	if (ir_check_super_at(path, region ? region->offset : 0, &sb))
		return;
	*ext4 = ext4_only(&sb);
	/* ext4_fill_super: delalloc unless the superblock says nodelalloc */
	*delalloc = *ext4 &&
		    !(sb.s_default_mount_opts & EXT4_DEFM_NODELALLOC);
}

/* ext4_clamp_want_extra_isize: with extra_isize, the superblock may ask
 * for more than the 32 bytes new inodes get here. */
static int extra_isize_ok(struct ext2_super_block *sb)
{
	return !ext2fs_has_feature_extra_isize(sb) ||
	       EXT2_INODE_SIZE(sb) <= EXT2_GOOD_OLD_INODE_SIZE ||
	       (sb->s_want_extra_isize <= 32 && sb->s_min_extra_isize <= 32);
}

static errcode_t check_features(ext2_filsys fs, int ext4, const char **feature)
{
	struct ext2_super_block *sb = fs->super;
	uint32_t bit;

	if (sb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_RECOVER)
		return ORLOV_ERR_NEEDS_RECOVERY;
	if (!(sb->s_state & EXT2_VALID_FS) || (sb->s_state & EXT2_ERROR_FS))
		return ORLOV_ERR_NOT_CLEAN;
	bit = refused_bit(E2P_FEATURE_INCOMPAT, sb->s_feature_incompat, ext4);
	if (bit) {
		*feature = e2p_feature2string(E2P_FEATURE_INCOMPAT, bit);
		return ORLOV_ERR_UNSUPP_FEATURE;
	}
	if (ext2fs_has_feature_casefold(sb) && !fs->encoding) {
		*feature = "casefold with an unknown encoding";
		return ORLOV_ERR_UNSUPP_FEATURE;
	}
	/* inline directories with casefolded names: not checked against
	 * the kernel */
	if (ext4 && ext2fs_has_feature_casefold(sb) &&
	    ext2fs_has_feature_inline_data(sb)) {
		*feature = "inline_data with casefold";
		return ORLOV_ERR_UNSUPP_FEATURE;
	}
	/* past 2^32 blocks only extent-mapped files can reach every block
	 * (mke2fs makes no such image without extents either) */
	if (ext2fs_blocks_count(sb) > UINT32_MAX &&
	    !ext2fs_has_feature_extents(sb)) {
		*feature = "64bit without extent (more than 2^32 blocks)";
		return ORLOV_ERR_UNSUPP_FEATURE;
	}
	bit = refused_bit(E2P_FEATURE_RO_INCOMPAT, sb->s_feature_ro_compat, ext4);
	if (!bit && !extra_isize_ok(sb))
		bit = EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE;
	if (bit) {
		*feature = e2p_feature2string(E2P_FEATURE_RO_INCOMPAT, bit);
		return ORLOV_ERR_UNSUPP_FEATURE;
	}
	if (fs->blocksize != 1024 && fs->blocksize != 2048 && fs->blocksize != 4096)
		return ORLOV_ERR_UNSUPP_BLOCKSIZE;
	/* ext4_get_stripe_size: mballoc's goal and scan align to it (the
	 * ext2 driver never reads it) */
	if (ext4 && (sb->s_raid_stride || sb->s_raid_stripe_width))
		return ORLOV_ERR_RAID_STRIPE;
	return 0;
}

/* A cut image would be grown by the first write past its end, and its
 * missing blocks read as zeros: refuse it.  In a partition, the
 * filesystem must end where the partition does, or before: past it lies
 * the next partition. */
static errcode_t check_size(ext2_filsys fs, const char *path,
			    const struct image_region *r)
{
	uint64_t need = ext2fs_blocks_count(fs->super) * (uint64_t)fs->blocksize;
	blk64_t have;
	errcode_t err = image_region_fits(r, need);

	if (!err)
		err = ext2fs_get_device_size2(path, 512, &have);
	if (err)
		return err;
	return (uint64_t)have * 512 < r->offset + need ? ORLOV_ERR_SHORT_IMAGE : 0;
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
	/* a partition: its journal, else in place (REGION_WHY), never a
	 * copy of the whole disk */
	if (img->region.offset || img->region.size) {
		img->in_place = REGION_WHY;
		img->links_why = o->in_place_why;
		return 0;
	}
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

	if (proc_check_if_mounted(path, &mount_flags)) {
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
	if (opts->region)
		img->region = *opts->region;
	err = lock_image(path, img->dry, opts->held_fd ? *opts->held_fd : -1,
			 &img->lock_fd);
	/* the lock is ours: a killed copy into the disk put back (a dry run
	 * writes nothing: refused), and what killed runs left can go,
	 * before this run makes a copy of its own */
	if (!err) {
		*what = img->dry ? "opening" : "putting back the old bytes from "
			"the rollback file next to";
		err = image_rollback_pending(path, !img->dry, opts->restored);
	}
	if (!err && !img->dry) {
		unsigned int n = 0;

		image_remove_stale(path, &n);
		if (opts->stale)
			*opts->stale += n;
	}
	if (!err) {
		*what = "checking superblock of";
		err = ir_check_super_at(path, img->region.offset, &sb);
	}
	img->commit = img->dry ? IMAGE_COMMIT_IN_PLACE : opts->commit;
	if (!err && img->commit == IMAGE_COMMIT_COPY &&
	    (img->region.offset || img->region.size))
		err = ORLOV_ERR_ATOMIC_REGION;
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

/* A regular file (a device has no holes to give back). */
static int image_is_file(const struct image *img)
{
	struct stat st;

	return img->lock_fd >= 0 && !fstat(img->lock_fd, &st) &&
	       S_ISREG(st.st_mode);
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
	char offset[32];
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
	/* the partition's first byte is the filesystem's block 0 for every
	 * read and write (unix_io's offset, the undo file's fs_offset) */
	err = ext2fs_open2(fsname, image_region_io(&img->region, offset,
						   sizeof(offset)),
			   (img->dry ? 0 : EXT2_FLAG_RW) |
			   EXT2_FLAG_64BITS |
			   EXT2_FLAG_EXCLUSIVE | EXT2_FLAG_SKIP_MMP, 0, 0,
			   io, &img->fs);
	if (err)
		return err;
	/* unix_io's block cache: libext2fs 1.47.0 (Debian 12) keeps clean
	 * cached blocks across a direct write of more than four blocks, so
	 * an inode-table block read earlier and then rewritten in one run of
	 * new inodes came back stale to the next one-block read, and the
	 * existing inodes' pass wrote the new ones back as zeros (fixed in
	 * 1.47.3, "fix unix io manager invalidation").  Every read goes to
	 * the file instead: the tool reads what it stages only once. */
	err = io_channel_set_options(img->fs->io, "cache=off");
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
	/* the image file itself is written: what a failed run allocated
	 * in it is given back (a copy is removed, a new file unlinked) */
	if (!err && !img->dry && !img->shadow &&
	    img->commit != IMAGE_COMMIT_UNSEEN && image_is_file(img))
		err = io_guard_track_holes(guard, img->lock_fd,
					   img->region.offset);
	/* the file the run writes: the image, or the copy of it it writes
	 * instead (ext2's, --atomic's) */
	if (!err && !img->dry && img->shadow)
		io_guard_write_behind(guard, img->shadow_fd);
	else if (!err && !img->dry && image_is_file(img))
		io_guard_write_behind(guard, img->lock_fd);
	/* whole superblocks also through the undo manager at an offset:
	 * its write_byte (e2fsprogs 1.47) adds the offset twice and saves
	 * the wrong block, which e2undo then puts back */
	if (!err && (ext2fs_has_feature_metadata_csum(img->fs->super) ||
		     (opts->undo && img->region.offset)))
		io_guard_whole_super(guard);
	*what = "checking filesystem";
	return err;
}

/* Past this many blocks (a 32 MiB flat bitmap) the bitmaps are kept as
 * runs, not bits. */
#define BIG_FS_BLOCKS (1ULL << 28)

/* What the driver would refuse, a cut image; then the bitmaps. */
static errcode_t check_opened(struct image *img, const char *fsname,
			      int ext4, const char **what, const char **feature)
{
	errcode_t err = check_features(img->fs, ext4, feature);

	if (!err)
		err = check_size(img->fs, fsname, &img->region);
	if (!err) {
		*what = "reading bitmaps";
		/* libext2fs's default bitmap is a flat array: 640 MiB for
		 * a 20 TiB image of 4 KiB blocks, nearly all of it zeros;
		 * its red-black tree of runs holds such a map in a few */
		if (ext2fs_blocks_count(img->fs->super) > BIG_FS_BLOCKS)
			img->fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
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

/* What image_open's step @what failed at, on @path named @name: with the
 * feature refused, or what the file is when it is no ext2 filesystem. */
static errcode_t open_failed(struct errctx *ec, errcode_t err,
			     const char *what, const char *feature,
			     const char *path, const char *name,
			     const struct image_region *r)
{
	char kind[256];
	const char *is = err == ORLOV_ERR_NOT_EXT2 && !(r && r->offset) ?
			 ir_probe(path, kind, sizeof(kind)) : NULL;

	if (err == ORLOV_ERR_NOT_EXT2 && r && r->offset)
		return errctx_setf(ec, err, what, "%s (none at byte %llu)", name,
				   (unsigned long long)r->offset);
	if (is)
		return errctx_setf(ec, err, what, "%s: %s", name, is);
	if (feature)
		return errctx_setf(ec, err, what, "%s (feature %s)", name,
				   feature);
	return errctx_set(ec, err, what, name);
}

errcode_t image_open(const char *path, const struct image_opts *opts,
		     struct image **out, struct errctx *ec)
{
	static const struct image_opts none;
	const char *fsname, *what, *feature = NULL;
	struct image *img = NULL;
	struct io_fault f;
	errcode_t err;

	opts = opts ? opts : &none;
	what = "reading the injected fault";
	err = io_guard_parse(opts->fault, &f);
	if (!err) {
		what = "checking whether mounted";
		err = check_mounted(path, opts);
	}
	if (!err && !(img = calloc(1, sizeof(*img))))
		err = ENOMEM;
	if (!err) {
		img->shadow_fd = img->lock_fd = -1;
		img->name = opts->name ? opts->name : path;
		img->stage_budget = opts->stage_budget;
		err = lock_and_prepare(img, path, opts, &what);
		fsname = img->shadow ? img->shadow : path;
		if (!err)
			err = open_fs(img, fsname, opts, &f, &what);
		if (!err)
			err = check_opened(img, fsname, opts->ext4_driver,
					   &what, &feature);
	}
	if (err) {
		/* before libext2fs has it open, the same as unlock and free */
		image_abort(img);
		return open_failed(ec, err, what, feature, path,
				   opts->name ? opts->name : path, opts->region);
	}
	*out = img;
	return 0;
}

/* The lock dropped, the copy of a run that failed removed. */
static void unlock_image(struct image *img)
{
	if (img->lock_fd >= 0)
		close(img->lock_fd);	/* drops the flock */
	img->lock_fd = -1;
	drop_shadow(img);	/* after the rename, only frees */
	free(img->path);
	img->path = NULL;
}

void image_abort(struct image *img)
{
	if (!img)
		return;
	if (img->fs) {
		/* Every block in use is as it was: what the run wrote in
		 * free blocks goes, and the holes it filled come back
		 * (best effort: the run's own error is the one reported) */
		(void)io_guard_give_back(img->fs->io);
		/* Forget every change: nothing dirty may reach the disk. */
		img->fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY |
				    EXT2_FLAG_IB_DIRTY);
		ext2fs_free(img->fs);
	}
	free_held(img);
	quota_charges_free(&img->qc);
	free(img->buf);
	free(img->ibuf);
	unlock_image(img);
	free(img);
}
