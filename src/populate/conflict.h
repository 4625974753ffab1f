/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Options that do not go together (optparse.c checks them after parsing). */
#ifndef ORLOV_CONFLICT_H
#define ORLOV_CONFLICT_H

#include "populate/opts.h"

/* What is wrong with @p's options together, in the order the rules are
 * checked (the first broken one); NULL when nothing. */
const char *options_conflict(const struct populate_opts *p);

#endif
