// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "image/io_guard.h"
#include "cli/options.h"
#include "source/tar.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

enum {
	OPT_POLICY = 256,
	OPT_TOPDIR,
	OPT_SEED,
	OPT_COLOUR,
	OPT_CPUS,
	OPT_KERNEL,
	OPT_DRIVER,
	OPT_DELALLOC,
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
};

static const struct option longopts[] = {
	{ "target", required_argument, NULL, 't' },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "topdir", required_argument, NULL, OPT_TOPDIR },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "block-colour", required_argument, NULL, OPT_COLOUR },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "driver", required_argument, NULL, OPT_DRIVER },
	{ "delalloc", no_argument, NULL, OPT_DELALLOC },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "undo", required_argument, NULL, OPT_UNDO },
	{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
	{ "no-fsck", no_argument, NULL, OPT_NO_FSCK },
	{ "atomic", no_argument, NULL, OPT_ATOMIC },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "create", required_argument, NULL, OPT_CREATE },
	{ "force", no_argument, NULL, OPT_FORCE },
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
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
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
static const char *const kernel_names[] = { "6.1", "6.1-arm64", "6.12", NULL };
static const char *const driver_names[] = { "ext2", "ext4", NULL };

void options_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [OPTIONS] IMAGE SOURCE\n"
"Copy the directory tree SOURCE into the ext2/ext3 filesystem IMAGE, placing\n"
"every inode and block where the Linux 6.1 ext2 driver would (Orlov allocator).\n"
"%s"
"\n"
"Making the image:\n"
"      --create SIZE      make a new filesystem in IMAGE first with mke2fs -F\n"
"                         (SIZE as mke2fs takes it: 64M, 2G, or blocks);\n"
"                         IMAGE is overwritten.  auto[+N%%|+SIZE]: the\n"
"                         smallest size the tree fits in (4 KiB blocks\n"
"                         unless --block-size), plus the margin.  An IMAGE\n"
"                         that holds data but no ext2/3/4 filesystem is\n"
"                         refused (arguments swapped?)\n"
"      --force            with --create: overwrite such an IMAGE too\n"
"      --fs-type T        with --create: ext2 (default) or ext3\n"
"      --block-size N     with --create: 1024, 2048 or 4096\n"
"      --inodes N         with --create: the number of inodes\n"
"      --mkfs-options S   with --create: more mke2fs options, split at blanks\n"
"                         (not -E offset=)\n"
"\n"
"What is copied:\n"
"  -t, --target PATH      existing directory in IMAGE to fill (default /)\n"
"      --all-root         every file owned by user and group 0\n"
"      --uid-map MAP      owners FROM:TO[:COUNT][,...]: COUNT ids from FROM\n"
"                         on become TO on (repeatable; others unchanged)\n"
"      --gid-map MAP      the same for groups\n"
"      --root-owner U:G   owner and group of the target directory\n"
"      --root-attrs       the target directory takes SOURCE's own mode,\n"
"                         owners, times and attributes (cp -a SOURCE/.);\n"
"                         --root-owner, given too, has the last word\n"
"      --merge            a directory of SOURCE that IMAGE has already is\n"
"                         filled, not refused (as cp -a does); names that\n"
"                         are not both directories are still refused.\n"
"                         lost+found at the image's root is always reused\n"
"      --devtable FILE    device table (makedevs/genext2fs format; a line may\n"
"                         stop after MODE): creates the directories, devices\n"
"                         and FIFOs it lists, sets mode and owner of those\n"
"                         already in SOURCE\n"
"      --no-xattrs        do not copy extended attributes and ACLs\n"
"\n"
"Where it goes (the kernel being modelled):\n"
"      --policy P         orlov (default) or oldalloc (the kernel's find_group_dir)\n"
"      --topdir R         start group of a top-level directory: hash (default,\n"
"                         ext4's half-MD4 name hash) or random (PRNG, --seed)\n"
"      --seed N           seed for --topdir random, and for the UUID that\n"
"                         --create derives from SOURCE_DATE_EPOCH (default 0)\n"
"      --block-colour N   block goal colour 0-15, the kernel's writer pid %% 16\n"
"                         (default 0)\n"
"      --cpus N|up        the kernel's online CPUs: its free-inode, free-block\n"
"                         and directory counters lag by up to max(32, 2N) per\n"
"                         CPU on an SMP kernel; up: a uniprocessor build, exact\n"
"                         counters (default up)\n"
"      --kernel V         6.1 (default), 6.1-arm64 or 6.12: how the driver\n"
"                         hashes attribute names (signed char on x86 6.1,\n"
"                         unsigned on arm64 and from 6.2 on) and whether an\n"
"                         attribute block may come from the file's\n"
"                         reservation window (6.1, not 6.12)\n"
"      --driver D         ext2 (default): the ext2 driver; ext4: Linux 6.1's ext4\n"
"                         driver mounting the image as ext2 or ext3, as Debian's\n"
"                         and Ubuntu's kernels do (mballoc without delayed\n"
"                         allocation, hash-tree directories, attributes in\n"
"                         large inodes)\n"
"      --delalloc         with --driver ext4: the image is mounted -t ext4, which\n"
"                         delays file data blocks until writeback (all after\n"
"                         the tree, in creation order)\n"
"\n"
"Safety and output:\n"
"      --dry-run          do everything but write: print the inodes and blocks\n"
"                         the copy takes (exactly what the real run takes);\n"
"                         with --create, made in a scratch file in TMPDIR\n"
"      --json             print the summary, or the error, as one JSON object\n"
"                         on stdout (-v lines go to stderr); bytes of names\n"
"                         that are not UTF-8, and %%, as %%XX\n"
"      --trace FILE       write one record per allocation decision to FILE\n"
"      --undo FILE        save every block's old contents in the new undo file\n"
"                         FILE first; e2undo FILE IMAGE restores the image\n"
"      --atomic           always write a copy of the image file next to it and\n"
"                         rename it over IMAGE at the end (the default for an\n"
"                         image file without a journal)\n"
"      --in-place         never a copy: write IMAGE itself (through its journal\n"
"                         if it has one; else, killed while it commits, it\n"
"                         needs e2fsck -fy)\n"
"      --no-fsck          do not run e2fsck -fn on IMAGE before writing (it\n"
"                         refuses an image e2fsck finds errors in)\n"
"  -v, --verbose          one line per entry: path, inode, group\n"
"  -q, --quiet            print errors only\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"A failed write puts the image back as it was.  Killed, the run leaves the old\n"
"filesystem or the new one: an ext2 image file is written as a copy renamed\n"
"over it at the end (so is --create's new image); an ext3 image commits\n"
"through its journal (mount or e2fsck -p replays it).  A device, an image\n"
"with several hard links, --undo or --in-place: written in place, and an\n"
"ext2 filesystem killed while it commits needs e2fsck -fy (nothing that was\n"
"there is lost), or e2undo with --undo.\n"
"Numbers are decimal (a leading 0 is no octal).  Times an inode cannot hold\n"
"are clamped to its range as the kernel clamps them (128-byte inodes: 1901\n"
"to 2038).\n"
"Environment: SOURCE_DATE_EPOCH (later times are clamped to it, and it is\n"
"the superblock's write time; with --create also the creation times, UUID\n"
"(with a digest of the tree and options) and hash seed: two runs give\n"
"identical images; refused beyond what the image's inodes hold); TMPDIR\n"
"(--delalloc's delayed data); ORLOV_FAULT and ORLOV_RACE (tests only).\n",
		prog, tar_supported() ?
