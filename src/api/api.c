// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liborlov's entry points (include/orlov/orlov.h).  The options go member
 * by member through the command line's own parser (populate/optparse.c),
 * without getopt: the same defaults, the same checks of what goes
 * together and the same refusals, so that a call and a run with the same
 * options make the same image, and an option added to orlov-populate
 * reaches callers through orlov_options.args before it has a member
 * here.  A call keeps its parse in its own memory: calls run at once.
 */
#include "config.h"

#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "orlov/orlov.h"
#include "populate/optparse.h"
#include "populate/populate.h"
#include "image/mkfs.h"
#include "lib/orlov_err.h"

#define API_EXPORT __attribute__((visibility("default")))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define USAGE(m) (*msg = (m), ORLOV_ERR_USAGE)

/* The string members and the option each one is. */
static const struct {
	size_t off;
	int id;
} string_opts[] = {
	{ offsetof(struct orlov_options, target), OPT_TARGET },
	{ offsetof(struct orlov_options, create), OPT_CREATE },
	{ offsetof(struct orlov_options, fs_type), OPT_FS_TYPE },
	{ offsetof(struct orlov_options, block_size), OPT_BLOCK_SIZE },
	{ offsetof(struct orlov_options, inodes), OPT_INODES },
	{ offsetof(struct orlov_options, mkfs_options), OPT_MKFS_OPTIONS },
	{ offsetof(struct orlov_options, label), OPT_LABEL },
	{ offsetof(struct orlov_options, uuid), OPT_UUID },
	{ offsetof(struct orlov_options, partition), OPT_PARTITION },
	{ offsetof(struct orlov_options, offset), OPT_OFFSET },
	{ offsetof(struct orlov_options, kernel), OPT_KERNEL },
	{ offsetof(struct orlov_options, driver), OPT_DRIVER },
	{ offsetof(struct orlov_options, policy), OPT_POLICY },
	{ offsetof(struct orlov_options, topdir), OPT_TOPDIR },
	{ offsetof(struct orlov_options, seed), OPT_SEED },
	{ offsetof(struct orlov_options, cpus), OPT_CPUS },
	{ offsetof(struct orlov_options, block_colour), OPT_COLOUR },
	{ offsetof(struct orlov_options, rotational), OPT_ROTATIONAL },
	{ offsetof(struct orlov_options, uid_map), OPT_UID_MAP },
	{ offsetof(struct orlov_options, gid_map), OPT_GID_MAP },
	{ offsetof(struct orlov_options, root_owner), OPT_ROOT_OWNER },
	{ offsetof(struct orlov_options, devtable), OPT_DEVTABLE },
	{ offsetof(struct orlov_options, file_contexts), OPT_FILE_CONTEXTS },
	{ offsetof(struct orlov_options, undo), OPT_UNDO },
	{ offsetof(struct orlov_options, trace), OPT_TRACE },
};

static const struct {
	unsigned int flag;
	int id;
} flag_opts[] = {
	{ ORLOV_NO_XATTRS, OPT_NO_XATTRS },
	{ ORLOV_NO_FSCK, OPT_NO_FSCK },
	{ ORLOV_ATOMIC, OPT_ATOMIC },
	{ ORLOV_IN_PLACE, OPT_IN_PLACE },
	{ ORLOV_FORCE, OPT_FORCE },
	{ ORLOV_MERGE, OPT_MERGE },
	{ ORLOV_ROOT_ATTRS, OPT_ROOT_ATTRS },
	{ ORLOV_DRY_RUN, OPT_DRY_RUN },
	{ ORLOV_ALL_ROOT, OPT_ALL_ROOT },
	{ ORLOV_SQUASH_PERMS, OPT_SQUASH_PERMS },
	{ ORLOV_DELALLOC, OPT_DELALLOC },
	{ ORLOV_NO_DELALLOC, OPT_NO_DELALLOC },
};

/* One call's options: the engine's, what their parse keeps, and SOURCE
 * as the one layer. */
