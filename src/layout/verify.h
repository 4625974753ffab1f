/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orlov-layout verify, inside: the state of one run, shared by the tree
 * walk (verify.c) and the comparison of one entry with its image
 * namesake (compare.c).
 */
#ifndef ORLOV_LAYOUT_VERIFY_H
#define ORLOV_LAYOUT_VERIFY_H

#include <sys/stat.h>
#include <sys/types.h>

#include "layout/layout.h"
#include "image/image_read.h"
#include "lib/keymap.h"
#include "source/meta.h"
#include "source/walk.h"

/* One non-directory source path, for the hard link check at the end. */
struct vlink {
	dev_t dev;
	ino_t ino;
	size_t alone;		/* not 0: can share its inode with no other */
	size_t same_ino;	/* the next with this st_ino, + 1; 0: none */
	mode_t mode;		/* what this path expects of the image inode */
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	ext2_ino_t img;
	unsigned int img_links;
	char *path;		/* image path */
};

/* A directory of the image being compared with its source namesake. */
struct vdir {
	struct ir_dir d;	/* its entries, in the walk's name order */
	size_t j;		/* the first not yet compared */
	unsigned int links;	/* its i_links_count */
	unsigned long long want_links;	/* 2, and one per subdirectory */
	int is_root;		/* PATH itself */
	size_t il;		/* image path length to go back to */
};

struct verify {
	ext2_filsys fs;
	const struct layout_opts *opts;
	int path_is_root;	/* PATH is "/": lost+found may be extra */
	unsigned long long verified, mismatches;
	struct vlink *links;	/* in walk order till check_links sorts them */
	size_t nlinks, cap;
	struct keymap by_ino;	/* st_ino: the first of @links with it */
	struct strbuf ipath;	/* image path of the current entry */
	struct errctx *ctx;
	struct vdir *dirs;	/* the directories entered, PATH first */
	size_t depth, dcap;
	size_t dead;		/* source directories entered below one the
				   image lacks (or has as another type) */
	ext2_ino_t root;	/* PATH's inode */
	unsigned char *sbuf, *ibuf;
};

#define VBUF_SIZE 65536

/* "mismatch: PATH: what (expected X, got Y)", counted. */
void verify_mismatch(struct verify *v, const char *what, const char *exp,
	      const char *got);
void verify_mismatch_u(struct verify *v, const char *what, unsigned long long exp,
		unsigned long long got);
/* @err while @doing, at the source entry @path ("" for SOURCE). */
errcode_t verify_src_error(struct verify *v, errcode_t err, const char *doing,
			   const char *path);
errcode_t vfail(struct verify *v, const struct src_entry *se, errcode_t err,
		const char *doing);
errcode_t verify_entry(struct verify *v, const struct src_entry *se,
		       ext2_ino_t ino, int *is_dir,
		       struct ext2_inode_large *dinode);
/* SOURCE's own attributes onto PATH, as --root-owner and --root-attrs
 * had orlov-populate put them. */
errcode_t verify_root(struct verify *v, const struct src_entry *se,
		      const struct ext2_inode_large *inode);

#endif
