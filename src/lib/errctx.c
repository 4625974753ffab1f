// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errctx.h"
#include "lib/util.h"

/* Without memory for the words the error itself still gets out: main()
 * prints its own "while ..." when what is NULL. */
static int record(struct errctx *ec, const char *what, char *where)
{
	ec->what = strdup(what);
	ec->where = where;
	ec->path_len = where ? strlen(where) : 0;
	return ec->what != NULL;
}

errcode_t errctx_set(struct errctx *ec, errcode_t err, const char *what,
		     const char *where)
{
	if (err && !errctx_isset(ec))
		record(ec, what, where ? strdup(where) : NULL);
	return err;
}

errcode_t errctx_setf(struct errctx *ec, errcode_t err, const char *what,
		      const char *fmt, ...)
{
	struct strbuf b = { 0 };
	va_list ap;

	if (!err || errctx_isset(ec))
		return err;
	va_start(ap, fmt);
	if (sb_vprintf(&b, fmt, ap))
		sb_free(&b);	/* the words lost, not the error */
	va_end(ap);
	record(ec, what, b.s);
	return err;
}

errcode_t errctx_set_path(struct errctx *ec, errcode_t err,
			     const char *what, const char *where)
{
	struct strbuf b = { 0 };

	if (!err || errctx_isset(ec))
		return err;
	/* an empty path still says "while WHAT " as before */
	if (!sb_append(&b, "", 0) && where)
		sb_escaped(&b, where, strlen(where));
	record(ec, what, b.s ? b.s : strdup(""));
	return err;
}

/* @ec's where as a string buffer to append to (taken over), or 1. */
static int take_where(struct errctx *ec, struct strbuf *b)
{
	if (!errctx_isset(ec))
		return 1;
	b->s = ec->where;
	b->len = b->cap = ec->where ? strlen(ec->where) : 0;
	if (ec->where)
		b->cap++;
	ec->where = NULL;
	return 0;
}

void errctx_add(struct errctx *ec, const char *fmt, ...)
{
	struct strbuf b;
	va_list ap;

	if (take_where(ec, &b))
		return;
	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	ec->where = b.s;
}

void errctx_add_escaped(struct errctx *ec, const char *s)
{
	struct strbuf b;

	if (take_where(ec, &b))
		return;
	sb_escaped(&b, s, strlen(s));
	ec->where = b.s;
}

void errctx_detail(struct errctx *ec, const char *s, size_t len)
{
	struct strbuf b = { 0 };
	size_t i;
	int gap = 0;

	if (!errctx_isset(ec) || ec->detail)
		return;
	for (i = 0; i < len; i++) {
		if (s[i] == '\n' || s[i] == '\r') {
			gap = b.len > 0;
			continue;
		}
		if (!b.len && (s[i] == ' ' || s[i] == '\t'))
			continue;
		if (gap && sb_append(&b, "; ", 2))
			break;
		gap = 0;
		if (sb_append(&b, s + i, 1))
			break;
	}
	while (b.len && (b.s[b.len - 1] == ' ' || b.s[b.len - 1] == '\t'))
		b.s[--b.len] = '\0';
	if (b.len)
		ec->detail = b.s;
	else
		sb_free(&b);
}

void errctx_clear(struct errctx *ec)
{
	free(ec->what);
	free(ec->where);
	free(ec->detail);
	ec->what = ec->where = ec->detail = NULL;
	ec->path_len = 0;
}
