// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * populate(), the engine's entry (populate.h): IMAGE found (a partition,
 * an offset), made first for --create (create.c, which for --create auto
 * runs the first pass until the size fits), one run (run.c), and the new
 * image committed.  It prints nothing: the caller reports the result.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "populate/populate.h"
#include "populate/run.h"
#include "populate/create.h"
#include "populate/digest.h"
#include "populate/preflight.h"
#include "image/naming.h"
#include "lib/procstate.h"
#include "lib/orlov_err.h"

errcode_t populate(const struct populate_opts *o, struct populate_result *res)
{
	struct timespec t0, t1;
	struct inputs in;
	errcode_t err;

	/* the summary's seconds: all of it, archive and mke2fs included */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&in, 0, sizeof(in));
	in.image_fd = in.tmp_fd = -1;
	err = image_resolve(o->image, &in.image);
	if (err) {
		return errctx_set(&res->ec, err, "following the symbolic link",
				  o->image);
	}
	in.path = in.image;
	err = image_region_find(in.image, &o->where, &in.region);
	/* --create makes a filesystem past the end: the file grows */
	if (err == ORLOV_ERR_OFFSET_PAST_END && o->create)
		err = 0;
	if (err && o->where.partition && in.region.size)
		errctx_setf(&res->ec, err, "checking partition", "%s of %s",
			    o->where.partition, o->image);
	else if (err)
		/* a disk image that is not there is said to be missing, not
		 * a partition or an offset in it */
		errctx_set(&res->ec, err, err == ENOENT ? "opening the disk image" :
			   o->where.partition ? "finding the partition in" :
			   "checking the offset in", o->image);
	if (!err)
		err = before_open(o, res, &in);
	if (!err && o->create && !o->dry_run)
		err = create_lock(o, res, &in);
	if (!err && o->create)
		err = tree_digest(o, res, &in);
	if (!err && o->create)
		err = o->dry_run ? create_scratch(o, res, &in) :
				   create_temp(o, res, &in);
	if (!err && o->create)
		err = create_image(o, res, &in);
	if (!err) {
		err = populate_run(o, res, &in, o->dry_run ? RUN_DRY : RUN_WRITE);
		/* written to a scratch image in TMPDIR, not to IMAGE */
		err = create_scratch_error(o, res, &in, err);
	}
	if (in.tmp && !err && !o->dry_run)
		err = create_commit(o, res, &in);
	/* libext2fs's "short write" is the kernel's partial write: the host
	 * filesystem ran out of room (or a quota, or RLIMIT_FSIZE) */
	if (err == EXT2_ET_SHORT_WRITE)
		err = ORLOV_ERR_SHORT_WRITE;
	if (in.tmp && (err || o->dry_run))
		unlink(in.tmp);
	free(in.tmp);
	proc_close_flocked(in.tmp_fd);
	proc_close_flocked(in.image_fd);
	free(in.image);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	inputs_free(&in);
	return err;
}