struct call {
	struct populate_opts p;
	struct optparse_aux x;
	const char *layers[1];
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

/* Option @id with @arg, from a member or a word of args. */
static errcode_t call_option(struct call *c, int id, const char *arg,
			     const char **msg)
{
	if (id == OPT_HELP || id == OPT_VERSION)
		return USAGE("--help and --version print: not through the library");
	/* SIZE as the last operand is the command line's: here it is
	 * --create's own */
	if (id == OPT_CREATE && !mkfs_size_word(arg))
		return USAGE("--create needs SIZE: --create SIZE, or SIZE after IMAGE and SOURCE");
	return optparse_option(&c->p, &c->x, id, arg, msg);
}

/* A word of args that starts with "--": NAME, NAME=VALUE or NAME and
 * VALUE in the next word (*i moved past it). */
static errcode_t long_word(struct call *c, const char *const *w, size_t *i,
			   const char **msg)
{
	const char *s = w[*i] + 2, *eq = strchr(s, '=');
	const struct optparse_name *n;

	n = optparse_long(s, eq ? (size_t)(eq - s) : strlen(s));
	if (!n || (eq && !n->arg))
		return optparse_usage(&c->x, msg, "unknown option ", w[*i], "");
	if (eq)
		return call_option(c, n->id, eq + 1, msg);
	if (n->arg != 1)
		return call_option(c, n->id, NULL, msg);
	if (!w[*i + 1])
		return optparse_usage(&c->x, msg, "", w[*i], " needs an argument");
	*i += 1;
	return call_option(c, n->id, w[*i], msg);
}

/* A word of args that starts with one '-': short options, "-qv", the
 * last one's argument the rest of the word or the next word. */
static errcode_t short_word(struct call *c, const char *const *w, size_t *i,
			    const char **msg)
{
	const char *s = w[*i], *o;
	char opt[3] = { '-', 0, 0 };
	errcode_t err = 0;
	size_t j;

	for (j = 1; s[j] && !err; j++) {
		opt[1] = s[j];
		o = s[j] == ':' ? NULL : strchr(OPTPARSE_SHORT, s[j]);
		if (!o)
			return optparse_usage(&c->x, msg, "unknown option ", opt, "");
		if (o[1] != ':') {
			err = call_option(c, optparse_letter(s[j]), NULL, msg);
			continue;
		}
		if (s[j + 1])
			return call_option(c, optparse_letter(s[j]), s + j + 1, msg);
		if (!w[*i + 1])
			return optparse_usage(&c->x, msg, "", opt, " needs an argument");
		*i += 1;
		return call_option(c, optparse_letter(s[j]), w[*i], msg);
	}
	return err;
}

/* orlov_options.args: options only, read in place (no getopt, whose
 * state is the process's). */
static errcode_t parse_words(struct call *c, const char *const *w,
			     const char **msg)
{
	errcode_t err = 0;
	size_t i;

	for (i = 0; w[i] && !err; i++) {
		if (w[i][0] != '-' || !w[i][1] || !strcmp(w[i], "--"))
			return optparse_usage(&c->x, msg, "args: ", w[i],
					      ": not an option (IMAGE and SOURCE are orlov_populate()'s arguments)");
		if (w[i][1] == '-')
			err = long_word(c, w, &i, msg);
		else
			err = short_word(c, w, &i, msg);
	}
	return err;
}

/* SOURCE_DATE_EPOCH from the options rather than the environment: the
 * limits optparse_defaults() puts on the environment's. */
static errcode_t set_epoch(struct populate_opts *p,
			   const struct orlov_options *o, const char **msg)
{
	if (!o->has_source_date_epoch)
		return 0;
	if (o->source_date_epoch > UINT32_MAX)
		return USAGE("source_date_epoch: at most 4294967295");
#ifndef EXT2_FLAG2_USE_FAKE_TIME
	if (o->source_date_epoch == 0)
		return USAGE("source_date_epoch 0: this libext2fs would write the clock into the superblock; use 1");
#endif
	p->meta.has_epoch = p->mkfs.has_epoch = 1;
	p->meta.epoch = p->mkfs.epoch = (uint32_t)o->source_date_epoch;
	return 0;
}

/* The members, in the order of the command line the library once built
 * from them: flags, strings, args. */
static errcode_t parse_members(const struct orlov_options *o, struct call *c,
			       const char **msg)
{
	errcode_t err = 0;
	size_t i;

	for (i = 0; i < NELEM(flag_opts) && !err; i++)
		if (o->flags & flag_opts[i].flag)
			err = call_option(c, flag_opts[i].id, NULL, msg);
	for (i = 0; i < NELEM(string_opts) && !err; i++) {
		const char *v = *(const char *const *)
				((const char *)o + string_opts[i].off);

		if (v)
			err = call_option(c, string_opts[i].id, v, msg);
	}
	if (!err && o->args)
		err = parse_words(c, o->args, msg);
	return err;
}

/* The options parsed into @c; *msg the reason of a usage error (it may
 * be in @c's buffer: copied before @c goes). */
static errcode_t parse(const char *image, const char *source,
		       const struct orlov_options *o, struct call *c,
		       const char **msg)
{
	errcode_t err = optparse_defaults(&c->p, &c->x, msg);

	if (!err && (!image || !source))
		err = USAGE("IMAGE and SOURCE are needed");
	if (!err)
		err = parse_members(o, c, msg);
	if (!err)
		err = populate_resolve(&c->p, msg);
	if (!err)
		err = optparse_check(&c->p, &c->x, msg);
	c->layers[0] = source;
	if (!err)
		err = optparse_operands(&c->p, &c->x, image, c->layers, 1, msg);
	if (err)
		return err;
	/* -v, -q and --json given or not, the library prints nothing */
	c->p.verbosity = -1;
	c->p.json = 0;
	return set_epoch(&c->p, o, msg);
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

static errcode_t run_populate(struct call *c, struct populate_result *r)
{
	errcode_t err;

	if (!c->p.undo)
		return populate(&c->p, r);
	pthread_mutex_lock(&undo_lock);
	err = populate(&c->p, r);
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
	struct call *c;
	const char *msg = NULL;
	char *usage = NULL;
	errcode_t err;

	error_tables();
	options_copy(&o, opts);
	memset(&r, 0, sizeof(r));
	c = malloc(sizeof(*c));
	if (!c) {
		err = errctx_set(&r.ec, ENOMEM, "populating", image);
	} else {
		err = parse(image, source, &o, c, &msg);
		if (err == ORLOV_ERR_USAGE) {
			usage = strdup(msg ? msg : "invalid options");
		} else if (err) {
			/* a file an option names: what the command line says */
			errctx_set(&r.ec, err, msg ? msg : "parsing the options",
				   NULL);
		} else {
			err = run_populate(c, &r);
			if (err && !r.ec.what)
				errctx_set(&r.ec, err, "populating", image);
		}
		optparse_free(&c->p, &c->x);
		free(c);
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
