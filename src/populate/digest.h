/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_DIGEST_H
#define ORLOV_POPULATE_DIGEST_H

#include "populate/inputs.h"

/* With SOURCE_DATE_EPOCH, in->digest for --create's UUID. */
errcode_t tree_digest(const struct populate_opts *o, struct populate_result *res,
		      struct inputs *in);

#endif