"SOURCE may also be an archive SOURCE (tar, pax, cpio...; gzip, xz, zstd...;\n"
"- reads standard input): read once into TMPDIR, the same image results.\n" :
"This build reads no archives (configured --without-libarchive).\n");
}

/* After "auto": nothing, "+N%" or "+SIZE" with K, M or G (binary). */
static int parse_margin(const char *s, struct options *o)
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

/* "UID:GID" */
static int parse_owner(const char *s, uint32_t *uid, uint32_t *gid)
{
	const char *colon = strchr(s, ':');
	char buf[16];
	uint64_t u, g;
	size_t n;

	if (!colon || (n = (size_t)(colon - s)) == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (parse_u64(buf, UINT32_MAX, &u) || parse_u64(colon + 1, UINT32_MAX, &g))
		return -1;
	*uid = (uint32_t)u;
	*gid = (uint32_t)g;
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

errcode_t options_parse(int argc, char **argv, struct options *o,
			const char **msg)
{
	struct io_fault fault;
	uint64_t v;
	int c, k;

	memset(o, 0, sizeof(*o));
	o->target = "/";
	if (meta_epoch_from_env(&o->meta))
		return *msg = "SOURCE_DATE_EPOCH takes seconds since 1970, at most 4294967295", ORLOV_ERR_USAGE;
#ifndef EXT2_FLAG2_USE_FAKE_TIME
	/* libext2fs before 1.47.1 takes a time of 0 for "use the clock" */
	if (o->meta.has_epoch && o->meta.epoch == 0)
		return *msg = "SOURCE_DATE_EPOCH=0: this libext2fs would write the clock into the superblock; use 1", ORLOV_ERR_USAGE;
#endif
	o->xattrs = 1;
	o->fsck = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:vqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->target = optarg;
			break;
		case OPT_POLICY:
			if ((k = keyword(optarg, policy_names)) < 0)
				return *msg = "--policy takes orlov or oldalloc", ORLOV_ERR_USAGE;
			o->policy = (enum alloc_policy)k;
			break;
		case OPT_TOPDIR:
			if ((k = keyword(optarg, topdir_names)) < 0)
				return *msg = "--topdir takes hash or random", ORLOV_ERR_USAGE;
			o->topdir = (enum topdir_rule)k;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, UINT64_MAX, &o->seed))
				return *msg = "--seed takes a number", ORLOV_ERR_USAGE;
			break;
		case OPT_COLOUR:
			if (parse_u64(optarg, 15, &v))
				return *msg = "--block-colour takes a number from 0 to 15", ORLOV_ERR_USAGE;
			o->colour = (unsigned int)v;
			break;
		case OPT_CPUS:
			/* NR_CPUS is at most 8192 (MAXSMP). */
			if (!strcmp(optarg, "up"))
				o->cpus = 0;
			else if (parse_u64(optarg, 8192, &v) || v == 0)
				return *msg = "--cpus takes up or a number from 1 to 8192", ORLOV_ERR_USAGE;
			else
				o->cpus = (unsigned int)v;
			break;
		case OPT_KERNEL:
			if ((k = keyword(optarg, kernel_names)) < 0)
				return *msg = "--kernel takes 6.1, 6.1-arm64 or 6.12", ORLOV_ERR_USAGE;
			o->kernel = (enum kernel_version)k;
			break;
		case OPT_DRIVER:
			if ((k = keyword(optarg, driver_names)) < 0)
				return *msg = "--driver takes ext2 or ext4", ORLOV_ERR_USAGE;
			o->driver = (enum fs_driver)k;
			break;
		case OPT_DELALLOC:
			o->delalloc = 1;
			break;
		case OPT_TRACE:
			o->trace = optarg;
			break;
		case OPT_UNDO:
			o->undo = optarg;
			break;
		case OPT_NO_XATTRS:
			o->xattrs = 0;
			break;
		case OPT_NO_FSCK:
			o->fsck = 0;
			break;
		case OPT_ATOMIC:
			o->atomic = 1;
			break;
		case OPT_IN_PLACE:
			o->in_place = 1;
			break;
		case OPT_CREATE:
			o->create = 1;
			o->mkfs.size = optarg;
			if (!strncmp(optarg, "auto", 4) &&
			    parse_margin(optarg + 4, o))
				return usage_msg(o, msg, "--create ", optarg, ": give auto, auto+N% or auto+SIZE (K, M or G)");
			break;
		case OPT_FORCE:
			o->force = 1;
			break;
		case OPT_DRY_RUN:
			o->dry_run = 1;
			break;
		case OPT_MERGE:
			o->merge = 1;
			break;
		case OPT_ROOT_ATTRS:
			o->root_attrs = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_FS_TYPE:
			if (strcmp(optarg, "ext2") && strcmp(optarg, "ext3"))
				return usage_msg(o, msg, "--fs-type takes ext2 or ext3, not ", optarg, " (ext4's extents are not written)");
			o->mkfs.fs_type = optarg;
			break;
		case OPT_BLOCK_SIZE:
			if (strcmp(optarg, "1024") && strcmp(optarg, "2048") &&
			    strcmp(optarg, "4096"))
				return *msg = "--block-size takes 1024, 2048 or 4096", ORLOV_ERR_USAGE;
			o->mkfs.block_size = optarg;
			break;
		case OPT_INODES:
			if (parse_u64(optarg, UINT32_MAX, &v) || v == 0)
				return *msg = "--inodes takes a number", ORLOV_ERR_USAGE;
			o->mkfs.inodes = optarg;
			break;
		case OPT_MKFS_OPTIONS:
			o->mkfs.extra = optarg;
			break;
		case OPT_ALL_ROOT:
			o->meta.all_root = 1;
			break;
		case OPT_UID_MAP:
		case OPT_GID_MAP:
			if (id_map_parse(c == OPT_UID_MAP ? &o->meta.uid : &o->meta.gid, optarg))
				return usage_msg(o, msg, "bad ID map ", optarg, ": give FROM:TO or FROM:TO:COUNT, comma-separated");
			break;
		case OPT_ROOT_OWNER:
			if (parse_owner(optarg, &o->root_uid, &o->root_gid))
				return *msg = "--root-owner takes UID:GID (numbers)", ORLOV_ERR_USAGE;
			o->root_owner = 1;
			break;
		case OPT_DEVTABLE:
			o->devtable = optarg;
			break;
		case 'v':
			o->verbosity = 1;
			break;
		case 'q':
			o->verbosity = -1;
			break;
		case 'h':
			o->help = 1;
			return 0;
		case 'V':
			o->version = 1;
			return 0;
		case ':':
			return usage_msg(o, msg, "", argv[optind - 1], " needs an argument");
		default:
			if (optopt) {
				char opt[3] = { '-', (char)optopt, 0 };

				return usage_msg(o, msg, "unknown option ", opt, "");
			}
			return usage_msg(o, msg, "unknown option ", argv[optind - 1], "");
		}
	}
	if (o->delalloc && o->driver != DRIVER_EXT4)
		return *msg = "--delalloc is the ext4 driver's: give --driver ext4", ORLOV_ERR_USAGE;
	if (o->driver == DRIVER_EXT4 && o->policy == POLICY_OLDALLOC)
		return *msg = "--policy oldalloc is the ext2 driver's: ext4 has no oldalloc", ORLOV_ERR_USAGE;
	if (o->driver == DRIVER_EXT4 && o->topdir == TOPDIR_RANDOM)
		return *msg = "--topdir random is the ext2 driver's: ext4 always hashes the name", ORLOV_ERR_USAGE;
	if (o->driver == DRIVER_EXT4 && o->kernel == KERNEL_6_12)
		return *msg = "--driver ext4 models Linux 6.1's ext4, not 6.12's", ORLOV_ERR_USAGE;
	if (o->atomic && o->undo)
		return *msg = "--atomic never changes IMAGE in place: no --undo needed", ORLOV_ERR_USAGE;
	if (o->atomic && o->in_place)
		return *msg = "--atomic writes a copy, --in-place the image itself: give one", ORLOV_ERR_USAGE;
	if (!o->create && (o->mkfs.fs_type || o->mkfs.block_size ||
			   o->mkfs.inodes || o->mkfs.extra))
		return *msg = "--fs-type, --block-size, --inodes and --mkfs-options go with --create SIZE", ORLOV_ERR_USAGE;
	if (o->force && !o->create)
		return *msg = "--force goes with --create (it lets mke2fs overwrite a file that holds no filesystem)", ORLOV_ERR_USAGE;
	/* the image is opened at its first byte: one made at an offset
	 * would be refused after mke2fs as no filesystem */
	if (o->mkfs.extra && strstr(o->mkfs.extra, "offset="))
		return *msg = "--mkfs-options -E offset=: the filesystem must start at IMAGE's first byte", ORLOV_ERR_USAGE;
	if (o->meta.all_root && (o->meta.uid.n || o->meta.gid.n))
		return *msg = "--all-root leaves nothing for --uid-map or --gid-map to map", ORLOV_ERR_USAGE;
	if (o->create && o->undo)
		return *msg = "--create makes a new filesystem: nothing for --undo to give back", ORLOV_ERR_USAGE;
	if (o->dry_run && (o->undo || o->atomic || o->in_place))
		return *msg = "--dry-run writes nothing: not with --undo, --atomic or --in-place", ORLOV_ERR_USAGE;
	o->mkfs.has_epoch = o->meta.has_epoch;
	o->mkfs.epoch = o->meta.epoch;
	o->mkfs.seed = o->seed;
	o->fault = getenv("ORLOV_FAULT");
	o->race = getenv("ORLOV_RACE");
	if (o->race && !*o->race)
		o->race = NULL;
	if (io_guard_parse(o->fault, &fault))
		return *msg = "ORLOV_FAULT takes count, kill:N, eio:N, enospc:N or eioread:N", ORLOV_ERR_USAGE;
	if (!strcmp(o->target, "ext2") || !strcmp(o->target, "ext3") ||
	    !strcmp(o->target, "ext4"))
		return usage_msg(o, msg, "-t ", o->target, ": -t is --target, a directory in IMAGE; the filesystem type is IMAGE's own (or --fs-type with --create)");
	if (argc - optind != 2)
		return *msg = "expected IMAGE and SOURCE", ORLOV_ERR_USAGE;
	if (o->target[0] != '/')
		return *msg = "--target must be an absolute path inside the image", ORLOV_ERR_USAGE;
	/* "//", "/a//b/": the directory they name, as a shell takes them */
	if (strlen(o->target) >= sizeof(o->target_buf))
		return *msg = "--target is too long", ORLOV_ERR_USAGE;
	{
		const char *p;
		char *q = o->target_buf;

		for (p = o->target; *p; p++)
			if (*p != '/' || q == o->target_buf || q[-1] != '/')
				*q++ = *p;
		if (q > o->target_buf + 1 && q[-1] == '/')
			q--;
		*q = 0;
		o->target = o->target_buf;
	}
	o->image = argv[optind];
	o->source = argv[optind + 1];
	return 0;
}

void options_free(struct options *o)
{
	meta_rules_free(&o->meta);
}
