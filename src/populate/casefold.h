/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which directories are casefolded (+F), and the names ext4 would refuse
 * in them, for both passes.
 */
#ifndef ORLOV_POPULATE_CASEFOLD_H
#define ORLOV_POPULATE_CASEFOLD_H

#include "populate/ctx.h"

/* EXT4_CASEFOLD_FL for the new directory @e on its own account (its
 * parent's is inherited): marked +F in the source (FS_IOC_GETFLAGS) or
 * named by --casefold, on an image with the casefold feature; else 0. */
uint32_t casefold_flag(struct pop_ctx *c, const struct src_entry *e);

/* The first pass: the source directory @e goes into one the image has
 * (--merge), casefolded or not (@is_cf); refused when --casefold names
 * it and it is not (FS_IOC_SETFLAGS would fail: ENOTEMPTY).  A +F in the
 * source is not carried over to it, as the replay's mkdir meets EEXIST
 * and sets nothing. */
errcode_t casefold_check_merge(struct pop_ctx *c, const struct src_entry *e,
				int is_cf);

/* The first pass: @e's name in the directory @up, refused when it folds
 * like one before it there (mkdir or creat would meet EEXIST) or, with
 * strict encoding, when it is not valid UTF-8 (EINVAL). */
errcode_t casefold_check_name(struct pop_ctx *c, struct scan_dir *up,
			      const struct src_entry *e);

/* Before the first pass: --casefold refused for an image without the
 * feature; after it: refused when a path named no directory of SOURCE. */
errcode_t casefold_begin(struct pop_ctx *c);
errcode_t casefold_check_paths(struct pop_ctx *c);

#endif
