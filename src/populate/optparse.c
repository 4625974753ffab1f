// SPDX-License-Identifier: GPL-2.0-or-later
/* The options' words into struct populate_opts, for the command line and
 * the library alike (optparse.h). */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "populate/optparse.h"
#include "source/meta.h"
#include "source/selabel.h"
#include "model/kver.h"
#include "model/ext4/mballoc.h"
#include "image/naming.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const struct optparse_name optparse_names[] = {
	{ "target", 1, OPT_TARGET },
	{ "policy", 1, OPT_POLICY },
	{ "topdir", 1, OPT_TOPDIR },
	{ "seed", 1, OPT_SEED },
	{ "block-colour", 1, OPT_COLOUR },
	{ "cpus", 1, OPT_CPUS },
	{ "possible-cpus", 1, OPT_POSSIBLE_CPUS },
	{ "jobs", 1, OPT_JOBS },
	{ "kernel", 1, OPT_KERNEL },
	{ "mb-optimize-scan", 1, OPT_MB_OPTIMIZE_SCAN },
	{ "driver", 1, OPT_DRIVER },
	{ "rotational", 1, OPT_ROTATIONAL },
	{ "delalloc", 0, OPT_DELALLOC },
	{ "no-delalloc", 0, OPT_NO_DELALLOC },
	{ "trace", 1, OPT_TRACE },
	{ "undo", 1, OPT_UNDO },
	{ "no-xattrs", 0, OPT_NO_XATTRS },
	{ "no-fsck", 0, OPT_NO_FSCK },
	{ "atomic", 0, OPT_ATOMIC },
	{ "in-place", 0, OPT_IN_PLACE },
	{ "create", 1, OPT_CREATE },
	{ "force", 0, OPT_FORCE },
	{ "file-contexts", 1, OPT_FILE_CONTEXTS },
	{ "squash-perms", 0, OPT_SQUASH_PERMS },
	{ "fs-config", 1, OPT_FS_CONFIG },
	{ "label", 1, OPT_LABEL },
	{ "uuid", 1, OPT_UUID },
	{ "partition", 1, OPT_PARTITION },
	{ "offset", 1, OPT_OFFSET },
	{ "fs-type", 1, OPT_FS_TYPE },
	{ "block-size", 1, OPT_BLOCK_SIZE },
	{ "inodes", 1, OPT_INODES },
	{ "mkfs-options", 1, OPT_MKFS_OPTIONS },
	{ "all-root", 0, OPT_ALL_ROOT },
	{ "uid-map", 1, OPT_UID_MAP },
	{ "gid-map", 1, OPT_GID_MAP },
	{ "root-owner", 1, OPT_ROOT_OWNER },
	{ "devtable", 1, OPT_DEVTABLE },
	{ "dry-run", 0, OPT_DRY_RUN },
	{ "merge", 0, OPT_MERGE },
	{ "casefold", 1, OPT_CASEFOLD },
	{ "root-attrs", 0, OPT_ROOT_ATTRS },
	{ "json", 0, OPT_JSON },
	{ "whiteouts", 0, OPT_WHITEOUTS },
	{ "verbose", 0, OPT_VERBOSE },
	{ "quiet", 0, OPT_QUIET },
	{ "help", 2, OPT_HELP },
	{ "version", 0, OPT_VERSION },
	{ NULL, 0, 0 },
};

/* the command line sizes its getopt table by it */
_Static_assert(NELEM(optparse_names) == OPTPARSE_NNAMES + 1,
	       "OPTPARSE_NNAMES is the count of optparse_names");

const struct optparse_name *optparse_long(const char *name, size_t len)
{
	const struct optparse_name *n, *found = NULL;

	for (n = optparse_names; n->name; n++) {
		if (strncmp(n->name, name, len))
			continue;
		if (!n->name[len])
			return n;
		/* an abbreviation, as getopt_long takes one: of one option */
		if (found && found->id != n->id)
			return NULL;
		found = n;
	}
	return found;
}

int optparse_letter(int c)
{
	switch (c) {
	case 'L': return OPT_LABEL;
	case 'U': return OPT_UUID;
	case 'b': return OPT_BLOCK_SIZE;
	case 'N': return OPT_INODES;
	case 'F': return OPT_FORCE;
	default: return c;
	}
}

/* Index of @arg in the NULL-terminated @names, or -1. */
static int keyword(const char *arg, const char *const *names)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

