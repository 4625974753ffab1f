// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liborlov's entry points (include/orlov/orlov.h).  The options become the
 * words of a command line and go through the command line's own parser:
 * the same defaults, the same checks of what goes together and the same
 * refusals, so that a call and a run with the same options make the same
 * image, and an option added to orlov-populate reaches callers through
 * orlov_options.args before it has a member here.
 */
#include "config.h"

#include <stdint.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "orlov/orlov.h"
#include "cli/options.h"
#include "populate/populate.h"
#include "lib/orlov_err.h"

#define API_EXPORT __attribute__((visibility("default")))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The string members and the option each one is. */
static const struct {
	size_t off;
	const char *name;
} string_opts[] = {
	{ offsetof(struct orlov_options, target), "--target" },
	{ offsetof(struct orlov_options, create), "--create" },
	{ offsetof(struct orlov_options, fs_type), "--fs-type" },
	{ offsetof(struct orlov_options, block_size), "--block-size" },
	{ offsetof(struct orlov_options, inodes), "--inodes" },
	{ offsetof(struct orlov_options, mkfs_options), "--mkfs-options" },
	{ offsetof(struct orlov_options, label), "--label" },
	{ offsetof(struct orlov_options, uuid), "--uuid" },
	{ offsetof(struct orlov_options, partition), "--partition" },
	{ offsetof(struct orlov_options, offset), "--offset" },
	{ offsetof(struct orlov_options, kernel), "--kernel" },
	{ offsetof(struct orlov_options, driver), "--driver" },
	{ offsetof(struct orlov_options, policy), "--policy" },
	{ offsetof(struct orlov_options, topdir), "--topdir" },
	{ offsetof(struct orlov_options, seed), "--seed" },
	{ offsetof(struct orlov_options, cpus), "--cpus" },
	{ offsetof(struct orlov_options, block_colour), "--block-colour" },
	{ offsetof(struct orlov_options, rotational), "--rotational" },
	{ offsetof(struct orlov_options, uid_map), "--uid-map" },
	{ offsetof(struct orlov_options, gid_map), "--gid-map" },
	{ offsetof(struct orlov_options, root_owner), "--root-owner" },
	{ offsetof(struct orlov_options, devtable), "--devtable" },
	{ offsetof(struct orlov_options, file_contexts), "--file-contexts" },
	{ offsetof(struct orlov_options, undo), "--undo" },
	{ offsetof(struct orlov_options, trace), "--trace" },
};

static const struct {
	unsigned int flag;
	const char *name;
} flag_opts[] = {
	{ ORLOV_NO_XATTRS, "--no-xattrs" },
	{ ORLOV_NO_FSCK, "--no-fsck" },
	{ ORLOV_ATOMIC, "--atomic" },
	{ ORLOV_IN_PLACE, "--in-place" },
	{ ORLOV_FORCE, "--force" },
	{ ORLOV_MERGE, "--merge" },
	{ ORLOV_ROOT_ATTRS, "--root-attrs" },
	{ ORLOV_DRY_RUN, "--dry-run" },
	{ ORLOV_ALL_ROOT, "--all-root" },
	{ ORLOV_SQUASH_PERMS, "--squash-perms" },
	{ ORLOV_DELALLOC, "--delalloc" },
	{ ORLOV_NO_DELALLOC, "--no-delalloc" },
};

/* The caller's options, as large as its header had them, over zeroes. */
static void options_copy(struct orlov_options *o,
			 const struct orlov_options *given)
{
	memset(o, 0, sizeof(*o));
	if (given)
		memcpy(o, given, given->size < sizeof(*o) ? given->size :
							   sizeof(*o));
	o->size = sizeof(*o);
}

/* "orlov-populate [OPTIONS] -- IMAGE SOURCE" as argv (the strings are
 * the caller's); returns the count. */
static int build_argv(const struct orlov_options *o, const char *image,
		      const char *source, char **argv)
{
	int n = 0;
	size_t i;

	argv[n++] = (char *)"orlov-populate";
	for (i = 0; i < NELEM(flag_opts); i++)
		if (o->flags & flag_opts[i].flag)
			argv[n++] = (char *)flag_opts[i].name;
	for (i = 0; i < NELEM(string_opts); i++) {
		const char *v = *(const char *const *)
				((const char *)o + string_opts[i].off);

		if (v) {
			argv[n++] = (char *)string_opts[i].name;
			argv[n++] = (char *)v;
		}
	}
	for (i = 0; o->args && o->args[i]; i++)
		argv[n++] = (char *)o->args[i];
	/* IMAGE and SOURCE after "--": a name that starts with '-' is one */
	argv[n++] = (char *)"--";
	argv[n++] = (char *)image;
	argv[n++] = (char *)source;
	argv[n] = NULL;
	return n;
}

