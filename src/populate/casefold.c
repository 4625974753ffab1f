// SPDX-License-Identifier: GPL-2.0-or-later
/* Casefolded directories of the copy (casefold.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>

#include "populate/casefold.h"
#include "populate/report.h"
#include "model/casefold.h"
#include "lib/orlov_err.h"

uint32_t casefold_flag(struct pop_ctx *c, const struct src_entry *e)
{
	int marked = (e->fsflags & FS_CASEFOLD_FL) != 0;
	size_t i;

	for (i = 0; i < c->o->ncasefold; i++)
		if (!strcmp(c->o->casefold[i], e->path)) {
			marked = 1;
			if (c->scan.cf_seen)
				c->scan.cf_seen[i] = 1;
		}
	/* a source +F on an image without the feature is dropped, as the
	 * other flags are (FS_IOC_SETFLAGS would fail: EOPNOTSUPP) */
	return marked && c->fs.dx.encoding ? FS_CASEFOLD_FL : 0;
}

errcode_t casefold_check_merge(struct pop_ctx *c, const struct src_entry *e,
				int is_cf)
{
	size_t i;

	for (i = 0; i < c->o->ncasefold; i++) {
		if (strcmp(c->o->casefold[i], e->path))
			continue;
		if (c->scan.cf_seen)
			c->scan.cf_seen[i] = 1;
		if (!is_cf)
			return pop_fail(c, ORLOV_ERR_CASEFOLD_MERGED, "checking",
					e->path);
	}
	return 0;
}

errcode_t casefold_check_name(struct pop_ctx *c, struct scan_dir *up,
			      const struct src_entry *e)
{
	errcode_t err;
	int dup;

	if (!up->cf)
		return 0;
	if (c->fs.dx.strict &&
	    !cf_name_valid(c->fs.dx.encoding, e->name, e->name_len))
		return pop_fail(c, ORLOV_ERR_CASEFOLD_NAME, "checking", e->path);
	err = cf_set_add(&up->cf_names, c->fs.dx.encoding, e->name,
			 e->name_len, &dup);
	if (!err && dup)
		err = ORLOV_ERR_CASE_COLLISION;
	return err ? pop_fail(c, err, "checking", e->path) : 0;
}

errcode_t casefold_begin(struct pop_ctx *c)
{
	if (!c->o->ncasefold)
		return 0;
	if (!c->fs.dx.encoding)
		return pop_fail_at(c, ORLOV_ERR_CASEFOLD_FEATURE, "checking",
				   c->o->image);
	c->scan.cf_seen = calloc(c->o->ncasefold, 1);
	return c->scan.cf_seen ? 0 : ENOMEM;
}

errcode_t casefold_check_paths(struct pop_ctx *c)
{
	size_t i;

	for (i = 0; i < c->o->ncasefold; i++)
		if (c->scan.cf_seen && !c->scan.cf_seen[i])
			return pop_fail_at(c, ORLOV_ERR_CASEFOLD_PATH, "checking",
					   c->o->casefold[i]);
	return 0;
}