static const char *const policy_names[] = { "orlov", "oldalloc", NULL };
static const char *const topdir_names[] = { "hash", "random", NULL };
static const char *const yes_no[] = { "yes", "no", NULL };
static const char *const driver_names[] = { "ext2", "ext4", NULL };

/* After "auto": nothing, "+N%" or "+SIZE" with K, M or G (binary). */
static int parse_margin(const char *s, struct populate_opts *o)
{
	size_t n = strlen(s);
	char buf[24];
	uint64_t v, mult = 1;

	o->auto_size = 1;
	if (!n)
		return 0;
	if (s[0] != '+' || n < 2 || n - 1 >= sizeof(buf))
		return -1;
	memcpy(buf, s + 1, n - 1);
	buf[n - 1] = 0;
	n--;
	if (buf[n - 1] == '%') {
		buf[n - 1] = 0;
		if (parse_u64(buf, 1000, &v))
			return -1;
		o->margin_pct = (unsigned int)v;
		return 0;
	}
	switch (buf[n - 1]) {
	case 'K': case 'k': mult = 1ULL << 10; break;
	case 'M': case 'm': mult = 1ULL << 20; break;
	case 'G': case 'g': mult = 1ULL << 30; break;
	default: mult = 0; break;
	}
	if (mult)
		buf[n - 1] = 0;
	else
		mult = 1;
	if (parse_u64(buf, UINT64_MAX >> 31, &v))
		return -1;
	o->margin_bytes = v * mult;
	return 0;
}

errcode_t optparse_usage(struct optparse_aux *x, const char **msg,
			 const char *before, const char *arg,
			 const char *after)
{
	snprintf(x->msgbuf, sizeof(x->msgbuf), "%s%s%s", before, arg, after);
	*msg = x->msgbuf;
	return ORLOV_ERR_USAGE;
}

/* A usage error with a fixed message. */
#define USAGE(m) (*msg = (m), ORLOV_ERR_USAGE)
#define P(field) offsetof(struct populate_opts, field)

/* The options that set a field to a constant (an int). */
static const struct { int id; size_t off; int val; } set_opts[] = {
	{ OPT_DELALLOC, P(delalloc), 1 }, { OPT_NO_DELALLOC, P(delalloc), 0 },
	{ OPT_NO_XATTRS, P(xattrs), 0 },
	{ OPT_NO_FSCK, P(fsck), 0 }, { OPT_ATOMIC, P(atomic), 1 },
	{ OPT_IN_PLACE, P(in_place), 1 }, { OPT_FORCE, P(force), 1 },
	{ OPT_DRY_RUN, P(dry_run), 1 }, { OPT_MERGE, P(merge), 1 },
	{ OPT_ROOT_ATTRS, P(root_attrs), 1 }, { OPT_JSON, P(json), 1 },
	{ OPT_ALL_ROOT, P(meta.all_root), 1 },
	{ OPT_SQUASH_PERMS, P(meta.squash_perms), 1 },
	{ OPT_WHITEOUTS, P(whiteouts), 1 },
	{ OPT_VERBOSE, P(verbosity), 1 }, { OPT_QUIET, P(verbosity), -1 },
};

/* The options whose argument is kept as it is. */
static const struct { int id; size_t off; } arg_opts[] = {
	{ OPT_TARGET, P(target) }, { OPT_TRACE, P(trace) },
	{ OPT_UNDO, P(undo) }, { OPT_MKFS_OPTIONS, P(mkfs.extra) },
	{ OPT_DEVTABLE, P(devtable) },
	{ OPT_FILE_CONTEXTS, P(meta.file_contexts) },
	{ OPT_PARTITION, P(where.partition) },
};

/* The options that take one of a few words: an enum, their index. */
static const struct {
	int id;
	size_t off;
	const char *const *names;
	const char *msg;
} word_opts[] = {
	{ OPT_POLICY, P(policy), policy_names, "--policy takes orlov or oldalloc" },
	{ OPT_TOPDIR, P(topdir), topdir_names, "--topdir takes hash or random" },
	{ OPT_DRIVER, P(driver), driver_names, "--driver takes ext2 or ext4" },
	{ OPT_ROTATIONAL, P(rotational), yes_no, "--rotational takes yes or no" },
};

