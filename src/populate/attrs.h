/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_ATTRS_H
#define ORLOV_POPULATE_ATTRS_H

#include "populate/ctx.h"

/* Has the source entry the attribute @name? */
int has_src_xattr(const struct src_entry *e, const char *name);
/* A new inode @f in @p inherits @p's default ACL. */
errcode_t init_acl(struct pop_ctx *c, struct frame *p, struct ifile *f,
		   const struct src_entry *e, fsblk_t *file_acl);
/* The file's attributes, set one by one in table order. */
errcode_t write_xattrs(struct pop_ctx *c, const struct src_entry *e,
		       struct ifile *f, fsblk_t *file_acl);
/* chmod, write_xattrs, and the inherited ACLs the source has not dropped. */
errcode_t set_attrs(struct pop_ctx *c, const struct src_entry *e, struct ifile *f,
		    fsblk_t *file_acl);

#endif
