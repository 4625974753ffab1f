/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An archive as a source tree (libarchive: tar, pax, cpio and the rest,
 * compressed or not, a file or standard input).  The archive is read once,
 * in its own order, into a tree of names and inodes, file data going to an
 * unlinked spool file in TMPDIR; the tree is then walked as many times as
 * populate needs, in creation order, through walk.h's visitor.  Hard
 * links, devices, FIFOs, owners, modes, times (nanoseconds where the
 * format has them), extended attributes, POSIX ACLs (as their
 * system.posix_acl_* attributes) and sparse files come from the archive.
 */
#ifndef ORLOV_TAR_H
#define ORLOV_TAR_H

#include "source/walk.h"

struct tar_tree;

/* 1 when this build reads archives. */
int tar_supported(void);

/* Read the archive at @path ("-": standard input).  On failure *msg may
 * hold libarchive's words (malloc'ed) and *where the member at fault;
 * *scratch is "creating" or "writing" when the failure was the spool's
 * (TMPDIR's, not the archive's), else NULL. */
errcode_t tar_load(const char *path, struct tar_tree **out, char **msg,
		   char **where, const char **scratch);
/* The archives at @paths (n of them, one "-" at most) applied in order as
 * OCI image layers (layers.h) into one tree; on failure *failed is the
 * layer at fault. */
errcode_t tar_load_layers(const char *const *paths, size_t n,
			  struct tar_tree **out, char **msg, char **where,
			  size_t *failed, const char **scratch);
errcode_t tar_walk(const struct tar_tree *t, const struct walk_opts *wo,
		   const struct walk_visitor *v);
/* @len bytes at @off of member number @member (its note's), from the
 * spool. */
errcode_t tar_reread(const struct tar_tree *t, uint64_t member, void *buf,
		     size_t len, uint64_t off);
void tar_free(struct tar_tree *t);

#endif
