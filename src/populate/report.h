/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_REPORT_H
#define ORLOV_POPULATE_REPORT_H

#include "populate/ctx.h"

/* Record the first error with what was being done and where (verbatim). */
errcode_t pop_fail_at(struct pop_ctx *c, errcode_t err, const char *what,
		  const char *where);
/* SOURCE/path, as messages name an entry (NULL without memory). */
char *source_path(const struct pop_ctx *c, const char *path);
/* pop_fail_at for a path relative to the source root, shown under SOURCE. */
errcode_t pop_fail(struct pop_ctx *c, errcode_t err, const char *what,
	       const char *path);
/* pop_fail_at for a scratch file of the run (lib/spill.h): named by its
 * directory and "(TMPDIR)", TMPDIR full being no fault of the source
 * file whose data went through it ("writing", "reading"). */
errcode_t pop_fail_scratch(struct pop_ctx *c, errcode_t err, const char *doing);
/* A device table's error: it names a path in the image. */
int devtable_error(errcode_t err);
/* @path of the source root as it is in the image: under the target. */
char *image_path(const struct populate_opts *o, const char *path);
/* The walk's errors (struct walk_visitor's error). */
void walk_error(void *ctx, errcode_t err, const char *what, const char *path);
/* The walk's scratch file failed (walk_visitor.scratch_error). */
void walk_scratch_error(void *ctx, errcode_t err, const char *doing);
/* --trace's record of a new inode. */
void trace_inode(struct pop_ctx *c, const struct frame *parent,
		 const struct src_entry *e, int is_dir,
		 const struct orlov_figures *f, uint32_t ino);
/* An entry written as inode @ino: -v's line, the progress line. */
void report_entry(struct pop_ctx *c, const struct src_entry *e, uint32_t ino);
/* The write pass's progress to the caller (opts.h), @done at its end. */
void report_progress(struct pop_ctx *c, int done);
/* The tree does not fit: by how much. */
errcode_t too_small(struct pop_ctx *c, errcode_t err);

#endif
