// SPDX-License-Identifier: GPL-2.0-or-later
/* The one error context: the first error is kept, the words are copies,
 * paths are escaped only where asked, more words go after the path. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/errctx.h"
#include "tap.h"

static int same(const char *got, const char *want)
{
	if (got == want || (got && want && !strcmp(got, want)))
		return 1;
	printf("#   got \"%s\", want \"%s\"\n", got ? got : "(null)",
	       want ? want : "(null)");
	return 0;
}

int main(void)
{
	struct errctx ec = { 0 };
	char what[] = "reading", where[] = "src/a";

	is_int(errctx_set(&ec, 0, "x", "y"), 0, "no error: 0 back");
	tap_ok(!errctx_isset(&ec), "no error: nothing recorded");
	is_int(errctx_set(&ec, 5, what, where), 5, "the error back");
	what[0] = where[0] = '?';
	tap_ok(same(ec.what, "reading") && same(ec.where, "src/a"),
	       "what and where are copies, not the caller's buffers");
	errctx_set(&ec, 7, "writing", "b");
	errctx_setf(&ec, 7, "writing", "%s", "b");
	errctx_set_path(&ec, 7, "writing", "b");
	tap_ok(same(ec.what, "reading") && same(ec.where, "src/a"),
	       "a later error leaves the first in place");
	errctx_add(&ec, " line %u", 3u);
	tap_ok(same(ec.where, "src/a line 3"), "more words after the path");
	errctx_clear(&ec);
	tap_ok(!errctx_isset(&ec) && !ec.where, "cleared");

	errctx_add(&ec, " line %u", 3u);
	tap_ok(!errctx_isset(&ec) && !ec.where,
	       "nothing added when no error is recorded");
	errctx_set(&ec, 1, "opening", NULL);
	tap_ok(same(ec.what, "opening") && !ec.where, "no path: none kept");
	errctx_add(&ec, ": %s", "a squashfs image");
	tap_ok(same(ec.where, ": a squashfs image"), "words with no path");
	errctx_clear(&ec);

	errctx_set_path(&ec, 2, "reading inode of", "a b%\n\xff");
	tap_ok(same(ec.where, "a%20b%25%0A%FF"),
	       "a path escaped as orlov-layout prints paths");
	errctx_add_escaped(&ec, " c");
	tap_ok(same(ec.where, "a%20b%25%0A%FF%20c"), "escaped words added");
	errctx_clear(&ec);
	errctx_set_path(&ec, 2, "writing", "");
	tap_ok(same(ec.where, ""), "an empty path is an empty string");
	errctx_clear(&ec);

	{
		char long_path[2000];

		memset(long_path, 'p', sizeof(long_path) - 1);
		long_path[sizeof(long_path) - 1] = '\0';
		errctx_setf(&ec, 3, "reading", "%s/%s", "src", long_path);
		is_int(ec.where ? strlen(ec.where) : 0, 4 + sizeof(long_path) - 1,
		       "a formatted path longer than any buffer is whole");
		errctx_clear(&ec);
		errctx_set(&ec, 3, "reading archive", "a.tar");
		errctx_add(&ec, " (%s)", long_path);
		is_int(ec.where ? strlen(ec.where) : 0, 5 + 3 + sizeof(long_path) - 1,
		       "words added longer than any buffer are whole");
		errctx_clear(&ec);
	}
	return tap_done();
}
