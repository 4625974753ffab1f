/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What was being done, and on what, when an error happened: the words of
 * the one com_err line main() prints ("while WHAT WHERE") and of --json's
 * error object.  The layer that knows the path fills it in; the first
 * error is the one kept, as what follows it is mostly its consequence.
 */
#ifndef ORLOV_ERRCTX_H
#define ORLOV_ERRCTX_H

#include <et/com_err.h>

struct errctx {
	char *what;	/* "reading inode of"; NULL: no error recorded */
	char *where;	/* a path and what else was known of it; NULL: none */
	size_t path_len;	/* where's first bytes: the path alone, without
				   what errctx_add put after it (--json) */
	/* The words of the program or library that failed (mke2fs's
	 * stderr, libselinux's log), on one line; NULL: none */
	char *detail;
};

static inline int errctx_isset(const struct errctx *ec)
{
	return ec->what != NULL;
}

/* Record @what and @where (both copied; @where may be NULL) unless an
 * error is recorded already.  Returns @err, so that a caller can
 * `return errctx_set(...)`; nothing is recorded for 0. */
errcode_t errctx_set(struct errctx *ec, errcode_t err, const char *what,
		     const char *where);
/* The same, @where printf-formatted. */
errcode_t errctx_setf(struct errctx *ec, errcode_t err, const char *what,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same, @where with control bytes and '%' as %XX (fput_escaped), as
 * orlov-layout names paths. */
errcode_t errctx_set_path(struct errctx *ec, errcode_t err,
			     const char *what, const char *where);
/* More words after the recorded @where: " line 3", " member x". */
void errctx_add(struct errctx *ec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void errctx_add_escaped(struct errctx *ec, const char *s);
/* The failing program's or library's own words for the recorded error
 * (the first given is kept): its lines joined with "; ", blanks at
 * either end dropped. */
void errctx_detail(struct errctx *ec, const char *s, size_t len);
/* Forget the recorded error (a caller that knows better replaces it). */
void errctx_clear(struct errctx *ec);

#endif
