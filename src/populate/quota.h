/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The quota feature in both passes: the owners' entries made in the
 * quota files' trees in the order the kernel makes them (the first chown
 * to an id), the usage written at the commit.
 */
#ifndef ORLOV_POPULATE_QUOTA_H
#define ORLOV_POPULATE_QUOTA_H

#include "populate/ctx.h"

/* The quota files as the image has them (again, for the @write_pass,
 * which maps the blocks they grow by; the first pass counts them):
 * nothing without the quota feature. */
errcode_t quota_begin(struct pop_ctx *c, int write_pass);

/* __ext4_new_inode's dquot_initialize: a new inode's dquots, of its
 * creator (the replay runs as root), group @gid (0, or a setgid
 * parent's) and project @projid (quota_new_projid), taken before
 * anything is written to it. */
errcode_t quota_new_inode(struct pop_ctx *c, const struct src_entry *e,
			  uint32_t gid, uint32_t projid);

/* The replay's chown of a new inode, or cp -a's of a directory merged
 * into, to @e's owners: dquot_transfer takes a dquot for each, and the
 * first one an id gets is written into the tree at once
 * (dquot_acquire), the file growing if it must. */
errcode_t quota_chown(struct pop_ctx *c, const struct src_entry *e);

/* __ext4_new_inode's i_projid for an inode made in @p: @p's when it
 * has PROJINHERIT (chattr +P), else EXT4_DEF_PROJID, 0. */
uint32_t quota_new_projid(const struct pop_ctx *c, const struct frame *p);

/* Before the commit: each owner's entry given its usage (what it had,
 * and what the staged inodes moved), the files written back. */
errcode_t quota_commit(struct pop_ctx *c);

void quota_free(struct pop_ctx *c);

#endif
