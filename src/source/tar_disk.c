// SPDX-License-Identifier: GPL-2.0-or-later
/* A host directory read into an archive tree (tar_tree.h) through
 * libarchive's disk reader: a layer given as a directory goes through the
 * same member code as an archive's, its file data to the spool. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>

#include "source/tar_tree.h"
#include "source/hostxattr.h"
#include "lib/orlov_err.h"

/* The entry's name below @dir (@dlen bytes, no trailing '/'), set on it:
 * hard links then name each other as an archive's members do. */
static errcode_t relative(struct archive_entry *ae, const char *dir,
			  size_t dlen)
{
	const char *p = archive_entry_pathname(ae);
	char *rel;

	if (!p || strncmp(p, dir, dlen) || (p[dlen] && p[dlen] != '/'))
		return ORLOV_ERR_ARCHIVE_PATH;
	rel = strdup(p + dlen);
	if (!rel)
		return ENOMEM;
	archive_entry_set_pathname(ae, *rel ? rel : ".");
	free(rel);
	return 0;
}

/* The file's attributes, ACLs as system.posix_acl_* among them, as a
 * directory SOURCE's walk reads them, onto the entry. */
static errcode_t host_attrs(struct archive_entry *ae)
{
	const char *p = archive_entry_sourcepath(ae);
	struct src_xattr *x = NULL;
	size_t n = 0, i;
	errcode_t err;

	if (!p)
		p = archive_entry_pathname(ae);
	err = host_xattrs_read(-1, p, &x, &n);
	if (err)
		return err;
	archive_entry_xattr_clear(ae);
	for (i = 0; i < n; i++)
		archive_entry_xattr_add_entry(ae, x[i].name, x[i].value,
					      x[i].size);
	host_xattrs_free(x, n);
	return 0;
}

errcode_t tar_read_dir(struct tar_tree *t, const char *dir, char **msg,
		       char **where)
{
	struct archive *a = archive_read_disk_new();
	struct archive_entry_linkresolver *lr = archive_entry_linkresolver_new();
	struct archive_entry *ae, *spare;
	size_t dlen = strlen(dir);
	errcode_t err = 0;
	int r;

	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	if (!a || !lr)
		err = ENOMEM;
	if (!err) {
		/* symlinks as links, holes kept.  Attributes and ACLs
		 * through the directory walk's reader (host_attrs), not
		 * libarchive's, so that a directory layer and a directory
		 * SOURCE give the same attributes. */
		archive_read_disk_set_symlink_physical(a);
		archive_read_disk_set_behavior(a, ARCHIVE_READDISK_NO_ACL |
						  ARCHIVE_READDISK_NO_XATTR);
		archive_entry_linkresolver_set_strategy(lr,
				ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
		if (archive_read_disk_open(a, dir) != ARCHIVE_OK)
			err = ORLOV_ERR_ARCHIVE;
	}
	while (!err && (r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			err = ORLOV_ERR_ARCHIVE;
			break;
		}
		if (archive_read_disk_can_descend(a))
			archive_read_disk_descend(a);
		err = host_attrs(ae);
		if (!err)
			err = relative(ae, dir, dlen);
		/* a second name of an inode: a hard link without data */
		spare = NULL;
		if (!err)
			archive_entry_linkify(lr, &ae, &spare);
		if (!err && ae)
			err = tar_add_member(a, t, ae, where);
	}
	if (err == ORLOV_ERR_ARCHIVE && a && archive_error_string(a))
		*msg = strdup(archive_error_string(a));
	if (lr)
		archive_entry_linkresolver_free(lr);
	if (a)
		archive_read_free(a);
	return err;
}

#endif
