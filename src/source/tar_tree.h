/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside an archive read as a source tree (tar.h): the tree tar.c loads
 * and tar_walk.c walks.
 */
#ifndef ORLOV_TAR_TREE_H
#define ORLOV_TAR_TREE_H

#include <stdint.h>
#include <sys/stat.h>

#include "source/nametree.h"
#include "source/walk.h"

/* One stretch of a file's data, and where the spool holds it. */
struct text {
	uint64_t loff, len, soff;
};

struct tinode {
	const struct tar_tree *t;
	struct stat st;
	char *link;		/* symlink target */
	struct src_xattr *x;
	size_t nx;
	struct text *ext;
	size_t next, ecap;
};

struct tar_tree {
	struct name_tree names;	/* every member's name, and their parents */
	uint32_t *ino;		/* by node: its inode in @in */
	size_t ino_cap;
	struct tinode *in;
	size_t ni, icap;
	int spool;		/* unlinked file with every file's data */
	uint64_t spool_len;
	const char *spool_failed; /* "writing": the spool's error, TMPDIR's */
	struct tar_layers *ly;	/* while layers are read, else NULL */
};

#ifdef HAVE_LIBARCHIVE
struct archive;
struct archive_entry;

/* One member of @a into @t (tar_member.c); on failure *where names it. */
errcode_t tar_add_member(struct archive *a, struct tar_tree *t,
			 struct archive_entry *ae, char **where);
/* The host directory @dir into @t (tar_disk.c), as an archive of it made
 * with hard links would give: a directory layer. */
errcode_t tar_read_dir(struct tar_tree *t, const char *dir, char **msg,
		       char **where);
#endif

/* The tree's inodes (tar_member.c): a new one, a node's, one's memory. */
errcode_t tar_new_inode(struct tar_tree *t, uint32_t *out);
const struct stat *tar_node_st(const struct tar_tree *t, uint32_t node);
void tar_inode_release(struct tinode *in);

#endif