/* Option @c from the tables: 1 when it is one of theirs. */
static int table_option(struct populate_opts *p, int c, const char *arg,
			errcode_t *err, const char **msg)
{
	char *base = (char *)p;
	size_t i;
	int k;

	*err = 0;
	/* given: the image's own mount no longer decides (run.c) */
	p->delalloc_set |= c == OPT_DELALLOC || c == OPT_NO_DELALLOC;
	p->driver_set |= c == OPT_DRIVER;
	for (i = 0; i < NELEM(set_opts); i++)
		if (set_opts[i].id == c)
			return *(int *)(base + set_opts[i].off) = set_opts[i].val, 1;
	for (i = 0; i < NELEM(arg_opts); i++)
		if (arg_opts[i].id == c)
			return *(const char **)(base + arg_opts[i].off) = arg, 1;
	for (i = 0; i < NELEM(word_opts); i++) {
		if (word_opts[i].id != c)
			continue;
		if ((k = keyword(arg, word_opts[i].names)) < 0)
			*err = USAGE(word_opts[i].msg);
		else	/* the enums: unsigned, values from 0 */
			*(unsigned int *)(base + word_opts[i].off) = (unsigned int)k;
		return 1;
	}
	return 0;
}

errcode_t optparse_create_size(struct populate_opts *p, struct optparse_aux *x,
			       const char *size, const char **msg)
{
	p->create = 1;
	p->mkfs.size = size;
	if (!strncmp(size, "auto", 4) && parse_margin(size + 4, p))
		return optparse_usage(x, msg, "--create ", size, ": give auto, auto+N% or auto+SIZE (K, M or G)");
	return 0;
}

/* The numbers: NR_CPUS is at most 8192 (MAXSMP). */
static errcode_t number_option(struct populate_opts *p, int c,
			       const char *arg, const char **msg)
{
	uint64_t v;

	switch (c) {
	case OPT_SEED:
		if (parse_u64(arg, UINT64_MAX, &p->seed))
			return USAGE("--seed takes a number");
		break;
	case OPT_COLOUR:
		if (parse_u64(arg, 15, &v))
			return USAGE("--block-colour takes a number from 0 to 15");
		p->colour = (unsigned int)v;
		break;
	case OPT_CPUS:
		if (!strcmp(arg, "up"))
			p->cpus = 0;
		else if (parse_u64(arg, 8192, &v) || v == 0)
			return USAGE("--cpus takes up or a number from 1 to 8192");
		else
			p->cpus = (unsigned int)v;
		break;
	case OPT_POSSIBLE_CPUS:
		if (parse_u64(arg, 8192, &v) || v == 0)
			return USAGE("--possible-cpus takes a number from 1 to 8192");
		p->possible_cpus = (unsigned int)v;
		break;
	case OPT_JOBS:
		if (parse_u64(arg, 2, &v) || v == 0)
			return USAGE("--jobs takes 1 or 2");
		p->jobs = (int)v;
		break;
	case OPT_INODES:
		if (parse_u64(arg, UINT32_MAX, &v) || v == 0)
			return USAGE("--inodes takes a number");
		p->mkfs.inodes = arg;
		break;
	case OPT_OFFSET:
		if (parse_u64(arg, INT64_MAX, &p->where.offset))
			return USAGE("--offset takes a number of bytes");
		break;
	}
	return 0;
}

/* --casefold PATH: a directory of SOURCE, relative to it; kept as given
 * but for "./" in front and '/' at the end, as the walk names it. */
static errcode_t add_casefold(struct populate_opts *p, struct optparse_aux *x,
			      const char *arg, const char **msg)
{
	const char **v;

	while (arg[0] == '.' && arg[1] == '/')
		arg += 2;
	while (*arg == '/')
		arg++;
	if (!*arg || !strcmp(arg, ".") || arg[strlen(arg) - 1] == '/' ||
	    strstr(arg, "//") || strstr(arg, "/./") || !strcmp(arg, "..") ||
	    !strncmp(arg, "../", 3) || strstr(arg, "/../"))
		return optparse_usage(x, msg, "--casefold ", arg,
				      ": give a directory below SOURCE, as a path relative to it (a/b)");
	v = realloc(p->casefold, (p->ncasefold + 1) * sizeof(*v));
	if (!v)
		return ENOMEM;
	v[p->ncasefold++] = arg;
	p->casefold = v;
	return 0;
}

