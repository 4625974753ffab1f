// SPDX-License-Identifier: GPL-2.0-or-later
/* --create: IMAGE locked, a new filesystem made by mke2fs under a
 * temporary name (or a scratch file for --dry-run), sized for auto. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "populate/create.h"
#include "populate/run.h"
#include "image/mkfs.h"
#include "image/image_read.h"
#include "image/partition.h"
#include "lib/spill.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

static errcode_t region_scratch(const struct populate_opts *o,
				struct populate_result *res, struct inputs *in,
				const char *name);

/*
 * --create builds the new image under a temporary name next to IMAGE and
 * renames it over IMAGE once committed: until then IMAGE is what it was,
 * whatever stops the run.  Not for a device, nor a file with other hard
 * links or an owner its replacement could not have (--in-place neither):
 * there mke2fs writes IMAGE itself, as it would.
 */
errcode_t create_temp(const struct populate_opts *o,
		      struct populate_result *res, struct inputs *in)
{
	struct stat st;
	enum temp_step step;
	errcode_t err;
	int have = stat(in->image, &st) == 0;

	if (in->region.offset || in->region.size)
		return region_scratch(o, res, in, "orlov-partition-XXXXXX");
	if (o->in_place || (have && (!S_ISREG(st.st_mode) || st.st_nlink != 1)) ||
	    (!have && errno != ENOENT))
		return 0;
	err = image_temp_create(in->image, have ? &st : NULL, 1, in->image_fd,
				&in->tmp, &in->tmp_fd, &step);
	if (have && ((err == EPERM && step == TEMP_OWNER) ||
		     (err && step == TEMP_XATTR)))
		return 0;
	if (err)
		return errctx_set(&res->ec, err,
				  "creating the new image next to", o->image);
	in->path = in->tmp;
	return 0;
}

/*
 * --create locks IMAGE before mke2fs, as a plain run does before it
 * writes, and holds the lock until the new image has its name: another
 * run's commit cannot slip in between.  A new IMAGE with --in-place is
 * made empty first, to be locked.
 */
errcode_t create_lock(const struct populate_opts *o,
		      struct populate_result *res, struct inputs *in)
{
	unsigned int n = 0;
	errcode_t err = image_lock(in->image, o->in_place, &in->image_fd);

	if (err)
		return errctx_set(&res->ec, err, "locking", o->image);
	/* a copy into the disk killed half way: the old bytes back first */
	err = in->image_fd >= 0 ?
	      image_rollback_pending(in->image, 1, &res->rollback_applied) : 0;
	if (err)
		return errctx_set(&res->ec, err, "putting back the old bytes "
				  "from the rollback file next to", o->image);
	if (in->image_fd >= 0)
		image_remove_stale(in->image, &n);
	res->stale_removed += n;
	return 0;
}

/*
 * auto+N%: the inodes get the headroom the blocks get, since a tree of
 * small files runs out of inodes long before blocks: at least N % of them
 * free once the tree is in (+SIZE: the share of the size it adds), or what
 * mke2fs's inode ratio gives the size made, whichever is more.  @used: the
 * inodes the filesystem and the tree take; @kib: the size without the
 * margin, @final: with it.  Fewer: mke2fs again with -N, the size grown
 * by their tables.
 */
static errcode_t inode_headroom(const struct populate_opts *o,
				struct mkfs_opts *m, const char *path,
				uint64_t used, uint64_t kib, uint64_t final)
{
	struct ext2_super_block sb;
	char size[32], inodes[32];
	uint64_t pct = o->margin_pct, want, have, isz;
	errcode_t err;

	if (!pct && kib)
		pct = o->margin_bytes / 1024 * 100 / kib;
	if (o->mkfs.inodes || !pct)
		return 0;	/* -N asked for: the user's count */
	want = pct < 100 ? (used * 100 + 99 - pct) / (100 - pct) :
			   used + used * pct / 100;
	err = ir_check_super_at(path, m->offset, &sb);
	if (err)
		return err;
	have = ext2fs_le32_to_cpu(sb.s_inodes_count);
	isz = sb.s_rev_level ? ext2fs_le16_to_cpu(sb.s_inode_size) :
			       EXT2_GOOD_OLD_INODE_SIZE;
	if (have >= want)
		return 0;
	snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)want);
	m->inodes = inodes;
	final += (want - have) * isz / 1024 + 1;	/* their tables */
	snprintf(size, sizeof(size), "%lluk", (unsigned long long)final);
	m->size = size;
	return mkfs_create(path, m);
}


/* The image the run makes is a scratch file in TMPDIR (--create in a
 * partition or at an offset, --dry-run --create), not next to IMAGE. */
static int scratch_in_tmpdir(const struct populate_opts *o,
			     const struct inputs *in)
{
	return in->tmp && (o->dry_run || in->place.offset || in->place.size);
}

/* Of the host's errors (a full or failing filesystem), those the image's
 * own writes meet. */
