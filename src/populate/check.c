// SPDX-License-Identifier: GPL-2.0-or-later
/* What both passes refuse: names, kinds and sizes the driver cannot
 * store, attributes the mount would not take. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "populate/check.h"
#include "populate/report.h"
#include "lib/orlov_err.h"

/* May the source directory @e go into one the image has of its name?
 * With --merge, yes; lost+found at the root of the image always (mke2fs
 * made it; mke2fs -d reuses it too). */
int merges(const struct ctx *c, const struct src_entry *e, size_t depth)
{
	return S_ISDIR(e->st.st_mode) &&
	       (c->o->merge || (depth == 1 && !strcmp(c->o->target, "/") &&
				e->name_len == 10 &&
				!memcmp(e->name, "lost+found", 10)));
}

/*
 * The attributes must fit one block, and the kernel must accept them on a
 * mount with the image's default options: user.* needs user_xattr, ACLs
 * need acl (else setxattr fails with EOPNOTSUPP, and they could not be
 * read back either).
 */
errcode_t xattrs_acceptable(struct ctx *c, const struct src_entry *e)
{
	const char *bad = NULL;
	errcode_t err;
	size_t i;

	if (!e->nxattrs || !c->o->xattrs)
		return 0;
	for (i = 0; i < e->nxattrs; i++) {
		const char *n = e->xattrs[i].name;

		if (!c->xa.user_xattr && !strncmp(n, "user.", 5))
			return fail(c, ORLOV_ERR_NO_USER_XATTR,
				    "checking extended attributes of", e->path);
		if (!c->xa.xs.posix_acl && !strncmp(n, "system.posix_acl_", 17))
			return fail(c, ORLOV_ERR_NO_ACL,
				    "checking extended attributes of", e->path);
	}
	err = xattr_build_block(e->xattrs, e->nxattrs, c->xblock,
				c->fs.g.block_size, c->xa.xb.name_hash, &bad);
	if (err)
		return fail(c, err, "checking extended attributes of", e->path);
	return 0;
}

/* What the driver cannot store whatever the space: a symlink target
 * past a block, a size past s_maxbytes, a type it has no inode for.  Both
 * passes ask (@what: "checking", "copying"). */
errcode_t check_kind(struct ctx *c, const struct src_entry *e,
		     const char *what)
{
	mode_t m = e->st.st_mode;

	if (S_ISLNK(m) && e->link_len + 1 > c->fs.g.block_size)
		return fail(c, ORLOV_ERR_SYMLINK_TOO_LONG, what, e->path);
	if (S_ISREG(m) && (uint64_t)e->st.st_size > c->max_size)
		return fail(c, ORLOV_ERR_FILE_TOO_BIG, what, e->path);
	if (!S_ISDIR(m) && !S_ISREG(m) && !S_ISLNK(m) && !S_ISCHR(m) &&
	    !S_ISBLK(m) && !S_ISFIFO(m) && !S_ISSOCK(m))
		return fail(c, ORLOV_ERR_UNSUPP_FILETYPE, what, e->path);
	return 0;
}

/*
 * The write pass reads the tree again, and it may have changed since the
 * first pass checked it: whatever that pass would have refused is refused
 * here too, before anything of the entry is written (and nothing written
 * so far is visible: image.h).  A name in the source root that the first
 * pass did not see was never checked against the target's entries.
 */
errcode_t recheck(struct ctx *c, const struct src_entry *e)
{
	errcode_t err;

	if (e->name_len > EXT2_NAME_LEN)
		return fail(c, ORLOV_ERR_NAME_TOO_LONG, "checking", e->path);
	if (c->st.depth == 1 &&
	    !walk_names_find(&c->scan.root_names, e->name, e->name_len))
		return fail(c, ORLOV_ERR_SOURCE_CHANGED, "copying", e->path);
	err = check_kind(c, e, "copying");
	return err ? err : xattrs_acceptable(c, e);
}

int dir_links_full(const struct ctx *c, uint32_t links, int indexed)
{
	return links >= c->drv->link_max &&
	       !(c->drv->dir_nlink && indexed && image_has_dir_nlink(c->img));
}

uint16_t dir_links_inc(const struct ctx *c, uint16_t links, int indexed)
{
	links++;
	if (c->drv->dir_nlink && indexed &&
	    (links > c->drv->link_max || links == 2))
		links = 1;
	return links;
}
