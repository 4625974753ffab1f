/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options' words turned into struct populate_opts, one parser under
 * both callers: orlov-populate's command line (cli/options.c, through
 * getopt_long) and liborlov (api/api.c, member by member, no getopt).
 * The same defaults, values, checks and refusals with the same words, so
 * that the two make the same image from the same options.  Everything it
 * keeps is in the structures it is given: calls run in several threads
 * at once.
 */
#ifndef ORLOV_OPTPARSE_H
#define ORLOV_OPTPARSE_H

#include <et/com_err.h>
#include "populate/opts.h"
#include "source/fsconfig.h"

/* The options: a short one's letter, a long-only one's number above 255. */
enum optparse_id {
	OPT_TARGET = 't', OPT_VERBOSE = 'v', OPT_QUIET = 'q',
	OPT_HELP = 'h', OPT_VERSION = 'V',
	OPT_POLICY = 256, OPT_TOPDIR, OPT_SEED, OPT_COLOUR, OPT_CPUS,
	OPT_POSSIBLE_CPUS, OPT_KERNEL, OPT_MB_OPTIMIZE_SCAN, OPT_DRIVER,
	OPT_ROTATIONAL, OPT_DELALLOC, OPT_NO_DELALLOC, OPT_TRACE, OPT_UNDO,
	OPT_NO_XATTRS, OPT_NO_FSCK, OPT_ATOMIC, OPT_IN_PLACE, OPT_CREATE,
	OPT_FS_TYPE, OPT_BLOCK_SIZE, OPT_INODES, OPT_MKFS_OPTIONS,
	OPT_ALL_ROOT, OPT_UID_MAP, OPT_GID_MAP, OPT_ROOT_OWNER, OPT_DEVTABLE,
	OPT_DRY_RUN, OPT_JSON, OPT_MERGE, OPT_ROOT_ATTRS, OPT_FORCE,
	OPT_FILE_CONTEXTS, OPT_SQUASH_PERMS, OPT_LABEL, OPT_UUID,
	OPT_PARTITION, OPT_OFFSET, OPT_FS_CONFIG, OPT_WHITEOUTS, OPT_JOBS,
	OPT_CASEFOLD,
};

/* A long option: its name, whether it takes an argument (getopt's
 * numbers: 0 none, 1 required, 2 optional) and its id. */
struct optparse_name {
	const char *name;
	int arg;
	int id;
};

/* Every long option, ended by a NULL name. */
extern const struct optparse_name optparse_names[];
#define OPTPARSE_NNAMES 48
/* The short options, as getopt takes them (':' first: a missing
 * argument told apart from an unknown option). */
#define OPTPARSE_SHORT ":t:vqhVL:U:b:N:F"

/* What the parse keeps beside the options: the words it made, the
 * opposites seen, the files it read. */
struct optparse_aux {
	char msgbuf[1024];	/* a usage message naming the option, or a
				   file's error with its reader's words */
	char target_buf[4096];	/* --target with '/' runs made one */
	unsigned int given;	/* of two opposite options, which were given */
	const char *fs_config_file;	/* --fs-config FILE, read into: */
	struct fsconfig fs_config;
};

/* The defaults, and what the environment gives (SOURCE_DATE_EPOCH). */
errcode_t optparse_defaults(struct populate_opts *p, struct optparse_aux *x,
			    const char **msg);
/* The option of a short letter: mke2fs's -L, -U, -b, -N and -F are
 * --label, --uuid, --block-size, --inodes and --force. */
int optparse_letter(int c);
/* The long option @name (@len bytes; exact, or the one it abbreviates),
 * or NULL. */
const struct optparse_name *optparse_long(const char *name, size_t len);
/* Option @id with @arg (NULL for one without). */
errcode_t optparse_option(struct populate_opts *p, struct optparse_aux *x,
			  int id, const char *arg, const char **msg);
/* --create's SIZE (given after it, or as the command line's last
 * operand). */
errcode_t optparse_create_size(struct populate_opts *p, struct optparse_aux *x,
			       const char *size, const char **msg);
/* After the options: -t given mke2fs's meaning (--target ext4). */
errcode_t optparse_check(struct populate_opts *p, struct optparse_aux *x,
			 const char **msg);
/* IMAGE and SOURCE (@layers, @nlayers of them, kept), then what follows
 * from them: the target, the files the options name read. */
errcode_t optparse_operands(struct populate_opts *p, struct optparse_aux *x,
			    const char *image, const char *const *layers,
			    size_t nlayers, const char **msg);
/* A usage error "BEFORE ARG AFTER" in @x's buffer. */
errcode_t optparse_usage(struct optparse_aux *x, const char **msg,
			 const char *before, const char *arg,
			 const char *after);
void optparse_free(struct populate_opts *p, struct optparse_aux *x);

#endif