static int host_error(errcode_t err)
{
	return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO ||
	       err == EROFS || err == EXT2_ET_SHORT_WRITE ||
	       err == ORLOV_ERR_SHORT_WRITE || err == ORLOV_ERR_NO_HOST_SPACE;
}

errcode_t create_scratch_error(const struct populate_opts *o,
			       struct populate_result *res,
			       const struct inputs *in, errcode_t err)
{
	if (!scratch_in_tmpdir(o, in) || !host_error(err) ||
	    !res->ec.where || strcmp(res->ec.where, o->image))
		return err;
	errctx_clear(&res->ec);
	return spill_error(&res->ec, err, "writing");
}

/* mke2fs for --create: the size given, or for auto the smallest that
 * the first pass says the tree fits in, then the margin; mke2fs's words
 * into @msgs. */
static errcode_t make_fs(const struct populate_opts *o,
			 struct populate_result *res, struct inputs *in,
			 struct strbuf *msgs)
{
	struct mkfs_opts m = o->mkfs;
	char size[32], inodes[32];
	uint64_t kib = 16384, bs, floor, used = 0, base;
	errcode_t err;
	int tries;

	m.msgs = msgs;
	m.digest = in->digest;
	m.offset = in->region.offset;
	m.limit = in->region.size;
	/* auto in a partition: all of it */
	if (o->auto_size && m.limit) {
		snprintf(size, sizeof(size), "%lluk",
			 (unsigned long long)(m.limit / 1024));
		m.size = size;
	}
	if (!o->auto_size || m.limit) {
		err = mkfs_create(in->path, &m);
		goto out;
	}
	if (!m.block_size)
		m.block_size = "4096";	/* mke2fs would choose by size */
	bs = strtoull(m.block_size, NULL, 10);
	floor = strcmp(mkfs_fs_type(&m), "ext2") ? 2048 : 64;
	/* The first run on a probe of 16 MiB gives the tree's needs, which
	 * do not depend on the size, and the share of a filesystem that is
	 * free; then the size they call for, grown until the check agrees. */
	for (tries = 0; tries < 12; tries++) {
		struct populate_result r;
		uint64_t total, want;

		snprintf(size, sizeof(size), "%lluk", (unsigned long long)kib);
		m.size = size;
		/* After the probe, a size below mke2fs's minimum (which
		 * depends on its options) is grown until mke2fs takes it:
		 * the probe's mke2fs has shown any other complaint. */
		m.quiet = tries > 0;
		err = mkfs_create(in->path, &m);
		if (err == ORLOV_ERR_MKFS_FAILED && tries && kib < 16384) {
			kib += kib / 2;
			continue;
		}
		if (err == ORLOV_ERR_MKFS_FAILED && m.quiet) {
			m.quiet = 0;	/* again, for mke2fs to say why */
			err = mkfs_create(in->path, &m);
		}
		m.quiet = 0;
		if (err)
			goto out;
		memset(&r, 0, sizeof(r));
		err = populate_run(o, &r, in, RUN_CHECK);
		if (err && err != ORLOV_ERR_NO_BLOCKS && err != ORLOV_ERR_NO_INODES) {
			*res = r;
			return err;
		}
		populate_result_free(&r);
		/* the reserved ones, the root, lost+found, and the tree's */
		used = r.fs_inodes - r.free_inodes + r.need_inodes;
		if (!err && tries)
			break;
		total = kib * 1024 / bs;
		want = r.free_blocks ? r.need_blocks * total / r.free_blocks : total;
		want += want / 50 + 16;		/* the larger one's metadata */
		/* mke2fs's least for any block size; for ext3 and ext4 the least
		 * it gives a journal (ext2fs_default_journal_size) */
		if (want < floor)
			want = floor;
		if (tries && want * bs / 1024 <= kib)
			want = kib * 1024 / bs + kib * 1024 / bs / 8;
		if (!o->mkfs.inodes && r.need_inodes + 16 > r.free_inodes) {
			uint64_t n = r.need_inodes + r.need_inodes / 20 + 32;

			snprintf(inodes, sizeof(inodes), "%llu",
				 (unsigned long long)n);
			m.inodes = inodes;
			/* their tables, at up to 256 bytes an inode */
			want += n * 256 / bs + 1;
		}
		kib = want * bs / 1024;
	}
	if (tries == 12) {
		err = ORLOV_ERR_NO_BLOCKS;
		goto out;
	}
	base = kib;
	kib = o->margin_pct ? kib + kib * o->margin_pct / 100 :
			      kib + o->margin_bytes / 1024;
	snprintf(size, sizeof(size), "%lluk", (unsigned long long)kib);
	m.size = size;
	err = mkfs_create(in->path, &m);
	if (!err)
		err = inode_headroom(o, &m, in->path, used, base, kib);
out:
	if (err == ORLOV_ERR_MKFS_FAILED && scratch_in_tmpdir(o, in))
		return errctx_setf(&res->ec, err, "making a filesystem with "
				   "mke2fs in the scratch file in",
				   "%s (TMPDIR)", spill_dir());
	return errctx_set(&res->ec, err, "making a filesystem with mke2fs in",
			  o->image);
}