static size_t argv_max(const struct orlov_options *o)
{
	size_t n = 1 + NELEM(flag_opts) + 2 * NELEM(string_opts) + 4, i;

	for (i = 0; o->args && o->args[i]; i++)
		n++;
	return n;
}

/* SOURCE_DATE_EPOCH from the options rather than the environment: the
 * limits parse_defaults() puts on the environment's. */
static errcode_t set_epoch(struct populate_opts *p,
			   const struct orlov_options *o, const char **msg)
{
	if (!o->has_source_date_epoch)
		return 0;
	if (o->source_date_epoch > UINT32_MAX) {
		*msg = "source_date_epoch: at most 4294967295";
		return ORLOV_ERR_USAGE;
	}
#ifndef EXT2_FLAG2_USE_FAKE_TIME
	if (o->source_date_epoch == 0) {
		*msg = "source_date_epoch 0: this libext2fs would write the clock into the superblock; use 1";
		return ORLOV_ERR_USAGE;
	}
#endif
	p->meta.has_epoch = p->mkfs.has_epoch = 1;
	p->meta.epoch = p->mkfs.epoch = (uint32_t)o->source_date_epoch;
	return 0;
}

/*
 * getopt keeps its place in process globals (optind, optarg and glibc's
 * own pointer into a cluster of short options): two calls parsing at
 * once read each other's words ("No such file or directory while reading
 * device table 64M").  One parse at a time, the globals saved, used and
 * given back under the lock.  A static mutex, the one kind of mutable
 * global the project allows: getopt's state is the process's, not a
 * call's.  A caller's own getopt in another thread at the same moment is
 * not covered (orlov.h says so).
 */
static pthread_mutex_t getopt_lock = PTHREAD_MUTEX_INITIALIZER;

/* options_parse() on @argv, getopt's state given back as the caller had
 * it: glibc also keeps a pointer into a cluster of short options ("-qx")
 * it stopped in, into @argv, which the caller frees; optind 0 makes the
 * next parse start afresh. */
static errcode_t parse_argv(int argc, char **argv, struct options *cl,
			    const char **msg)
{
	static char *reset_argv[] = { (char *)"orlov", NULL };
	int saved_optind, saved_opterr, saved_optopt;
	char *saved_optarg;
	errcode_t err;

	pthread_mutex_lock(&getopt_lock);
	saved_optind = optind;
	saved_opterr = opterr;
	saved_optopt = optopt;
	saved_optarg = optarg;
	err = options_parse(argc, argv, cl, msg);
	optind = 0;
	opterr = 0;
	(void)getopt(1, reset_argv, "");
	optind = saved_optind;
	opterr = saved_opterr;
	optopt = saved_optopt;
	optarg = saved_optarg;
	pthread_mutex_unlock(&getopt_lock);
	return err;
}

/* The options parsed into @cl; *msg the reason of a usage error (it may
 * be in @cl's buffer: copied before @cl goes). */
static errcode_t parse(const char *image, const char *source,
		       const struct orlov_options *o, struct options *cl,
		       const char **msg)
{
	char **argv;
	errcode_t err;

	memset(cl, 0, sizeof(*cl));
	if (!image || !source) {
		*msg = "IMAGE and SOURCE are needed";
		return ORLOV_ERR_USAGE;
	}
	argv = calloc(argv_max(o), sizeof(*argv));
	if (!argv)
		return ENOMEM;
	err = parse_argv(build_argv(o, image, source, argv), argv, cl, msg);
	free(argv);
	if (err)
		return err;
	if (cl->help || cl->version) {
		*msg = "--help and --version print: not through the library";
		return ORLOV_ERR_USAGE;
	}
	/* -v, -q and --json given or not, the library prints nothing */
	cl->p.verbosity = -1;
	cl->p.json = 0;
	/* the test hooks of the command line (ORLOV_FAULT,
	 * ORLOV_STAGE_BUDGET) are not read from a caller's environment */
	cl->p.fault = NULL;
	cl->p.stage_budget = 0;
	return set_epoch(&cl->p, o, msg);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The engine's result in the caller's, as far as its size goes. */
static void result_out(struct orlov_result *out, struct populate_result *r,
		       const char *usage, errcode_t err)
{
	struct orlov_result full;
	size_t n;

	memset(&full, 0, sizeof(full));
	full.size = out->size;
	if (err) {
		full.what = dup_or_null(usage ? "parsing the options" :
					r->ec.what ? r->ec.what : "populating");
		full.path = dup_or_null(r->ec.where);
		full.usage = dup_or_null(usage);
		full.detail = dup_or_null(r->ec.detail);
	} else {
		full.entries = r->entries;
		full.bytes = r->bytes;
		full.inodes_used = r->inodes_used;
		full.blocks_used = r->blocks_used;
		full.free_inodes = r->free_inodes;
		full.free_blocks = r->free_blocks;
		full.block_size = r->block_size;
		full.groups_used = r->groups_used;
		full.seconds = r->seconds;
		full.in_place = dup_or_null(r->in_place_why);
		full.racy_at = dup_or_null(r->unwritten_at);
		full.mount_unknown = r->mount_unknown;
		full.stale_removed = r->stale_removed;
	}
	n = out->size < sizeof(full) ? out->size : sizeof(full);
	/* a string that does not fit in the caller's structure is not kept */
	if (n < offsetof(struct orlov_result, in_place) + sizeof(char *))
		free(full.in_place), full.in_place = NULL;
	if (n < offsetof(struct orlov_result, racy_at) + sizeof(char *))
		free(full.racy_at), full.racy_at = NULL;
	if (n < offsetof(struct orlov_result, detail) + sizeof(char *))
		free(full.detail), full.detail = NULL;
	if (n < offsetof(struct orlov_result, usage) + sizeof(char *)) {
		free(full.what), full.what = NULL;
		free(full.path), full.path = NULL;
		free(full.usage), full.usage = NULL;
	}
	memcpy(out, &full, n);
}

static void add_error_tables(void)
{
	initialize_orlv_error_table();
	initialize_ext2_error_table();
}

/* com_err's list of tables is a process global that the initialize_*
 * functions append to without a lock: two first calls at once could
 * both append, or lose one.  Added once, whichever call comes first
 * (pthread_once: the once flag is the documented kind of global). */
static void error_tables(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, add_error_tables);
}

