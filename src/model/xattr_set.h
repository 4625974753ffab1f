/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * setxattr and removexattr on an inode being created, and the ACLs it
 * gets on the way, as the drivers do them (fs/ext2/xattr.c, acl.c;
 * fs/ext4/xattr.c, acl.c of Linux 6.1): ext2 keeps attributes in the
 * block only, ext4 in the inode first; a new inode inherits its
 * directory's default ACL (ext2_init_acl), chmod rewrites an access ACL
 * (posix_acl_chmod).  Pure: the blocks are xblock.h's, the inode's
 * attribute space is the ifile's ibody.
 */
#ifndef ORLOV_XATTR_SET_H
#define ORLOV_XATTR_SET_H

#include "model/xblock.h"
#include "model/bmap.h"
#include "model/acl.h"

struct xattr_set;

/* setxattr (@remove: removexattr) of @d on @f, whose attribute block is
 * *file_acl (updated). */
typedef errcode_t xattr_set_fn(const struct xattr_set *xs, struct ifile *f,
			       fsblk_t *file_acl, const struct xattr_disk *d,
			       int remove);
/* ext2_xattr_set: the block only. */
xattr_set_fn ext2_xattr_setxattr;
/* ext4_xattr_set_handle: the inode first, then the block. */
xattr_set_fn ext4_xattr_set_handle;

/* The attribute state of one run, and the driver's setxattr. */
struct xattr_set {
	struct fs_state *fs;
	struct xattr_blocks *xb;
	xattr_set_fn *set;
	int posix_acl;		/* the acl mount option: ACLs are honoured */
};

/* ext4_xattr_get: the inode first, then the block; ext2 has only the
 * block (and no ibody).  NULL when @f has no such attribute. */
const unsigned char *xattr_get(const struct xattr_set *xs,
			       const struct ifile *f, fsblk_t file_acl,
			       int index, const char *name, size_t len,
			       size_t *size);

/* ext2_set_acl of an access ACL: posix_acl_update_mode drops one that
 * says no more than the mode, and the attribute is removed instead. */
int xattr_mode_says_all(const struct xattr_set *xs,
			const struct xattr_disk *d);

/* __ext2_set_acl: store @acl in its attribute, or remove it (NULL). */
errcode_t xattr_set_acl(const struct xattr_set *xs, struct ifile *f,
			fsblk_t *file_acl, int index, const struct acl *acl);
/* One ACL of the inode or its block @file_acl (a copy), or none
 * (acl->n == 0). */
errcode_t xattr_get_acl(const struct xattr_set *xs, const struct ifile *f,
			fsblk_t file_acl, int index, struct acl *acl);

/* ext2_init_acl for a new inode @f of @mode in the directory @dir (its
 * block @dir_acl). */
errcode_t ext2_init_acl(const struct xattr_set *xs, const struct ifile *dir,
			fsblk_t dir_acl, struct ifile *f, fsblk_t *file_acl,
			uint32_t mode);
/* The chmod to @mode: posix_acl_chmod of an access ACL. */
errcode_t xattr_chmod_acl(const struct xattr_set *xs, struct ifile *f,
			  fsblk_t *file_acl, uint32_t mode);
/* removexattr of the inherited ACLs the source does not have. */
errcode_t xattr_drop_acls(const struct xattr_set *xs, struct ifile *f,
			  fsblk_t *file_acl, uint32_t mode, int has_access,
			  int has_default);

#endif
