// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-layout dump: one line per path. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "layout/layout.h"
#include "image/image_read.h"

struct dump {
	ext2_filsys fs;
	struct strbuf line;
};

static errcode_t dump_one(const char *path, ext2_ino_t ino,
			  struct ext2_inode_large *inode, void *priv)
{
	struct dump *d = priv;
	errcode_t err;

	sb_truncate(&d->line, 0);
	err = ir_describe(d->fs, ino, inode, &d->line);
	if (err)
		return err;
	fput_escaped(stdout, path, strlen(path));
	printf(" %s\n", d->line.s);
	return 0;
}

errcode_t layout_dump(const struct layout_opts *o, struct errctx *ctx)
{
	struct dump d;
	errcode_t err;

	memset(&d, 0, sizeof(d));
	err = open_image(o, o->image, &d.fs, ctx);
	if (err)
		return err;
	err = ir_walk(d.fs, o->path, dump_one, &d, ctx);
	if (!err)
		err = check_output(ctx);
	sb_free(&d.line);
	ext2fs_close_free(&d.fs);
	return err;
}