/* The options that take a checked argument. */
static errcode_t value_option(struct populate_opts *p, struct optparse_aux *x,
			      int c, const char *arg, const char **msg)
{
	switch (c) {
	case OPT_KERNEL:
		if (kver_parse(arg, &p->kver, &p->arm64))
			return optparse_usage(x, msg, "--kernel ", arg, ": give " KVER_ACCEPTED);
		break;
	case OPT_MB_OPTIMIZE_SCAN:
		p->mb_optimize_scan = !strcmp(arg, "yes") ? MB_OPTIMIZE_SCAN_ON :
				      !strcmp(arg, "no") ? MB_OPTIMIZE_SCAN_OFF : -1;
		if (p->mb_optimize_scan < 0)
			return USAGE("--mb-optimize-scan takes yes or no");
		break;
	case OPT_CREATE:
		return optparse_create_size(p, x, arg, msg);
	case OPT_FS_TYPE:
		if (strcmp(arg, "ext2") && strcmp(arg, "ext3") &&
		    strcmp(arg, "ext4"))
			return optparse_usage(x, msg, "--fs-type takes ext2, ext3 or ext4, not ", arg, "");
		p->mkfs.fs_type = arg;
		break;
	case OPT_BLOCK_SIZE:
		if (strcmp(arg, "1024") && strcmp(arg, "2048") &&
		    strcmp(arg, "4096"))
			return USAGE("--block-size takes 1024, 2048 or 4096");
		p->mkfs.block_size = arg;
		break;
	case OPT_CASEFOLD:
		return add_casefold(p, x, arg, msg);
	case OPT_UID_MAP:
	case OPT_GID_MAP:
		if (id_map_parse(c == OPT_UID_MAP ? &p->meta.uid : &p->meta.gid, arg))
			return optparse_usage(x, msg, "bad ID map ", arg, ": give FROM:TO or FROM:TO:COUNT, comma-separated");
		break;
	case OPT_LABEL:
		if (strlen(arg) > NAMING_LABEL_MAX)
			return optparse_usage(x, msg, "--label ", arg, ": at most 16 bytes");
		p->mkfs.label = arg;
		break;
	case OPT_UUID:
		if (!naming_uuid_valid(arg))
			return optparse_usage(x, msg, "--uuid ", arg, ": give a UUID (8-4-4-4-12 hex digits), random, time or clear");
		p->mkfs.uuid = arg;
		break;
	case OPT_FS_CONFIG:
		x->fs_config_file = arg;
		break;
	case OPT_ROOT_OWNER:
		if (meta_owner_parse(arg, &p->root_uid, &p->root_gid))
			return USAGE("--root-owner takes UID:GID (numbers)");
		p->root_owner = 1;
		break;
	default:
		return number_option(p, c, arg, msg);
	}
	return 0;
}

/* On and off: given both, which is meant is a guess (--atomic and
 * --in-place likewise, conflict.c). */
static const struct { int on, off; const char *msg; } opposites[] = {
	{ OPT_DELALLOC, OPT_NO_DELALLOC, "--delalloc and --no-delalloc contradict each other: give one" },
	{ OPT_VERBOSE, OPT_QUIET, "--verbose and --quiet contradict each other: give one" },
};

errcode_t optparse_option(struct populate_opts *p, struct optparse_aux *x,
			  int id, const char *arg, const char **msg)
{
	errcode_t err;
	size_t i;

	for (i = 0; i < NELEM(opposites); i++) {
		unsigned int bit = 1u << (2 * i);

		if (id == opposites[i].on)
			x->given |= bit;
		if (id == opposites[i].off)
			x->given |= bit << 1;
		if ((x->given & (3u << (2 * i))) == (3u << (2 * i)))
			return USAGE(opposites[i].msg);
	}
	if (table_option(p, id, arg, &err, msg))
		return err;
	return value_option(p, x, id, arg, msg);
}

errcode_t optparse_defaults(struct populate_opts *p, struct optparse_aux *x,
			    const char **msg)
{
	memset(p, 0, sizeof(*p));
	memset(x, 0, sizeof(*x));
	p->target = "/";
	if (meta_epoch_from_env(&p->meta))
		return USAGE("SOURCE_DATE_EPOCH takes seconds since 1970, at most 4294967295");
#ifndef EXT2_FLAG2_USE_FAKE_TIME
	/* libext2fs before 1.47.1 takes a time of 0 for "use the clock" */
	if (p->meta.has_epoch && p->meta.epoch == 0)
		return USAGE("SOURCE_DATE_EPOCH=0: this libext2fs would write the clock into the superblock; use 1");
#endif
	p->xattrs = 1;
	p->fsck = 1;
	p->jobs = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	return 0;
}

