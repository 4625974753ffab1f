// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/io_guard.h"
#include "cli/options.h"
#include "cli/conflict.h"
#include "source/meta.h"
#include "source/tar.h"
#include "model/kver.h"
#include "model/ext4/mballoc.h"
#include "source/selabel.h"
#include "image/naming.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

enum {
	OPT_POLICY = 256,
	OPT_TOPDIR,
	OPT_SEED,
	OPT_COLOUR,
	OPT_CPUS,
	OPT_POSSIBLE_CPUS,
	OPT_KERNEL,
	OPT_MB_OPTIMIZE_SCAN,
	OPT_DRIVER,
	OPT_ROTATIONAL,
	OPT_DELALLOC,
	OPT_NO_DELALLOC,
	OPT_TRACE,
	OPT_UNDO,
	OPT_NO_XATTRS,
	OPT_NO_FSCK,
	OPT_ATOMIC,
	OPT_IN_PLACE,
	OPT_CREATE,
	OPT_FS_TYPE,
	OPT_BLOCK_SIZE,
	OPT_INODES,
	OPT_MKFS_OPTIONS,
	OPT_ALL_ROOT,
	OPT_UID_MAP,
	OPT_GID_MAP,
	OPT_ROOT_OWNER,
	OPT_DEVTABLE,
	OPT_DRY_RUN,
	OPT_JSON,
	OPT_MERGE,
	OPT_ROOT_ATTRS,
	OPT_FORCE,
	OPT_FILE_CONTEXTS, OPT_SQUASH_PERMS, OPT_LABEL, OPT_UUID,
	OPT_PARTITION, OPT_OFFSET,
	OPT_FS_CONFIG,
	OPT_WHITEOUTS,
	OPT_JOBS,
};

