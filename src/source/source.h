/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tree as populate sees it: the host walk (walk.h), with owners and
 * times rewritten (meta.h) and a device table merged in.  A device table
 * (makedevs and genext2fs format) adds directories, device nodes and FIFOs
 * that are not in SOURCE and sets the mode and owner of ones that are; the
 * added entries take their place in the sorted creation order, so the
 * layout is the one the kernel gives the merged tree.  Its paths are the
 * target directory's: a 'd' line for "/" sets the target's own mode and
 * owner (src_entry.table_attrs), as genext2fs -D FILE:PATH sets PATH's.
 */
#ifndef ORLOV_SOURCE_H
#define ORLOV_SOURCE_H

#include <stdio.h>
#include <sys/types.h>
#include "source/meta.h"
#include "source/nametree.h"
#include "source/walk.h"

/* A table line's entry; the tree's node of the same number names it. */
struct dt_entry {
	char type;		/* 'd', 'f', 'c', 'b', 'p'; 0: only a parent */
	mode_t mode;		/* permission bits */
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	unsigned int line;
};

struct devtable {
	struct name_tree names;	/* node 0: the target directory; children
				   sorted bytewise once the table is read */
	struct dt_entry *e;	/* by node */
	size_t ecap;
	struct timespec time;	/* the table file's mtime: the new entries' */
	size_t entries;
	char what[64];		/* an error's "while ...", till the next one */
};

/* Read the table in @path.  On a malformed line, *line says which. */
errcode_t devtable_read(const char *path, struct devtable *dt,
			unsigned int *line);
void devtable_free(struct devtable *dt);

struct tar_tree;

/* Where the entries come from: a host directory, or an archive read once. */
struct source {
	const char *dir;
	const struct tar_tree *tar;	/* when not NULL, instead of @dir */
};

/* The walk of @src, with @r applied to every entry and @dt (may be NULL)
 * merged. */
errcode_t source_walk(const struct source *src, const struct walk_opts *wo,
		      const struct meta_rules *r, struct devtable *dt,
		      const struct walk_visitor *v);

#endif