errcode_t optparse_check(struct populate_opts *p, struct optparse_aux *x,
			 const char **msg)
{
	if (!strcmp(p->target, "ext2") || !strcmp(p->target, "ext3") ||
	    !strcmp(p->target, "ext4"))
		return optparse_usage(x, msg, "-t ", p->target, ": -t is --target, a directory in IMAGE; the filesystem type is IMAGE's own (or --fs-type with --create)");
	return 0;
}

/* --target checked, and "//", "/a//b/" made the directory they name, as
 * a shell takes them. */
static errcode_t parse_target(struct populate_opts *p, struct optparse_aux *x,
			      const char **msg)
{
	const char *s;
	char *q = x->target_buf;

	if (p->target[0] != '/')
		return USAGE("--target must be an absolute path inside the image");
	if (strlen(p->target) >= sizeof(x->target_buf))
		return USAGE("--target is too long");
	for (s = p->target; *s; s++)
		if (*s != '/' || q == x->target_buf || q[-1] != '/')
			*q++ = *s;
	if (q > x->target_buf + 1 && q[-1] == '/')
		q--;
	*q = 0;
	p->target = x->target_buf;
	return 0;
}

/* --fs-config's table, read once for every pass; a malformed line's error
 * (not a usage one) names the file and the line. */
static errcode_t read_fs_config(struct populate_opts *p, struct optparse_aux *x,
				const char **msg)
{
	unsigned int line;
	errcode_t err;

	if (!x->fs_config_file)
		return 0;
	err = fsconfig_read(x->fs_config_file, &x->fs_config, &line);
	if (err) {
		snprintf(x->msgbuf, sizeof(x->msgbuf), line ?
			 "reading fs_config %s line %u" : "reading fs_config %s",
			 x->fs_config_file, line);
		*msg = x->msgbuf;
		return err;
	}
	p->meta.fs_config = &x->fs_config;
	if (x->fs_config.caps_line && !p->xattrs)
		return optparse_usage(x, msg, "--fs-config ", x->fs_config_file,
				      " gives capabilities, stored as extended attributes: not with --no-xattrs");
	return 0;
}

/* --file-contexts refused before anything is done: not a regular file,
 * or one libselinux refuses (with its words, which it would print) */
static errcode_t check_file_contexts(struct populate_opts *p,
				     struct optparse_aux *x, const char **msg)
{
	const char *f = p->meta.file_contexts;
	struct strbuf why = { 0 };
	errcode_t err = f ? selabel_try(f, &why) : 0;

	if (err == ORLOV_ERR_USAGE) {
		err = optparse_usage(x, msg, "--file-contexts ", f,
				     ": not a regular file");
	} else if (err) {
		snprintf(x->msgbuf, sizeof(x->msgbuf),
			 "reading --file-contexts %s%s%s", f,
			 why.len ? ": " : "", why.len ? why.s : "");
		*msg = x->msgbuf;
	}
	sb_free(&why);
	return err;
}

errcode_t optparse_operands(struct populate_opts *p, struct optparse_aux *x,
			    const char *image, const char *const *layers,
			    size_t nlayers, const char **msg)
{
	size_t i, dash = 0;
	errcode_t err = parse_target(p, x, msg);

	if (err)
		return err;
	p->image = image;
	p->source = layers[0];
	/* layers: OCI's whiteouts are what several archives mean */
	p->layers = layers;
	p->nlayers = nlayers;
	if (p->nlayers > 1)
		p->whiteouts = 1;
	for (i = 0; i < p->nlayers; i++)
		dash += !strcmp(p->layers[i], "-");
	if (dash > 1)
		return USAGE("standard input (-) can be one layer only");
	p->meta.label_root = p->target;	/* --file-contexts looks up below */
	err = check_file_contexts(p, x, msg);
	return err ? err : read_fs_config(p, x, msg);
}

void optparse_free(struct populate_opts *p, struct optparse_aux *x)
{
	free(p->casefold);
	p->casefold = NULL;
	p->ncasefold = 0;
	meta_rules_free(&p->meta);
	fsconfig_free(&x->fs_config);
}
