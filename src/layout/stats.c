// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-layout stats: the group descriptors' counters, and where the
 * top-level directories went; with flex_bg, the same per flex group. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout/layout.h"
#include "image/image_read.h"

/*
 * Groups per flex group, 0 without: ext4 (ext4_fill_flex_info) ignores
 * flex_bg when s_log_groups_per_flex is below 1 or above 31, and so
 * spreads directories over single groups.
 */
static unsigned long flex_size(ext2_filsys fs)
{
	unsigned int log = fs->super->s_log_groups_per_flex;

	if (!ext2fs_has_feature_flex_bg(fs->super) || log < 1 || log > 31)
		return 0;
	return 1UL << log;
}

struct counts {
	unsigned long long inodes, dirs, blocks;
};

static void group_counts(ext2_filsys fs, dgrp_t g, struct counts *c)
{
	c->inodes = fs->super->s_inodes_per_group -
		    ext2fs_bg_free_inodes_count(fs, g);
	c->dirs = ext2fs_bg_used_dirs_count(fs, g);
	c->blocks = ext2fs_group_blocks_count(fs, g) -
		    ext2fs_bg_free_blocks_count(fs, g);
}

/*
 * The descriptors' counters are what the kernel's allocator reads, and
 * the only place the per-group directory count lives; ext4's Orlov sums
 * them per flex group (flex_group[] of ext4_sb_info) and chooses among
 * those.
 */
static void print_groups(ext2_filsys fs, unsigned long flex,
			 unsigned long long *dirs)
{
	struct counts c, sum = { 0, 0, 0 };
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		group_counts(fs, g, &c);
		printf("group=%lu inodes_used=%llu dirs=%llu blocks_used=%llu",
		       (unsigned long)g, c.inodes, c.dirs, c.blocks);
		if (flex)
			printf(" flex=%lu", (unsigned long)(g / flex));
		putchar('\n');
		*dirs += c.dirs;
	}
	for (g = 0; flex && g < fs->group_desc_count; g++) {
		group_counts(fs, g, &c);
		sum.inodes += c.inodes;
		sum.dirs += c.dirs;
		sum.blocks += c.blocks;
		if ((g + 1) % flex && g + 1 < fs->group_desc_count)
			continue;
		printf("flex=%lu groups=%lu-%lu inodes_used=%llu dirs=%llu "
		       "blocks_used=%llu\n", (unsigned long)(g / flex),
		       (unsigned long)(g / flex * flex), (unsigned long)g,
		       sum.inodes, sum.dirs, sum.blocks);
		sum.inodes = sum.dirs = sum.blocks = 0;
	}
}

struct top {
	unsigned long long dirs, groups, flexes;
	unsigned char *group_seen, *flex_seen;
};

/* The directories directly under /: how many, in how many groups and
 * flex groups. */
static errcode_t count_top(ext2_filsys fs, unsigned long flex, struct top *t,
			   struct errctx *ctx)
{
	struct ir_dir root = { 0 };
	uint32_t ipg = fs->super->s_inodes_per_group;
	size_t i;
	errcode_t err;

	err = errctx_set_path(ctx, ir_read_dir(fs, EXT2_ROOT_INO, &root),
			      "reading directory", "/");
	if (!err) {
		t->group_seen = calloc(fs->group_desc_count, 1);
		t->flex_seen = calloc(fs->group_desc_count, 1);
		if (!t->group_seen || !t->flex_seen)
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
		t->dirs++;
		grp = (ino - 1) / ipg;
		if (grp >= fs->group_desc_count)
			continue;
		if (!t->group_seen[grp]) {
			t->group_seen[grp] = 1;
			t->groups++;
		}
		if (flex && !t->flex_seen[grp / flex]) {
			t->flex_seen[grp / flex] = 1;
			t->flexes++;
		}
	}
	ir_dir_free(&root);
	return err;
}

errcode_t layout_stats(const struct layout_opts *o, struct errctx *ctx)
{
	ext2_filsys fs;
	struct top t = { 0, 0, 0, NULL, NULL };
	unsigned long long dirs = 0;
	unsigned long flex;
	errcode_t err;

	err = open_image(o, o->image, &fs, ctx);
	if (err)
		return err;
	flex = flex_size(fs);
	print_groups(fs, flex, &dirs);
	err = count_top(fs, flex, &t, ctx);
	if (!err) {
		printf("groups=%lu dirs=%llu top_level_dirs=%llu "
		       "top_level_groups=%llu",
		       (unsigned long)fs->group_desc_count, dirs, t.dirs,
		       t.groups);
		if (flex)
			printf(" flex_groups=%lu top_level_flex_groups=%llu",
			       (unsigned long)((fs->group_desc_count + flex - 1) /
					       flex), t.flexes);
		putchar('\n');
		err = check_output(ctx);
	}
	free(t.group_seen);
	free(t.flex_seen);
	ext2fs_close_free(&fs);
	return err;
}
