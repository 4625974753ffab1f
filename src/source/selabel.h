/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --file-contexts: every entry labelled as setfiles labels it, by
 * libselinux's selabel_lookup on its absolute path in the image and its
 * mode, the context stored as the security.selinux attribute.  The label
 * joins the entry's attributes (replacing one from the source), so it
 * goes where the kernel puts an attribute that is set: in the inode or
 * the attribute block, through the same path as the source's own.
 */
#ifndef ORLOV_SELABEL_H
#define ORLOV_SELABEL_H

#include <stddef.h>
#include <sys/types.h>
#include <et/com_err.h>

#include "lib/src_xattr.h"
#include "lib/util.h"

struct selabel {
	void *handle;		/* libselinux's struct selabel_handle */
	const char *root;	/* the source root's path in the image */
	struct strbuf path;	/* the looked-up path */
	struct src_xattr *x;	/* the entry's attributes, label merged */
	struct strbuf log;	/* libselinux's messages while it read the
				   file (never printed: the error's words) */
	size_t cap;
	char *ctx;		/* the looked-up context, till the next */
};

/* Built with libselinux? (Else --file-contexts is refused.) */
int selabel_supported(void);

/* 0 when @file is a regular file that can be opened for reading; else
 * the errno (EISDIR for a directory), or ORLOV_ERR_USAGE for another kind
 * of file.  libselinux takes a directory and labels nothing. */
errcode_t selabel_check_file(const char *file);

/* selabel_check_file(), then @file read as selabel_start() reads it:
 * libselinux takes a directory and labels nothing, and prints what it
 * refuses.  On error, @why gets its words, on one line. */
errcode_t selabel_try(const char *file, struct strbuf *why);

/* Read the contexts file @file (selabel_open, SELABEL_CTX_FILE); @root is
 * the directory of the image the source's root becomes.  libselinux's
 * messages go into l->log, also on failure (then kept till selabel_end). */
errcode_t selabel_start(struct selabel *l, const char *file,
			const char *root);

/* The attributes of the entry at @rel (relative to the root, "" for it)
 * with mode @mode: @in with security.selinux set to the entry's context,
 * or removed where the file says <<none>> or nothing matches.  *out
 * stays valid until the next call. */
errcode_t selabel_apply(struct selabel *l, const char *rel, mode_t mode,
			const struct src_xattr *in, size_t nin,
			struct src_xattr **out, size_t *nout);

void selabel_end(struct selabel *l);

#endif
