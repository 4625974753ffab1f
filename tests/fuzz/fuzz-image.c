// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target (make fuzz): the input is an image.  Everything both
 * tools read from an image before they trust it goes through here:
 * orlov-layout's superblock check, walk, dump line, attributes and symlink
 * targets; orlov-populate's open, its checks, the allocator state loaded
 * from the bitmaps and the root directory loaded as a target.  Nothing is
 * written (image_abort).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/image.h"
#include "image/bridge.h"
#include "image/image_read.h"
#include "model/fsstate.h"
#include "lib/orlov_err.h"

static char path[64];

static void remove_image(void)
{
	unlink(path);
}

static errcode_t visit(const char *p, ext2_ino_t ino,
		       struct ext2_inode_large *inode, void *priv)
{
	ext2_filsys fs = priv;
	struct strbuf line = { 0 };
	struct ir_xattrs x = { 0 };
	unsigned int ma, mi;

	(void)p;
	if (ir_describe(fs, ino, inode, &line) == 0 &&
	    ir_read_xattrs(fs, ino, inode, &x) == 0)
		ir_xattrs_free(&x);
	sb_truncate(&line, 0);
	if (LINUX_S_ISLNK(inode->i_mode))
		(void)ir_symlink_target(fs, ino, inode, &line);
	ir_rdev(inode, &ma, &mi);
	sb_free(&line);
	return 0;
}

static void layout_side(void)
{
	ext2_filsys fs;
	struct errctx ec = { 0 };

	if (ir_open(path, &fs))
		return;
	(void)ir_walk(fs, "/", visit, fs, &ec);
	errctx_clear(&ec);
	ext2fs_close_free(&fs);
}

static void populate_side(void)
{
	struct image *img;
	struct fs_state st;
	struct ext2_inode_large root;
	struct dirbuf d;
	struct errctx ec = { 0 };
	uint32_t ino;

	memset(&st, 0, sizeof(st));
	if (image_open(path, NULL, &img, &ec)) {
		errctx_clear(&ec);
		return;
	}
	if (!image_load_state(img, &st) &&
	    !image_lookup_dir(img, "/", &ino) &&
	    !image_read_inode(img, ino, &root)) {
		dirbuf_init(&d, ino, st.g.inodes_per_group, image_has_filetype(img));
		(void)image_load_dir(img, &st, &root, &d);
		dirbuf_release(&st, &d);
	}
	fs_state_free(&st);
	image_abort(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/orlov-fuzz.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_image);
		add_error_table(&et_orlv_error_table);
		add_error_table(&et_ext2_error_table);
	}
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	layout_side();
	populate_side();
	return 0;
}
