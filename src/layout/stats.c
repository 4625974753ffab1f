// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-layout stats: the group descriptors' counters, and where the
 * top-level directories went. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout/layout.h"
#include "image/image_read.h"

errcode_t layout_stats(const struct layout_opts *o, struct errctx *ctx)
{
	ext2_filsys fs;
	struct ir_dir root = { 0 };
	unsigned char *top = NULL;
	unsigned long long dirs = 0, top_dirs = 0, top_groups = 0;
	uint32_t ipg;
	dgrp_t g;
	size_t i;
	errcode_t err;

	err = open_image(o->image, &fs, ctx);
	if (err)
		return err;
	ipg = fs->super->s_inodes_per_group;
	/*
	 * The descriptors' counters are what the kernel's allocator reads,
	 * and the only place the per-group directory count lives.
	 */
	for (g = 0; g < fs->group_desc_count; g++) {
		printf("group=%lu inodes_used=%lu dirs=%lu blocks_used=%lu\n",
		       (unsigned long)g,
		       (unsigned long)(ipg - ext2fs_bg_free_inodes_count(fs, g)),
		       (unsigned long)ext2fs_bg_used_dirs_count(fs, g),
		       (unsigned long)(ext2fs_group_blocks_count(fs, g) -
				       ext2fs_bg_free_blocks_count(fs, g)));
		dirs += ext2fs_bg_used_dirs_count(fs, g);
	}
	err = errctx_set_path(ctx, ir_read_dir(fs, EXT2_ROOT_INO, &root),
			      "reading directory", "/");
	if (!err) {
		top = calloc(fs->group_desc_count, 1);
		if (!top)
			err = ENOMEM;
	}
	for (i = 0; !err && i < root.n; i++) {
		struct ext2_inode_large inode;
		ext2_ino_t ino = root.e[i].ino;
		dgrp_t grp;

		err = ir_read_inode(fs, ino, &inode);
		if (err) {
			struct strbuf p = { 0 };

			if (!path_join("/", root.e[i].name, root.e[i].len,
				       &p.s))
				errctx_set_path(ctx, err,
						"reading inode of", p.s);
			free(p.s);
			break;
		}
		if (!LINUX_S_ISDIR(inode.i_mode))
			continue;
		top_dirs++;
		grp = (ino - 1) / ipg;
		if (grp < fs->group_desc_count && !top[grp]) {
			top[grp] = 1;
			top_groups++;
		}
	}
	ir_dir_free(&root);
	if (!err) {
		printf("groups=%lu dirs=%llu top_level_dirs=%llu "
		       "top_level_groups=%llu\n",
		       (unsigned long)fs->group_desc_count, dirs, top_dirs,
		       top_groups);
		err = check_output(ctx);
	}
	free(top);
	ext2fs_close_free(&fs);
	return err;
}
