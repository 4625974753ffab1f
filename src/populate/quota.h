/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The quota feature in both passes: the owners' entries made in the
 * quota files' trees in the order the kernel makes them (the first chown
 * to an id), the usage written at the commit.
 */
#ifndef ORLOV_POPULATE_QUOTA_H
#define ORLOV_POPULATE_QUOTA_H

#include "populate/ctx.h"

/* The quota files as the image has them (again, for the write pass):
 * nothing without the quota feature. */
errcode_t quota_begin(struct pop_ctx *c);

/* The replay's chown of a new inode, or cp -a's of a directory merged
 * into, to @e's owners: dquot_transfer takes a dquot for each, and the
 * first one an id gets is written into the tree at once
 * (dquot_acquire).  ORLOV_ERR_QUOTA_GROWS when the file would need a
 * block it does not have (the first pass says so before any write). */
errcode_t quota_chown(struct pop_ctx *c, const struct src_entry *e);

/* Before the commit: each owner's entry given its usage (what it had,
 * and what the staged inodes moved), the files written back. */
errcode_t quota_commit(struct pop_ctx *c);

void quota_free(struct pop_quota *q);

#endif
