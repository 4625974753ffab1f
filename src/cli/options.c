// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-populate's command line: its words through getopt_long into the
 * parser liborlov uses too (populate/optparse.c); here only what is the
 * command line's own (operands, --help, --version, the test hooks). */
#include "config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "image/io_guard.h"
#include "image/mkfs.h"
#include "cli/options.h"
#include "populate/resolve.h"
#include "lib/orlov_err.h"

/* A usage error with a fixed message. */
#define USAGE(m) (*msg = (m), ORLOV_ERR_USAGE)

/* getopt_long's table, from the parser's names. */
static void long_options(struct option *lo)
{
	size_t i;

	for (i = 0; optparse_names[i].name; i++) {
		lo[i].name = optparse_names[i].name;
		lo[i].has_arg = optparse_names[i].arg == 2 ? optional_argument :
				optparse_names[i].arg ? required_argument :
							no_argument;
		lo[i].flag = NULL;
		lo[i].val = optparse_names[i].id;
	}
	memset(&lo[i], 0, sizeof(lo[i]));
}

/* An option getopt_long does not know, or one without its argument. */
static errcode_t bad_option(struct options *o, int c, char **argv,
			    const char **msg)
{
	char opt[3] = { '-', (char)optopt, 0 };

	if (c == ':')
		return optparse_usage(&o->x, msg, "", argv[optind - 1], " needs an argument");
	if (optopt)
		return optparse_usage(&o->x, msg, "unknown option ", opt, "");
	return optparse_usage(&o->x, msg, "unknown option ", argv[optind - 1], "");
}

#ifdef ORLOV_TEST_HOOKS
/* The test build's hooks (tests/orlov-populate-hooks): a fault injected
 * in the image's I/O, smaller budgets for the staged inodes and for a
 * directory's blocks. */
static errcode_t test_hooks(struct populate_opts *p, const char **msg)
{
	const char *env = getenv("ORLOV_STAGE_BUDGET");
	struct io_fault fault;

	if (env && *env)
		p->stage_budget = (size_t)strtoul(env, NULL, 10) << 10;
	env = getenv("ORLOV_DIR_BUDGET");
	if (env && *env)
		p->dir_budget = (size_t)strtoul(env, NULL, 10) << 10;
	p->fault = getenv("ORLOV_FAULT");
	if (io_guard_parse(p->fault, &fault))
		return USAGE("ORLOV_FAULT takes count, kill:N, eio:N, enospc:N, eioread:N, fillkill:N or filleio:N");
	return 0;
}
#else
/* The shipped programs read no test hook: no environment can make them
 * fail on purpose (tools/code-shape.sh, tests/t-no-hooks.sh). */
static errcode_t test_hooks(struct populate_opts *p, const char **msg)
{
	(void)p;
	(void)msg;
	return 0;
}
#endif

/* After the options: the operands, and what follows from them. */
static errcode_t parse_finish(struct options *o, int argc, char **argv,
			      const char **msg)
{
	struct populate_opts *p = &o->p;
	errcode_t err = populate_resolve(p, msg);

	if (!err)
		err = optparse_check(p, &o->x, msg);
	if (!err)
		err = test_hooks(p, msg);
	if (err)
		return err;
	/* --create's SIZE last, as mke2fs takes it: IMAGE SOURCE SIZE */
	if (p->create && !p->mkfs.size) {
		if (argc - optind < 3 || !mkfs_size_word(argv[argc - 1]))
			return USAGE("--create needs SIZE: --create SIZE, or SIZE after IMAGE and SOURCE");
		err = optparse_create_size(p, &o->x, argv[--argc], msg);
		if (err)
			return err;
	}
	if (argc - optind < 2)
		return USAGE("expected IMAGE and SOURCE");
	return optparse_operands(p, &o->x, argv[optind],
				 (const char *const *)argv + optind + 1,
				 (size_t)(argc - optind - 1), msg);
}

errcode_t options_parse(int argc, char **argv, struct options *o,
			const char **msg)
{
	struct option lo[OPTPARSE_NNAMES + 1];
	errcode_t err;
	int c;

	memset(o, 0, sizeof(*o));
	err = optparse_defaults(&o->p, &o->x, msg);
	if (err)
		return err;
	long_options(lo);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, OPTPARSE_SHORT, lo, NULL)) != -1) {
		c = optparse_letter(c);
		/* a word after --create that is no SIZE (an option, IMAGE):
		 * SIZE is the last operand, and the word is read again */
		if (c == OPT_CREATE && optarg == argv[optind - 1] &&
		    !mkfs_size_word(optarg)) {
			o->p.create = 1;
			optind--;
			continue;
		}
		if (c == OPT_HELP || c == OPT_VERSION) {
			if (c == OPT_VERSION)
				o->version = 1;
			else if ((o->help = usage_which(optarg)) < 0)
				return optparse_usage(&o->x, msg, "--help=", optarg,
						      ": give --help, --help=all or --help=kernel");
			return 0;
		}
		if (c == ':' || c == '?')
			return bad_option(o, c, argv, msg);
		err = optparse_option(&o->p, &o->x, c, optarg, msg);
		if (err)
			return err;
	}
	return parse_finish(o, argc, argv, msg);
}

void options_free(struct options *o)
{
	optparse_free(&o->p, &o->x);
}
