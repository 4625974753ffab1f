/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_RUN_H
#define ORLOV_POPULATE_RUN_H

#include "populate/inputs.h"

/* One run on IMAGE as it is now, as far as @mode says. */
errcode_t populate_run(const struct populate_opts *o, struct populate_result *res,
	      struct inputs *in, enum run_mode mode);

#endif
