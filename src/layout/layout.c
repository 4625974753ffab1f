// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the four commands share: the error context main() prints, and
 * opening an image read-only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "layout/layout.h"
#include "image/image_read.h"
#include "lib/orlov_err.h"

errcode_t open_image(const struct layout_opts *o, const char *name,
		     ext2_filsys *fs, struct errctx *ctx)
{
	struct image_region r;
	errcode_t err = image_check_kind(name);
	char kind[256];
	const char *is;

	/* a copy into the disk killed half way: read only, it cannot put
	 * the old bytes back, and what it would read is neither */
	if (!err)
		err = image_rollback_pending(name, 0, NULL);
	if (err)
		return errctx_set_path(ctx, err, "opening image", name);
	err = image_region_find(name, &o->where, &r);
	if (err)
		return errctx_set_path(ctx, err, o->where.partition ?
				       "finding the partition in" :
				       "checking the offset in", name);
	err = ir_open_at(name, r.offset, fs);
	if (!err) {
		err = image_region_fits(&r, ext2fs_blocks_count((*fs)->super) *
					(uint64_t)(*fs)->blocksize);
		if (err)
			ext2fs_close_free(fs);
	}
	errctx_set_path(ctx, err, "opening image", name);
	if (err == ORLOV_ERR_NOT_EXT2 && r.offset)
		errctx_add(ctx, " (none at byte %llu)",
			   (unsigned long long)r.offset);
	if (err == ORLOV_ERR_NOT_EXT2 && !r.offset &&
	    (is = ir_probe(name, kind, sizeof(kind))) != NULL)
		errctx_add(ctx, ": %s", is);
	return err;
}

errcode_t check_output(struct errctx *ctx)
{
	if (fflush(stdout) || ferror(stdout))
		return errctx_set_path(ctx, errno ? errno : EIO,
				       "writing", "output");
	return 0;
}
