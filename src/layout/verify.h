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
#include "source/meta.h"

/* One non-directory source path, for the hard link check at the end. */
struct vlink {
	dev_t dev;
	ino_t ino;
	ext2_ino_t img;
	unsigned int img_links;
	char *path;		/* image path */
};

struct verify {
	ext2_filsys fs;
	int path_is_root;	/* PATH is "/": lost+found may be extra */
	unsigned long long verified, mismatches;
	struct vlink *links;
	size_t nlinks, cap;
	struct strbuf ipath;	/* image path of the current entry */
	struct strbuf spath;	/* host path, for error messages */
	struct errctx *ctx;
	const struct meta_rules *meta;
	int have_proc;		/* /proc/self/fd names what is held open */
	unsigned char *sbuf, *ibuf;
};

#define VBUF_SIZE 65536

/* "mismatch: PATH: what (expected X, got Y)", counted. */
void mismatch(struct verify *v, const char *what, const char *exp,
	      const char *got);
void mismatch_u(struct verify *v, const char *what, unsigned long long exp,
		unsigned long long got);
/* @err while @doing, at the host path. */
errcode_t vfail(struct verify *v, errcode_t err, const char *doing);
errcode_t open_entry(struct verify *v, int parent, const char *name,
		     int flags, const struct stat *st, int *fd);
errcode_t verify_entry(struct verify *v, int parent, const char *name,
		       const struct stat *st, ext2_ino_t ino, int *dirfd,
		       struct ext2_inode_large *dinode);

#endif
