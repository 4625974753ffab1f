// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commit: everything staged, and the model's bitmaps and counts,
 * written so that an interruption leaves the old filesystem or one that
 * e2fsck or journal recovery makes the new one.  Three ways: in place in
 * an order e2fsck repairs, through the image's journal (journal.c), or
 * into a copy renamed over the image (shadow.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/bridge.h"
#include "image/capture.h"
#include "image/image_int.h"
#include "image/io_guard.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* The primary superblock alone (libext2fs flushes before and after). */
static errcode_t write_super_only(ext2_filsys e)
{
	const int only = EXT2_FLAG_SUPER_ONLY | EXT2_FLAG_MASTER_SB_ONLY;
	int had = e->flags & only;
	errcode_t err;

	e->flags |= only;
	err = ext2fs_flush2(e, 0);
	e->flags = (e->flags & ~only) | had;
	return err;
}

/*
 * Everything that changes blocks in use, in an order where each prefix is
 * the old filesystem or one e2fsck repairs without losing a file that was
 * there before: marked unclean, then "allocate before reference" (bitmaps
 * and counts, then the new inodes, unreachable until the last step), then
 * the link from the target directory, then clean again.
 */
static errcode_t commit_in_place(struct image *img, const struct fs_state *fs,
				 const char **what)
{
	ext2_filsys e = img->fs;
	uint16_t state = e->super->s_state;
	errcode_t err;

	/* Interrupted from here on, the filesystem is unclean, as after a
	 * crash with it mounted: fsck -p checks it at boot, and this tool
	 * and mount warn or refuse until then. */
	*what = "starting the commit of";
	e->super->s_state = (uint16_t)(state & ~EXT2_VALID_FS);
	err = write_super_only(e);
	if (err)
		return err;
	/* Blocks and inodes in use that nothing references yet: e2fsck
	 * gives them back. */
	*what = "updating bitmaps of";
	err = image_store_state(img, fs);
	if (!err)
		err = ext2fs_flush2(e, 0);
	if (err)
		return err;
	/* Refcounts of attribute blocks already on disk grow before the new
	 * inodes that share them; those inodes are reachable only from
	 * each other until the link (e2fsck -y: lost+found). */
	*what = "writing attribute blocks of";
	err = write_late(img, &img->held, 0);
	*what = "writing inodes of";
	if (!err)
		err = write_inodes(img, &img->icache, 0);
	if (!err)
		err = io_channel_flush(e->io);
	if (err)
		return err;
	/* The link.  The directory's inode before its blocks: a block 0
	 * turned into an htree root while the inode still said linear
	 * would hide the entries moved out of it. */
	*what = "linking the new entries into";
	err = write_inodes(img, &img->icache, 1);
	if (!err)
		err = write_late(img, &img->held, 1);
	if (!err)
		err = io_channel_flush(e->io);
	if (err)
		return err;
	*what = "finishing the commit of";
	e->super->s_state = state;
	err = write_super_only(e);
	if (!err)
		err = ext2fs_close2(e, 0);	/* s_kbytes_written */
	if (!err)
		img->fs = NULL;		/* closed and freed */
	return err;
}

/* Every block the commit changes in place, captured (capture.h), none
 * written. */
static errcode_t capture_commit(struct image *img, const struct fs_state *fs,
				struct io_capture **c)
{
	ext2_filsys e = img->fs;
	errcode_t err;

	e->super->s_feature_incompat &= ~(uint32_t)EXT3_FEATURE_INCOMPAT_RECOVER;
	io_guard_capture_budget(e->io, img->stage_budget);
	io_guard_capture(e->io, 1);
	err = image_store_state(img, fs);
	if (!err)
		err = write_late(img, &img->held, 0);
	if (!err)
		err = write_inodes(img, &img->icache, 0);
	if (!err)
		err = write_inodes(img, &img->icache, 1);
	if (!err)
		err = write_late(img, &img->held, 1);
	if (!err)
		err = ext2fs_flush2(e, 0);
	io_guard_capture(e->io, 0);
	*c = io_guard_take_captured(e->io);
	return err;
}

/*
 * No journal takes the commit of an image file (too short, or of a kind
 * not written here): the commit's blocks go to a copy of the image as it
 * is now, new data and all, which then takes its name.  Killed before
 * the rename, the image is the old filesystem, its free blocks aside.
 */
static errcode_t commit_copy(struct image *img, const struct fs_state *fs,
			     const char **what)
{
	ext2_filsys e = img->fs;
	struct io_capture *c = NULL;
	enum temp_step step;
	size_t n, i;
	unsigned char *buf = NULL;
	errcode_t err;
	int fd = -1;

	*what = "preparing the commit of";
	err = capture_commit(img, fs, &c);
	n = capture_count(c);
	if (!err && !(buf = malloc(e->blocksize)))
		err = ENOMEM;
	if (!err) {
		*what = "copying for the commit";
		err = make_shadow(img, 1, &img->shadow_fd, &step);
		fd = img->shadow_fd;
	}
	if (!err)
		*what = "writing the commit to a copy of";
	for (i = 0; !err && i < n; i++) {
		err = io_guard_tick(e->io);
		if (!err)
			err = capture_read(c, i, 1, buf);
		if (!err)
			err = pwrite_all(fd, buf, e->blocksize,
					 (off_t)(img->region.offset +
						 capture_blk(c, i) * e->blocksize));
	}
	if (!err)
		err = io_guard_tick(e->io);	/* written, not yet renamed */
	if (!err && fsync(fd))
		err = (errcode_t)errno;
	if (!err) {
		/* all in the copy: nothing left for libext2fs to write */
		e->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY |
			      EXT2_FLAG_IB_DIRTY);
		ext2fs_free(e);
		img->fs = NULL;
	}
	capture_free(c);
	free(buf);
	return err;
}

