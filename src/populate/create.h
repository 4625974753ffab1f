/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_CREATE_H
#define ORLOV_POPULATE_CREATE_H

#include "populate/inputs.h"

/* IMAGE's lock, held until the new image has its name. */
errcode_t create_lock(const struct populate_opts *o, struct populate_result *res,
		      struct inputs *in);
/* The new image's temporary name next to IMAGE, where it can be made. */
errcode_t create_temp(const struct populate_opts *o, struct populate_result *res,
		      struct inputs *in);
/* --dry-run --create: a scratch file in TMPDIR instead. */
errcode_t create_scratch(const struct populate_opts *o,
			 struct populate_result *res, struct inputs *in);
/* The new image in IMAGE's place, renamed over it or written into its
 * partition. */
errcode_t create_commit(const struct populate_opts *o,
			struct populate_result *res, struct inputs *in);
/* A host error (TMPDIR full) that names IMAGE, met while the run wrote
 * a scratch image in TMPDIR: told as the scratch file's. */
errcode_t create_scratch_error(const struct populate_opts *o,
			       struct populate_result *res,
			       const struct inputs *in, errcode_t err);
/* mke2fs, of the size given or, for auto, the size the tree needs. */
errcode_t create_image(const struct populate_opts *o, struct populate_result *res,
		       struct inputs *in);

#endif
