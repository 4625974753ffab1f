// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/xattr_set.h"
#include "lib/orlov_err.h"

const unsigned char *xattr_get(const struct xattr_set *xs,
			       const struct ifile *f, fsblk_t file_acl,
			       int index, const char *name, size_t len,
			       size_t *size)
{
	const unsigned char *v = NULL, *blk;

	if (f->ibody)
		v = xattr_ibody_get(f->ibody, f->ibody_size, index, name, len,
				    size);
	if (!v && (blk = xattr_blocks_data(xs->xb, file_acl)))
		v = xattr_block_get(blk, index, name, len, size);
	return v;
}

int xattr_mode_says_all(const struct xattr_set *xs, const struct xattr_disk *d)
{
	struct acl acl;
	int equiv;

	if (!xs->posix_acl || d->index != EXT2_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    acl_from_disk(d->value, d->size, &acl))
		return 0;
	equiv = posix_acl_equiv_mode(&acl);
	acl_release(&acl);
	return equiv == 0;
}

errcode_t ext2_xattr_setxattr(const struct xattr_set *xs, struct ifile *f,
			      fsblk_t *file_acl, const struct xattr_disk *d,
			      int remove)
{
	return ext2_xattr_set(xs->fs, xs->xb, f->ino, f->group, f->extents,
			      f->has_alloc_info ? &f->bi : NULL, file_acl, d,
			      remove);
}

/*
 * Nothing to do for a value already there; else into the inode if it has
 * room (then out of the block), else into the block (then out of the
 * inode); a removal where the attribute is.
 */
errcode_t ext4_xattr_set_handle(const struct xattr_set *xs, struct ifile *f,
				fsblk_t *file_acl, const struct xattr_disk *d,
				int remove)
{
	const unsigned char *iv = NULL, *bv = NULL, *blk;
	size_t isz = 0, bsz = 0;
	errcode_t err;

	if (f->ibody)
		iv = xattr_ibody_get(f->ibody, f->ibody_size, d->index, d->name,
				     d->name_len, &isz);
	if ((blk = xattr_blocks_data(xs->xb, *file_acl)))
		bv = xattr_block_get(blk, d->index, d->name, d->name_len, &bsz);
	if (remove) {
		if (iv)
			return xattr_ibody_set(f->ibody, f->ibody_size, d, 1);
		return bv ? ext2_xattr_setxattr(xs, f, file_acl, d, 1) : 0;
	}
	if ((iv && isz == d->size && !memcmp(iv, d->value, d->size)) ||
	    (bv && bsz == d->size && !memcmp(bv, d->value, d->size)))
		return 0;
	err = f->ibody ? xattr_ibody_set(f->ibody, f->ibody_size, d, 0) :
			 ORLOV_ERR_XATTR_TOO_BIG;
	if (!err)
		return bv ? ext2_xattr_setxattr(xs, f, file_acl, d, 1) : 0;
	if (err != ORLOV_ERR_XATTR_TOO_BIG)
		return err;
	err = ext2_xattr_setxattr(xs, f, file_acl, d, 0);
	if (!err && iv)
		err = xattr_ibody_set(f->ibody, f->ibody_size, d, 1);
	return err;
}

errcode_t xattr_set_acl(const struct xattr_set *xs, struct ifile *f,
			fsblk_t *file_acl, int index, const struct acl *acl)
{
	struct xattr_disk d = { .index = index, .name = "" };
	errcode_t err = 0;

	if (acl)
		err = acl_to_disk(acl, &d.value, &d.size);
	if (!err)
		err = xs->set(xs, f, file_acl, &d, !acl);
	free(d.value);
	return err;
}

errcode_t xattr_get_acl(const struct xattr_set *xs, const struct ifile *f,
			fsblk_t file_acl, int index, struct acl *acl)
{
	const unsigned char *v;
	size_t size;

	acl->e = NULL;
	acl->n = 0;
	v = xattr_get(xs, f, file_acl, index, "", 0, &size);
	return v ? acl_from_disk(v, size, acl) : 0;
}

/*
 * In a directory with a default ACL a new directory inherits it, and any
 * new inode but a symlink gets an access ACL made from it and the create
 * mode (the replay creates with the permission bits and umask 0) unless
 * that says no more than the mode.
 */
errcode_t ext2_init_acl(const struct xattr_set *xs, const struct ifile *dir,
			fsblk_t dir_acl, struct ifile *f, fsblk_t *file_acl,
			uint32_t mode)
{
	uint32_t perm = mode & 0777;
	struct acl def, acl = { NULL, 0 };
	errcode_t err;
	int ret;

	if (!xs->posix_acl || S_ISLNK(mode))
		return 0;
	err = xattr_get_acl(xs, dir, dir_acl, EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT,
			    &def);
	if (err || !def.n)
		goto out;
	if (S_ISDIR(mode)) {
		err = xattr_set_acl(xs, f, file_acl,
				    EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT, &def);
		if (err)
			goto out;
	}
	acl.e = malloc(def.n * sizeof(*acl.e));
	if (!acl.e) {
		err = ENOMEM;
		goto out;
	}
	memcpy(acl.e, def.e, def.n * sizeof(*acl.e));
	acl.n = def.n;
	ret = posix_acl_create_masq(&acl, &perm);
	if (ret < 0)
		err = ORLOV_ERR_BAD_XATTR;
	else if (ret > 0)
		err = xattr_set_acl(xs, f, file_acl,
				    EXT2_XATTR_INDEX_POSIX_ACL_ACCESS, &acl);
out:
	acl_release(&def);
	acl_release(&acl);
	return err;
}

/*
 * With an access ACL, posix_acl_chmod rewrites its owner, mask (or group)
 * and other entries from the mode, and ext2_set_acl drops it if it then
 * says no more than the mode.
 */
errcode_t xattr_chmod_acl(const struct xattr_set *xs, struct ifile *f,
			  fsblk_t *file_acl, uint32_t mode)
{
	struct acl acl;
	errcode_t err;

	if (!xs->posix_acl || S_ISLNK(mode))
		return 0;
	err = xattr_get_acl(xs, f, *file_acl, EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
			    &acl);
	if (!err && acl.n) {
		if (posix_acl_chmod_masq(&acl, mode & 07777) < 0)
			err = ORLOV_ERR_BAD_XATTR;
		else
			err = xattr_set_acl(xs, f, file_acl,
					    EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
					    posix_acl_equiv_mode(&acl) ? &acl : NULL);
	}
	acl_release(&acl);
	return err;
}

/* The replay's removexattr, so that the image holds exactly the source's
 * attributes. */
errcode_t xattr_drop_acls(const struct xattr_set *xs, struct ifile *f,
			  fsblk_t *file_acl, uint32_t mode, int has_access,
			  int has_default)
{
	errcode_t err = 0;

	if (!xs->posix_acl || S_ISLNK(mode) || (!*file_acl && !f->ibody))
		return 0;
	if (!has_access)
		err = xattr_set_acl(xs, f, file_acl,
				    EXT2_XATTR_INDEX_POSIX_ACL_ACCESS, NULL);
	if (!err && S_ISDIR(mode) && !has_default)
		err = xattr_set_acl(xs, f, file_acl,
				    EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT, NULL);
	return err;
}
