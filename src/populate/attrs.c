// SPDX-License-Identifier: GPL-2.0-or-later
/* Extended attributes and ACLs of the inodes the write pass makes, as the
 * replay sets them (the kernel's side: model/xattr_set.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "populate/quota.h"
#include "populate/attrs.h"
#include "populate/report.h"
#include "lib/orlov_err.h"

int has_src_xattr(const struct src_entry *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nxattrs; i++)
		if (!strcmp(e->xattrs[i].name, name))
			return 1;
	return 0;
}

/* ext2_init_acl, inside ext2_new_inode (model/xattr_set.h): the
 * directory's attribute block joins the cache when ext2 first reads it. */
errcode_t init_acl(struct pop_ctx *c, struct frame *p, struct ifile *f,
		   const struct src_entry *e, fsblk_t *file_acl)
{
	errcode_t err;

	if (!c->xa.xs.posix_acl || S_ISLNK(e->st.st_mode))
		return 0;
	if (p->existing && p->acl_unread) {
		/* get_acl reads the directory's block: it joins the cache */
		xattr_blocks_cache_insert(&c->xa.xb, p->xblk);
		p->acl_unread = 0;
	}
	err = ext2_init_acl(&c->xa.xs, &p->d.map, p->xblk, f, file_acl,
			    e->st.st_mode);
	return err ? pop_fail(c, err, "inheriting the default ACL for", e->path) : 0;
}

/* The replay's chmod: posix_acl_chmod of an access ACL. */
static errcode_t chmod_acl(struct pop_ctx *c, struct ifile *f,
			   const struct src_entry *e, fsblk_t *file_acl)
{
	errcode_t err = xattr_chmod_acl(&c->xa.xs, f, file_acl, e->st.st_mode);

	return err ? pop_fail(c, err, "changing the mode of", e->path) : 0;
}

/* Last, the ACLs the entry inherited but its source does not have are
 * removed (the replay's removexattr). */
static errcode_t drop_acls(struct pop_ctx *c, struct ifile *f,
			   const struct src_entry *e, fsblk_t *file_acl)
{
	errcode_t err = xattr_drop_acls(&c->xa.xs, f, file_acl, e->st.st_mode,
			has_src_xattr(e, "system.posix_acl_access"),
			has_src_xattr(e, "system.posix_acl_default"));

	return err ? pop_fail(c, err, "removing inherited ACLs of", e->path) : 0;
}

/* The file's attributes, set one by one in table order (ext2_xattr_set
 * for each), which is how the replay sets them. */
errcode_t write_xattrs(struct pop_ctx *c, const struct src_entry *e,
		       struct ifile *f, fsblk_t *file_acl)
{
	struct xattr_disk *d;
	errcode_t err = 0;
	size_t i, done = 0;
	const char *doing = "storing extended attributes of";

	if (!c->o->xattrs || !e->nxattrs)
		return 0;
	d = calloc(e->nxattrs, sizeof(*d));
	if (!d)
		return pop_fail(c, ENOMEM, doing, e->path);
	for (; !err && done < e->nxattrs; done++)
		err = xattr_to_disk(&e->xattrs[done], &d[done]);
	if (!err) {
		xattr_disk_sort(d, e->nxattrs);
		for (i = 0; !err && i < e->nxattrs; i++)
			err = c->xa.xs.set(&c->xa.xs, f, file_acl, &d[i],
					xattr_mode_says_all(&c->xa.xs, &d[i]));
	}
	for (i = 0; i < done; i++)
		xattr_disk_free(&d[i]);
	free(d);
	if (err)
		return pop_fail(c, err, err == ORLOV_ERR_NO_BLOCKS ?
			    "allocating an attribute block for" : doing, e->path);
	return 0;
}

/* What the replay does after creating an inode: chmod, the source's
 * attributes, then the inherited ACLs it does not have removed. */
errcode_t set_attrs(struct pop_ctx *c, const struct src_entry *e, struct ifile *f,
		    fsblk_t *file_acl)
{
	/* the chown before the chmod, where the owners' dquots come */
	errcode_t err = quota_chown(c, e);

	if (!err)
		err = chmod_acl(c, f, e, file_acl);

	if (!err)
		err = write_xattrs(c, e, f, file_acl);
	return err ? err : drop_acls(c, f, e, file_acl);
}
