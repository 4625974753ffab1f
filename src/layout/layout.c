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

errcode_t ctx_set(struct errctx *ctx, errcode_t err, const char *doing,
		  const char *what)
{
	if (!err || ctx->msg.len)
		return err;
	if (!sb_printf(&ctx->msg, "while %s ", doing) && what)
		sb_escaped(&ctx->msg, what, strlen(what));
	return err;
}

errcode_t open_image(const char *name, ext2_filsys *fs, struct errctx *ctx)
{
	errcode_t err = ctx_set(ctx, ir_open(name, fs), "opening image", name);
	char kind[256];
	const char *is;

	if (err == ORLOV_ERR_NOT_EXT2 &&
	    (is = ir_probe(name, kind, sizeof(kind))) != NULL)
		sb_printf(&ctx->msg, ": %s", is);
	return err;
}

errcode_t check_output(struct errctx *ctx)
{
	if (fflush(stdout) || ferror(stdout))
		return ctx_set(ctx, errno ? errno : EIO, "writing", "output");
	return 0;
}