/* The commit through the image's journal (journal.c), then closed. */
static errcode_t commit_journal(struct image *img, const struct fs_state *fs,
				const struct journal *j, const char **what)
{
	ext2_filsys e = img->fs;
	struct io_capture *c = NULL;
	errcode_t err;

	*what = "preparing the journal transaction of";
	err = capture_commit(img, fs, &c);
	if (!err)
		err = journal_commit(img, j, c, what);
	if (!err) {
		/* all written: nothing left for libext2fs to write */
		e->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY |
			      EXT2_FLAG_IB_DIRTY);
		err = ext2fs_close2(e, 0);
		if (!err)
			img->fs = NULL;
	}
	capture_free(c);
	return err;
}

/* image_commit, *what saying which step failed. */
static errcode_t commit_steps(struct image *img, const struct fs_state *fs,
			      const char **what)
{
	struct journal j;
	errcode_t err;

	/* Data and new blocks on disk before anything points at them.  A
	 * failure here has changed no block in use. */
	*what = "writing data blocks of";
	err = io_channel_flush(img->fs->io);
	memset(&j, 0, sizeof(j));
	/* A copy, or a file nobody sees, needs no journal. */
	if (!err && !img->shadow && img->commit != IMAGE_COMMIT_UNSEEN)
		err = journal_open(img, fs, commit_bound(img, fs), &j);
	/* the image file itself is written: room for it first */
	if (!err && !img->shadow && img->commit != IMAGE_COMMIT_UNSEEN &&
	    (j.map || !img->copy_at_commit)) {
		*what = "reserving host space for the commit of";
		err = reserve_commit(img, fs, j.map,
				     j.map ? j.first + commit_bound(img, fs) : 0);
	}
	if (!err) {
		io_guard_begin(img->fs->io);
		if (!j.map && img->links_why)
			*img->links_why = img->in_place ? img->in_place :
					  LINKS_WHY;
		err = j.map ? commit_journal(img, fs, &j, what) :
		      img->copy_at_commit ? commit_copy(img, fs, what) :
			      commit_in_place(img, fs, what);
		/* Put every block changed in place back as it was; a copy
		 * that failed is removed, IMAGE was never written. */
		if (err && !img->shadow && io_guard_rollback(img->fs->io)) {
			/* blocks in use may point at the new ones: kept */
			io_guard_keep(img->fs->io);
			err = ORLOV_ERR_ROLLBACK;
		}
	}
	journal_free(&j);
	if (err) {
		image_abort(img);
		return err;
	}
	if (img->shadow) {
		*what = "renaming the committed copy over";
		err = image_temp_commit(img->shadow, img->path, img->lock_fd);
		if (!err) {
			free(img->shadow);
			img->shadow = NULL;
		}
	}
	/* Nothing is left to write: image_abort only frees what remains
	 * (and, if the rename failed, removes the copy). */
	image_abort(img);
	return err;
}

errcode_t image_plan_commit(struct image *img, const struct fs_state *fs,
			    uint64_t inodes)
{
	ext2_filsys e = img->fs;
	uint64_t ipb = e->blocksize / EXT2_INODE_SIZE(e->super);
	enum temp_step step;
	errcode_t err;
	int takes;

	if (img->dry || img->shadow || !img->copy_at_commit)
		return 0;
	/* a bound the commit's can only pass: today's, and a table block
	 * for every ipb new inodes */
	err = journal_takes(img, fs, commit_bound(img, fs) +
			    (size_t)((inodes + ipb - 1) / ipb), &takes);
	if (err || takes)
		return err == ENOMEM ? err : 0;
	err = make_shadow(img, 1, &img->shadow_fd, &step);
	if (!err)
		err = io_guard_switch(e->io, img->shadow);
	if (err) {
		/* the commit copies then, or tells why it cannot */
		drop_shadow(img);
		return err == ENOMEM ? err : 0;
	}
	img->copy_at_commit = 0;
	io_guard_write_behind(e->io, img->shadow_fd);
	return 0;
}

errcode_t image_commit(struct image *img, const struct fs_state *fs,
		       struct errctx *ec)
{
	const char *what = NULL, *name = img->name;
	errcode_t err = commit_steps(img, fs, &what);

	return errctx_set(ec, err, what, name);
}
