/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --fs-config: Android's canned fs_config, as e2fsdroid -C reads it
 * (libcutils' load_canned_fs_config): one line per path,
 *
 *	PATH UID GID MODE [capabilities=N]
 *
 * PATH relative to the image's root (a leading '/' dropped; "/", or a
 * line starting with a blank, is the root itself; a PATH with blanks in
 * '...' or "..."), UID and GID decimal, MODE octal permission bits, N
 * the 64-bit permitted capability mask (0x... hex, or decimal).  A later
 * line for the same path replaces an earlier one, so that a product's
 * file appended to the platform's overrides it.  Other KEY=VALUE fields
 * (selabel=) are ignored, as libcutils ignores them; blank lines and
 * lines starting with '#' are skipped (libcutils refuses blank lines).
 *
 * Every entry the run creates must have a line (e2fsdroid exits on one
 * that has none); the target directory itself may have one, and
 * lost+found at the image's root takes none (e2fsdroid skips it).  The line
 * is applied last, after --uid-map, --gid-map, --all-root,
 * --squash-perms and --devtable: its owner, group and permission bits are
 * the image's (the file type stays the entry's), and a non-zero mask
 * becomes security.capability, as e2fsdroid writes it (VFS_CAP_REVISION_2,
 * effective, the mask as permitted, nothing inheritable), replacing the
 * source's.  --root-owner keeps the last word on the target.
 */
#ifndef ORLOV_FSCONFIG_H
#define ORLOV_FSCONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <et/com_err.h>

#include "lib/src_xattr.h"
#include "lib/util.h"

struct src_entry;

struct fsconfig_line {
	char *path;		/* without the leading '/': "" is the root */
	uint32_t uid, gid;
	mode_t mode;		/* permission bits */
	uint64_t caps;		/* permitted capabilities; 0: none */
	unsigned int line;
};

/* The table, sorted by path, one line per path (the last given). */
struct fsconfig {
	struct fsconfig_line *l;
	size_t n, cap;
	unsigned int caps_line;	/* the first line with capabilities, or 0 */
};

/* Read @file.  On a malformed line, *line says which (else 0). */
errcode_t fsconfig_read(const char *file, struct fsconfig *fc,
			unsigned int *line);
/* The line for @path ("" the root), or NULL. */
const struct fsconfig_line *fsconfig_find(const struct fsconfig *fc,
					  const char *path);
void fsconfig_free(struct fsconfig *fc);

/* One walk's use of a table: the entries' keys and attributes. */
struct fsconfig_walk {
	const struct fsconfig *fc;	/* NULL: no --fs-config */
	const char *root;	/* the source root's path in the image */
	struct strbuf key;
	struct src_xattr *x;	/* the entry's attributes, capability merged */
	size_t cap;
	unsigned char caps[20];	/* struct vfs_cap_data, revision 2 */
};

void fsconfig_walk_start(struct fsconfig_walk *w, const struct fsconfig *fc,
			 const char *root);
/* @e (its path relative to the source root) with its line applied; its
 * attributes stay valid until the next call.  ORLOV_ERR_FSCONFIG_MISSING
 * for an entry below the root that has no line. */
errcode_t fsconfig_walk_apply(struct fsconfig_walk *w, struct src_entry *e);
void fsconfig_walk_end(struct fsconfig_walk *w);

#endif
