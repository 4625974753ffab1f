/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_OPTIONS_H
#define ORLOV_OPTIONS_H

#include <stdio.h>
#include <et/com_err.h>
#include "populate/opts.h"
#include "source/fsconfig.h"

struct options {
	struct populate_opts p;	/* what the engine is asked to do */
	char msgbuf[1024];	/* a usage message naming the option, or a
				   file's error with its reader's words */
	char target_buf[4096];	/* --target with '/' runs made one */
	int help, version;	/* help: HELP_* */
	const char *fs_config_file;	/* --fs-config FILE, read into: */
	struct fsconfig fs_config;
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