/*
 * --undo: libext2fs's undo I/O manager takes its backing manager and
 * file name from process globals (set_undo_io_backing_manager(),
 * set_undo_io_backup_file()), keeps the length of a short read in one
 * and registers its exit handler in an unlocked list.  Calls with --undo
 * run one after another, the whole run under the lock (the globals are
 * read from the open to the close); calls without it never touch them.
 */
static pthread_mutex_t undo_lock = PTHREAD_MUTEX_INITIALIZER;

static errcode_t run_populate(struct options *cl, struct populate_result *r)
{
	errcode_t err;

	if (!cl->p.undo)
		return populate(&cl->p, r);
	pthread_mutex_lock(&undo_lock);
	err = populate(&cl->p, r);
	pthread_mutex_unlock(&undo_lock);
	return err;
}

API_EXPORT void orlov_options_init(struct orlov_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

API_EXPORT long orlov_populate(const char *image, const char *source,
			       const struct orlov_options *opts,
			       struct orlov_result *res)
{
	struct orlov_options o;
	struct populate_result r;
	struct options *cl;
	const char *msg = NULL;
	char *usage = NULL;
	errcode_t err;

	error_tables();
	options_copy(&o, opts);
	memset(&r, 0, sizeof(r));
	cl = malloc(sizeof(*cl));
	if (!cl) {
		err = errctx_set(&r.ec, ENOMEM, "populating", image);
	} else {
		err = parse(image, source, &o, cl, &msg);
		if (err == ORLOV_ERR_USAGE) {
			usage = strdup(msg ? msg : "invalid options");
		} else if (err) {
			/* a file an option names: what the command line says */
			errctx_set(&r.ec, err, msg ? msg : "parsing the options",
				   NULL);
		} else {
			err = run_populate(cl, &r);
			if (err && !r.ec.what)
				errctx_set(&r.ec, err, "populating", image);
		}
		options_free(cl);
		free(cl);
	}
	if (res && res->size >= sizeof(res->size))
		result_out(res, &r, usage, err);
	populate_result_free(&r);
	free(usage);
	return (long)err;
}

API_EXPORT const char *orlov_strerror(long err)
{
	error_tables();
	return error_message((errcode_t)err);
}

API_EXPORT void orlov_result_free(struct orlov_result *res)
{
	size_t n;

	if (!res)
		return;
	n = res->size;
	if (n >= offsetof(struct orlov_result, usage) + sizeof(char *)) {
		free(res->what);
		free(res->path);
		free(res->usage);
		res->what = res->path = res->usage = NULL;
	}
	if (n >= offsetof(struct orlov_result, in_place) + sizeof(char *)) {
		free(res->in_place);
		res->in_place = NULL;
	}
	if (n >= offsetof(struct orlov_result, racy_at) + sizeof(char *)) {
		free(res->racy_at);
		res->racy_at = NULL;
	}
	if (n >= offsetof(struct orlov_result, detail) + sizeof(char *)) {
		free(res->detail);
		res->detail = NULL;
	}
}

API_EXPORT const char *orlov_version(void)
{
	return PACKAGE_VERSION;
}