static const struct option longopts[] = {
	{ "target", required_argument, NULL, 't' },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "topdir", required_argument, NULL, OPT_TOPDIR },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "block-colour", required_argument, NULL, OPT_COLOUR },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "possible-cpus", required_argument, NULL, OPT_POSSIBLE_CPUS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "mb-optimize-scan", required_argument, NULL, OPT_MB_OPTIMIZE_SCAN },
	{ "driver", required_argument, NULL, OPT_DRIVER },
	{ "rotational", required_argument, NULL, OPT_ROTATIONAL },
	{ "delalloc", no_argument, NULL, OPT_DELALLOC },
	{ "no-delalloc", no_argument, NULL, OPT_NO_DELALLOC },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "undo", required_argument, NULL, OPT_UNDO },
	{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
	{ "no-fsck", no_argument, NULL, OPT_NO_FSCK },
	{ "atomic", no_argument, NULL, OPT_ATOMIC },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "create", required_argument, NULL, OPT_CREATE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "file-contexts", required_argument, NULL, OPT_FILE_CONTEXTS },
	{ "squash-perms", no_argument, NULL, OPT_SQUASH_PERMS },
	{ "fs-config", required_argument, NULL, OPT_FS_CONFIG },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "uuid", required_argument, NULL, OPT_UUID },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "fs-type", required_argument, NULL, OPT_FS_TYPE },
	{ "block-size", required_argument, NULL, OPT_BLOCK_SIZE },
	{ "inodes", required_argument, NULL, OPT_INODES },
	{ "mkfs-options", required_argument, NULL, OPT_MKFS_OPTIONS },
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "uid-map", required_argument, NULL, OPT_UID_MAP },
	{ "gid-map", required_argument, NULL, OPT_GID_MAP },
	{ "root-owner", required_argument, NULL, OPT_ROOT_OWNER },
	{ "devtable", required_argument, NULL, OPT_DEVTABLE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "merge", no_argument, NULL, OPT_MERGE },
	{ "root-attrs", no_argument, NULL, OPT_ROOT_ATTRS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "whiteouts", no_argument, NULL, OPT_WHITEOUTS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", optional_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

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

/* A usage message that names what the user typed. */
static errcode_t usage_msg(struct options *o, const char **msg,
			   const char *before, const char *arg,
			   const char *after)
{
	snprintf(o->msgbuf, sizeof(o->msgbuf), "%s%s%s", before, arg, after);
	*msg = o->msgbuf;
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
	{ 'v', P(verbosity), 1 }, { 'q', P(verbosity), -1 },
};

/* The options whose argument is kept as it is. */
static const struct { int id; size_t off; } arg_opts[] = {
	{ 't', P(target) }, { OPT_TRACE, P(trace) }, { OPT_UNDO, P(undo) },
	{ OPT_MKFS_OPTIONS, P(mkfs.extra) }, { OPT_DEVTABLE, P(devtable) },
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

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Option @c from the tables: 1 when it is one of theirs. */
static int table_option(struct populate_opts *p, int c, errcode_t *err,
			const char **msg)
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
			return *(const char **)(base + arg_opts[i].off) = optarg, 1;
	for (i = 0; i < NELEM(word_opts); i++) {
		if (word_opts[i].id != c)
			continue;
		if ((k = keyword(optarg, word_opts[i].names)) < 0)
			*err = USAGE(word_opts[i].msg);
		else	/* the enums: unsigned, values from 0 */
			*(unsigned int *)(base + word_opts[i].off) = (unsigned int)k;
		return 1;
	}
	return 0;
}

/* --create's SIZE, given after it or as the last operand. */
static errcode_t create_size(struct options *o, const char *size,
			     const char **msg)
{
	o->p.create = 1;
	o->p.mkfs.size = size;
	if (!strncmp(size, "auto", 4) && parse_margin(size + 4, &o->p))
		return usage_msg(o, msg, "--create ", size, ": give auto, auto+N% or auto+SIZE (K, M or G)");
	return 0;
}

/* On and off: given both, which is meant is a guess (--atomic and
 * --in-place likewise, conflict.c). */
static const struct { int on, off; const char *msg; } opposites[] = {
	{ OPT_DELALLOC, OPT_NO_DELALLOC, "--delalloc and --no-delalloc contradict each other: give one" },
	{ 'v', 'q', "--verbose and --quiet contradict each other: give one" },
};

/* The options that take a number or a checked argument. */
static errcode_t value_option(struct options *o, int c, const char **msg)
{
	struct populate_opts *p = &o->p;
	uint64_t v;

	switch (c) {
	case OPT_SEED:
		if (parse_u64(optarg, UINT64_MAX, &p->seed))
			return USAGE("--seed takes a number");
		break;
	case OPT_COLOUR:
		if (parse_u64(optarg, 15, &v))
			return USAGE("--block-colour takes a number from 0 to 15");
		p->colour = (unsigned int)v;
		break;
	case OPT_CPUS:
		/* NR_CPUS is at most 8192 (MAXSMP). */
		if (!strcmp(optarg, "up"))
			p->cpus = 0;
		else if (parse_u64(optarg, 8192, &v) || v == 0)
			return USAGE("--cpus takes up or a number from 1 to 8192");
		else
			p->cpus = (unsigned int)v;
		break;
	case OPT_POSSIBLE_CPUS:
		if (parse_u64(optarg, 8192, &v) || v == 0)
			return USAGE("--possible-cpus takes a number from 1 to 8192");
		p->possible_cpus = (unsigned int)v;
		break;
	case OPT_JOBS:
		if (parse_u64(optarg, 2, &v) || v == 0)
			return USAGE("--jobs takes 1 or 2");
		p->jobs = (int)v;
		break;
	case OPT_KERNEL:
		if (kver_parse(optarg, &p->kver, &p->arm64))
			return usage_msg(o, msg, "--kernel ", optarg, ": give " KVER_ACCEPTED);
		break;
	case OPT_MB_OPTIMIZE_SCAN:
		p->mb_optimize_scan = !strcmp(optarg, "yes") ? MB_OPTIMIZE_SCAN_ON :
				      !strcmp(optarg, "no") ? MB_OPTIMIZE_SCAN_OFF : -1;
		if (p->mb_optimize_scan < 0)
			return USAGE("--mb-optimize-scan takes yes or no");
		break;
	case OPT_CREATE:
		return create_size(o, optarg, msg);
	case OPT_FS_TYPE:
		if (strcmp(optarg, "ext2") && strcmp(optarg, "ext3") &&
		    strcmp(optarg, "ext4"))
			return usage_msg(o, msg, "--fs-type takes ext2, ext3 or ext4, not ", optarg, "");
		p->mkfs.fs_type = optarg;
		break;
	case OPT_BLOCK_SIZE:
		if (strcmp(optarg, "1024") && strcmp(optarg, "2048") &&
		    strcmp(optarg, "4096"))
			return USAGE("--block-size takes 1024, 2048 or 4096");
		p->mkfs.block_size = optarg;
		break;
	case OPT_INODES:
		if (parse_u64(optarg, UINT32_MAX, &v) || v == 0)
			return USAGE("--inodes takes a number");
		p->mkfs.inodes = optarg;
		break;
	case OPT_UID_MAP:
	case OPT_GID_MAP:
		if (id_map_parse(c == OPT_UID_MAP ? &p->meta.uid : &p->meta.gid, optarg))
			return usage_msg(o, msg, "bad ID map ", optarg, ": give FROM:TO or FROM:TO:COUNT, comma-separated");
		break;
	case OPT_LABEL:
		if (strlen(optarg) > NAMING_LABEL_MAX)
			return usage_msg(o, msg, "--label ", optarg, ": at most 16 bytes");
		p->mkfs.label = optarg;
		break;
	case OPT_UUID:
		if (!naming_uuid_valid(optarg))
			return usage_msg(o, msg, "--uuid ", optarg, ": give a UUID (8-4-4-4-12 hex digits), random, time or clear");
		p->mkfs.uuid = optarg;
		break;
	case OPT_OFFSET:
		if (parse_u64(optarg, INT64_MAX, &p->where.offset))
			return USAGE("--offset takes a number of bytes");
		break;
	case OPT_FS_CONFIG:
		o->fs_config_file = optarg;
		break;
	case OPT_ROOT_OWNER:
		if (meta_owner_parse(optarg, &p->root_uid, &p->root_gid))
			return USAGE("--root-owner takes UID:GID (numbers)");
		p->root_owner = 1;
		break;
	}
	return 0;
}

/* The short options that mean what mke2fs's mean (-t does not: it is
 * the target here, as it was before orlov-mkfs took mke2fs's command
 * line whole). */
static int mke2fs_letter(int c)
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

/* An option getopt_long does not know, or one without its argument. */
static errcode_t bad_option(struct options *o, int c, char **argv,
			    const char **msg)
{
	char opt[3] = { '-', (char)optopt, 0 };

	if (c == ':')
		return usage_msg(o, msg, "", argv[optind - 1], " needs an argument");
	if (optopt)
		return usage_msg(o, msg, "unknown option ", opt, "");
	return usage_msg(o, msg, "unknown option ", argv[optind - 1], "");
}

/* --target checked, and "//", "/a//b/" made the directory they name, as
 * a shell takes them. */
static errcode_t parse_target(struct options *o, const char **msg)
{
	struct populate_opts *p = &o->p;
	const char *s;
	char *q = o->target_buf;

	if (p->target[0] != '/')
		return USAGE("--target must be an absolute path inside the image");
	if (strlen(p->target) >= sizeof(o->target_buf))
		return USAGE("--target is too long");
	for (s = p->target; *s; s++)
		if (*s != '/' || q == o->target_buf || q[-1] != '/')
			*q++ = *s;
	if (q > o->target_buf + 1 && q[-1] == '/')
		q--;
	*q = 0;
	p->target = o->target_buf;
	return 0;
}

/* The defaults, and what the environment gives. */
static errcode_t parse_defaults(struct populate_opts *p, const char **msg)
{
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
	p->kver = KVER_REF_6_1;
	return 0;
}

/* --fs-config's table, read once for every pass; a malformed line's error
 * (not a usage one) names the file and the line. */
static errcode_t read_fs_config(struct options *o, const char **msg)
{
	unsigned int line;
	errcode_t err;

	if (!o->fs_config_file)
		return 0;
	err = fsconfig_read(o->fs_config_file, &o->fs_config, &line);
	if (err) {
		snprintf(o->msgbuf, sizeof(o->msgbuf), line ?
			 "reading fs_config %s line %u" : "reading fs_config %s",
			 o->fs_config_file, line);
		*msg = o->msgbuf;
		return err;
	}
	o->p.meta.fs_config = &o->fs_config;
	if (o->fs_config.caps_line && !o->p.xattrs)
		return usage_msg(o, msg, "--fs-config ", o->fs_config_file,
				 " gives capabilities, stored as extended attributes: not with --no-xattrs");
	return 0;
}

/* --file-contexts refused before anything is done: not a regular file,
 * or one libselinux refuses (with its words, which it would print) */
static errcode_t check_file_contexts(struct options *o, const char **msg)
{
	const char *f = o->p.meta.file_contexts;
	struct strbuf why = { 0 };
	errcode_t err = f ? selabel_try(f, &why) : 0;

	if (err == ORLOV_ERR_USAGE) {
		err = usage_msg(o, msg, "--file-contexts ", f,
				": not a regular file");
	} else if (err) {
		snprintf(o->msgbuf, sizeof(o->msgbuf),
			 "reading --file-contexts %s%s%s", f,
			 why.len ? ": " : "", why.len ? why.s : "");
		*msg = o->msgbuf;
	}
	sb_free(&why);
	return err;
}

/* After the options: what follows from them and the environment. */
static errcode_t parse_finish(struct options *o, int argc, char **argv,
			      const char **msg)
{
	struct populate_opts *p = &o->p;
	struct io_fault fault;
	const char *bad = options_conflict(p), *env;
	size_t i, dash = 0;
	errcode_t err;

	if (bad)
		return USAGE(bad);
	p->mkfs.has_epoch = p->meta.has_epoch;
	p->mkfs.epoch = p->meta.epoch;
	p->mkfs.seed = p->seed;
	p->fault = getenv("ORLOV_FAULT");
	env = getenv("ORLOV_STAGE_BUDGET");
	if (env && *env)
		p->stage_budget = (size_t)strtoul(env, NULL, 10) << 10;
	if (io_guard_parse(p->fault, &fault))
		return USAGE("ORLOV_FAULT takes count, kill:N, eio:N, enospc:N, eioread:N, fillkill:N or filleio:N");
	if (!strcmp(p->target, "ext2") || !strcmp(p->target, "ext3") ||
	    !strcmp(p->target, "ext4"))
		return usage_msg(o, msg, "-t ", p->target, ": -t is --target, a directory in IMAGE; the filesystem type is IMAGE's own (or --fs-type with --create)");
	/* --create's SIZE last, as mke2fs takes it: IMAGE SOURCE SIZE */
	if (p->create && !p->mkfs.size) {
		if (argc - optind < 3 || !mkfs_size_word(argv[argc - 1]))
			return USAGE("--create needs SIZE: --create SIZE, or SIZE after IMAGE and SOURCE");
		err = create_size(o, argv[--argc], msg);
		if (err)
			return err;
	}
	if (argc - optind < 2)
		return USAGE("expected IMAGE and SOURCE");
	err = parse_target(o, msg);
	if (err)
		return err;
	p->image = argv[optind];
	p->source = argv[optind + 1];
	/* layers: OCI's whiteouts are what several archives mean */
	p->layers = (const char *const *)argv + optind + 1;
	p->nlayers = (size_t)(argc - optind - 1);
	if (p->nlayers > 1)
		p->whiteouts = 1;
	for (i = 0; i < p->nlayers; i++)
		dash += !strcmp(p->layers[i], "-");
	if (dash > 1)
		return USAGE("standard input (-) can be one layer only");
	p->meta.label_root = p->target;	/* --file-contexts looks up below */
	err = check_file_contexts(o, msg);
	return err ? err : read_fs_config(o, msg);
}

errcode_t options_parse(int argc, char **argv, struct options *o,
			const char **msg)
{
	unsigned int given[NELEM(opposites)] = { 0 };
	errcode_t err;
	size_t i;
	int c;

	memset(o, 0, sizeof(*o));
	err = parse_defaults(&o->p, msg);
	if (err)
		return err;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:vqhVL:U:b:N:F", longopts,
				NULL)) != -1) {
		c = mke2fs_letter(c);
		for (i = 0; i < NELEM(opposites); i++)
			if ((given[i] |= (c == opposites[i].on) |
					 (c == opposites[i].off) << 1) == 3)
				return USAGE(opposites[i].msg);
		/* a word after --create that is no SIZE (an option, IMAGE):
		 * SIZE is the last operand, and the word is read again */
		if (c == OPT_CREATE && optarg == argv[optind - 1] &&
		    !mkfs_size_word(optarg)) {
			o->p.create = 1;
			optind--;
			continue;
		}
		if (table_option(&o->p, c, &err, msg)) {
			if (err)
				return err;
			continue;
		}
		if (c == 'h' || c == 'V') {
			if (c == 'V')
				o->version = 1;
			else if ((o->help = usage_which(optarg)) < 0)
				return usage_msg(o, msg, "--help=", optarg,
						 ": give --help, --help=all or --help=kernel");
			return 0;
		}
		if (c == ':' || c == '?')
			return bad_option(o, c, argv, msg);
		err = value_option(o, c, msg);
		if (err)
			return err;
	}
	return parse_finish(o, argc, argv, msg);
}

void options_free(struct options *o)
{
	meta_rules_free(&o->p.meta);
	fsconfig_free(&o->fs_config);
}
