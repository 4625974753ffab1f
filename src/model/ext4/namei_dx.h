/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ext4's hashed directories (the htree of fs/ext4/namei.c, Linux 6.1):
 * past its first block a directory's names are hashed (dirhash.h) into
 * leaves under an index of one or two levels.
 */
#ifndef ORLOV_EXT4_NAMEI_DX_H
#define ORLOV_EXT4_NAMEI_DX_H

#include "model/dir.h"

/* make_indexed_dir: the first block, full, becomes the root; its
 * entries move to block 1, which is split at once to take the name. */
errcode_t dx_make_indexed_dir(struct fs_state *fs, struct dirbuf *d,
			      const char *name, size_t len, uint32_t ino,
			      unsigned int ftype);
/* ext4_dx_add_entry: the name into its leaf, which is split when full
 * (the index too, or a level added, when it is full). */
errcode_t ext4_dx_add_entry(struct fs_state *fs, struct dirbuf *d,
			    const char *name, size_t len, uint32_t ino,
			    unsigned int ftype);

#endif
