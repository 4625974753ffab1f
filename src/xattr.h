/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Extended attribute blocks as the ext2 driver reads them: ext2 keeps no
 * attribute inside the inode, only in one external block (fs/ext2/xattr.c),
 * and POSIX ACLs in its own compact on-disk form (fs/ext2/acl.c).
 */
#ifndef ORLOV_XATTR_H
#define ORLOV_XATTR_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#include "walk.h"

#define EXT2_XATTR_MAGIC 0xEA020000U
#define EXT2_XATTR_REFCOUNT_MAX 1024

/*
 * Build the attribute block for @xattrs into @block (@block_size bytes).
 * ORLOV_ERR_XATTR_TOO_BIG when they do not fit, ORLOV_ERR_BAD_XATTR for a
 * name ext2 cannot store (*bad names it).
 */
errcode_t xattr_build_block(const struct src_xattr *xattrs, size_t n,
			    unsigned char *block, uint32_t block_size,
			    const char **bad);

/* The block hash (h_hash) of a built block, for sharing identical ones. */
uint32_t xattr_block_hash(const unsigned char *block);

/* Entry hash over a name and its in-block value, as e2fsck checks it. */
uint32_t xattr_entry_hash(const char *name, size_t name_len,
			  const unsigned char *value, size_t value_size);

#endif
