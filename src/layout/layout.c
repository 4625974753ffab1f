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

errcode_t open_image(const char *name, ext2_filsys *fs, struct errctx *ctx)
{
	errcode_t err = errctx_set_path(ctx, ir_open(name,
					fs), "opening image", name);
	char kind[256];
	const char *is;

	if (err == ORLOV_ERR_NOT_EXT2 &&
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
