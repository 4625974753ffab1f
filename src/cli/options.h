/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_OPTIONS_H
#define ORLOV_OPTIONS_H

#include <stdio.h>
#include <et/com_err.h>
#include "populate/opts.h"
#include "populate/optparse.h"

struct options {
	struct populate_opts p;	/* what the engine is asked to do */
	struct optparse_aux x;	/* what the parse keeps beside it */
	int help, version;	/* help: HELP_* */
};

/* Parse argv into @o.  On a usage error, *msg says what was wrong. */
errcode_t options_parse(int argc, char **argv, struct options *o,
			const char **msg);

/* What o->help asks for: --help, --help=all, --help=kernel (0: none). */
enum { HELP_NONE, HELP_SHORT, HELP_ALL, HELP_KERNEL };

/* --help's @arg (NULL: none) as HELP_*, -1 for anything else. */
int usage_which(const char *arg);
void options_usage(FILE *f, const char *prog, int which);
void options_free(struct options *o);

#endif