/* make_fs(), mke2fs's own words with its failure: in the error, so that
 * the library prints nothing and the command line prints them once. */
errcode_t create_image(const struct populate_opts *o,
		       struct populate_result *res, struct inputs *in)
{
	struct strbuf msgs = { 0 };
	errcode_t err = make_fs(o, res, in, &msgs);

	if (err == ORLOV_ERR_MKFS_FAILED)
		errctx_detail(&res->ec, msgs.s, msgs.len);
	sb_free(&msgs);
	return err;
}

/* A scratch file in TMPDIR, named from @name (mkstemp's), as the image
 * the run makes. */
static errcode_t make_scratch(struct populate_result *res, struct inputs *in,
			      const char *name, const char *why)
{
	const char *dir = spill_dir();
	size_t n;
	int fd;

	n = strlen(dir) + strlen(name) + 2;
	in->tmp = malloc(n);
	if (!in->tmp)
		return ENOMEM;
	snprintf(in->tmp, n, "%s/%s", dir, name);
	fd = mkstemp(in->tmp);
	if (fd < 0) {
		errcode_t err = (errcode_t)errno;

		errctx_set(&res->ec, err, why, dir);
		free(in->tmp);
		in->tmp = NULL;
		return err;
	}
	close(fd);
	in->path = in->tmp;
	return 0;
}

/*
 * --create in a partition or at an offset: the filesystem is made and
 * filled in a scratch image of its own (at offset 0, as large as the
 * partition may be), which reaches the disk only at the commit
 * (create_commit): until then the partition holds what it held, whatever
 * the check pass refuses or whatever stops the run.  A partition that
 * holds another filesystem is refused without --force, as a whole image
 * file that holds data is.
 */
static errcode_t region_scratch(const struct populate_opts *o,
				struct populate_result *res, struct inputs *in,
				const char *name)
{
	char type[64] = "";
	errcode_t err = 0;

	if (!o->force)
		err = image_region_probe(in->image, &in->region, type,
					 sizeof(type));
	if (err == ENOENT && !o->where.partition)
		err = 0;	/* --offset in an image --create makes */
	else if (!err && !o->force && type[0])
		err = ORLOV_ERR_PART_CLOBBER;
	if (err)
		return errctx_setf(&res->ec, err, o->where.partition ?
				   "checking what the partition holds in" :
				   "checking what the offset holds in",
				   "%s%s%s%s", o->image, type[0] ? " (" : "",
				   type, type[0] ? ")" : "");
	err = make_scratch(res, in, name, o->dry_run ?
			   "creating a scratch image for --dry-run in" :
			   "creating the new filesystem's scratch image in");
	if (err)
		return err;
	in->place = in->region;
	in->region.offset = 0;
	in->region.partno = 0;
	return 0;
}

/* --dry-run --create: the filesystem is made in a scratch file in TMPDIR,
 * never next to IMAGE, and dropped after the dry run on it. */
errcode_t create_scratch(const struct populate_opts *o,
			 struct populate_result *res, struct inputs *in)
{
	/* a dry run writes nothing, not even the old bytes back */
	errcode_t err = image_rollback_pending(in->image, 0, NULL);

	if (err)
		return errctx_set(&res->ec, err, "opening", o->image);
	if (in->region.offset || in->region.size)
		return region_scratch(o, res, in, "orlov-dry-run-XXXXXX");
	return make_scratch(res, in, "orlov-dry-run-XXXXXX",
			    "creating a scratch image for --dry-run in");
}

/* The new image in IMAGE's place: renamed over it, or written into its
 * partition (or at its offset) of the disk, still locked. */
errcode_t create_commit(const struct populate_opts *o,
			struct populate_result *res, struct inputs *in)
{
	errcode_t err;

	if (!in->place.offset && !in->place.size) {
		err = image_temp_commit(in->tmp, in->image, in->image_fd);
		return errctx_set(&res->ec, err, "renaming the new image over",
				  o->image);
	}
	/* --offset in an image that did not exist: made now, locked */
	err = in->image_fd < 0 ? image_lock(in->image, 1, &in->image_fd) : 0;
	if (!err && in->image_fd < 0)
		err = EBADF;
	if (!err)
		err = image_region_fill(in->image, in->image_fd, in->tmp,
					in->place.offset, o->fault);
	if (!err)
		unlink(in->tmp);	/* (on failure, populate's to remove) */
	return errctx_set(&res->ec, err, o->where.partition ?
			  "writing the new filesystem into its partition of" :
			  "writing the new filesystem at its offset in",
			  o->image);
}
