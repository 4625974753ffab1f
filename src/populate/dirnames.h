/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names a directory of the image had when it was loaded (the target,
 * or one --merge goes into), as sorted 64-bit hashes: a source name that
 * is not among them is new without a scan of the directory, so copying n
 * names into a directory of m costs n log m, not n times m.
 */
#ifndef ORLOV_POPULATE_DIRNAMES_H
#define ORLOV_POPULATE_DIRNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#include "model/dir.h"

struct dir_names {
	uint64_t *h;	/* sorted */
	size_t n;
};

errcode_t dir_names_load(struct dir_names *dn, const struct fs_state *fs,
			 const struct dirbuf *d);
void dir_names_free(struct dir_names *dn);

/* @name in @d (*found), as dir_lookup finds it (its inode in @ino, when
 * not NULL), where @dn holds @d's names as loaded: a name added since is
 * not looked for (the source has each name of a directory once).  In a
 * casefolded directory (@d->cf), a name that folds alike is found. */
errcode_t dir_names_lookup(const struct dir_names *dn,
			   const struct fs_state *fs, const struct dirbuf *d,
			   const char *name, size_t len, int *found,
			   uint32_t *ino);

#endif
