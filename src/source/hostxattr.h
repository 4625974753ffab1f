/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one reader of a host file's extended attributes, for every walk of
 * a host directory (orlov-populate's and orlov-layout verify's alike).
 */
#ifndef ORLOV_HOSTXATTR_H
#define ORLOV_HOSTXATTR_H

#include "source/walk.h"

/*
 * All attributes of one host file, sorted by name (strcmp), into *out
 * (*n of them; free with host_xattrs_free).  Read through the open file
 * @fd, or where none is open (a symlink, a device, a FIFO) through @path,
 * whose last component is not followed.  A list or value that grew
 * between the size query and the read (another writer) is asked for
 * again; a filesystem without attributes has none.
 */
errcode_t host_xattrs_read(int fd, const char *path, struct src_xattr **out,
			   size_t *n);
void host_xattrs_free(struct src_xattr *x, size_t n);

#endif
