/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orlov-layout's four commands: show, compare and check where an
 * ext2/ext3 image keeps its inodes and blocks.  Images are only ever
 * opened read-only.  Each command prints its answer on stdout and
 * returns 0, ORLOV_ERR_DIFFERENT / ORLOV_ERR_MISMATCH (the answer is
 * "not the same"), or an error whose "while ..." is in the errctx.
 */
#ifndef ORLOV_LAYOUT_H
#define ORLOV_LAYOUT_H

#include <ext2fs/ext2fs.h>
#include <et/com_err.h>

#include "lib/util.h"
#include "source/meta.h"
#include "lib/errctx.h"
#include "image/partition.h"

enum layout_cmd { CMD_NONE, CMD_DUMP, CMD_DIFF, CMD_STATS, CMD_VERIFY };

struct layout_opts {
	enum layout_cmd cmd;
	const char *image;	/* IMAGE, or EXPECTED for diff */
	const char *image2;	/* ACTUAL for diff */
	const char *source;	/* SOURCE for verify */
	char *path;		/* normalized PATH, "/" by default */
	/* verify: what orlov-populate was told to copy, and how */
	struct meta_rules meta;	/* owners and times rewritten */
	const char *devtable;	/* --devtable FILE */
	const char *fs_config;	/* --fs-config FILE */
	int xattrs;		/* attributes copied (no --no-xattrs) */
	int root_owner;		/* --root-owner UID:GID */
	uint32_t root_uid, root_gid;
	int root_attrs;		/* --root-attrs */
	int help, version;
	struct image_where where;	/* --partition, --offset: every image's */
};

/* @name read-only, at the partition or offset @o gives. */
errcode_t open_image(const struct layout_opts *o, const char *name,
		     ext2_filsys *fs, struct errctx *ctx);
/* Everything printed reached stdout. */
errcode_t check_output(struct errctx *ctx);

errcode_t layout_dump(const struct layout_opts *o, struct errctx *ctx);
errcode_t layout_diff(const struct layout_opts *o, struct errctx *ctx);
errcode_t layout_stats(const struct layout_opts *o, struct errctx *ctx);
errcode_t layout_verify(const struct layout_opts *o, struct errctx *ctx);

#endif
