/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_CHECK_H
#define ORLOV_POPULATE_CHECK_H

#include "populate/ctx.h"

/* May the source directory @e, at @depth below the source root, go into
 * one the image has of its name? */
int merges(const struct pop_ctx *c, const struct src_entry *e, size_t depth);
/* The attributes fit one block, and the mount accepts them. */
errcode_t xattrs_acceptable(struct pop_ctx *c, const struct src_entry *e);
/* What the driver cannot store whatever the space (@what: "checking",
 * "copying"). */
errcode_t check_kind(struct pop_ctx *c, const struct src_entry *e,
		     const char *what);
/* mkdir's EMLINK: the parent, at @links links and an htree or not
 * (@indexed, is_dx), can take no more subdirectories (ext2's
 * s_max_links, EXT4_DIR_LINK_MAX). */
int dir_links_full(const struct pop_ctx *c, uint32_t links, int indexed);
/* The parent's link count after a mkdir in it (ext4_inc_count: an htree
 * directory past EXT4_LINK_MAX counts 1, "many"). */
uint16_t dir_links_inc(const struct pop_ctx *c, uint16_t links, int indexed);
/* The write pass: what the first pass would have refused. */
errcode_t recheck(struct pop_ctx *c, const struct src_entry *e);

#endif
