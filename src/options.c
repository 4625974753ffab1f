// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "io_guard.h"
#include "options.h"
#include "util.h"
#include "orlov_err.h"

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
"\n"
"  -t, --target PATH      existing directory in IMAGE to fill (default /)\n"
"      --policy P         orlov (default) or oldalloc (the kernel's find_group_dir)\n"
"      --topdir R         start group of a top-level directory: hash (default,\n"
"                         ext4's half-MD4 name hash) or random (PRNG, --seed)\n"
"      --seed N           seed for --topdir random (default 0)\n"
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
"      --trace FILE       write one record per allocation decision to FILE\n"
"      --undo FILE        save every block's old contents in the new undo file\n"
"                         FILE first; e2undo FILE IMAGE restores the image\n"
"      --atomic           write a copy of the image file next to it and rename\n"
"                         it over IMAGE at the end: killed, IMAGE is untouched\n"
"      --no-xattrs        do not copy extended attributes and ACLs\n"
"      --no-fsck          do not run e2fsck -fn on IMAGE before writing (it\n"
"                         refuses an image e2fsck finds errors in)\n"
"  -v, --verbose          one line per entry: path, inode, group\n"
"  -q, --quiet            print errors only\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"A failed write puts the image back as it was.  Killed while it commits, the\n"
"run leaves the filesystem marked not clean: e2fsck -fy repairs it without\n"
"losing a file that was there before, or e2undo gives it back with --undo.\n"
"Environment: TMPDIR (--delalloc's delayed data); ORLOV_FAULT and ORLOV_RACE\n"
"(tests only).\n",
		prog);
}

errcode_t options_parse(int argc, char **argv, struct options *o,
			const char **msg)
{
	struct io_fault fault;
	uint64_t v;
	int c, k;

	memset(o, 0, sizeof(*o));
	o->target = "/";
	o->xattrs = 1;
	o->fsck = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:vqhV", longopts, NULL)) != -1) {
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
		default:
			return *msg = "unknown option or missing argument", ORLOV_ERR_USAGE;
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
	o->fault = getenv("ORLOV_FAULT");
	o->race = getenv("ORLOV_RACE");
	if (o->race && !*o->race)
		o->race = NULL;
	if (io_guard_parse(o->fault, &fault))
		return *msg = "ORLOV_FAULT takes count, kill:N, eio:N or enospc:N", ORLOV_ERR_USAGE;
	if (argc - optind != 2)
		return *msg = "expected IMAGE and SOURCE", ORLOV_ERR_USAGE;
	if (o->target[0] != '/')
		return *msg = "--target must be an absolute path inside the image", ORLOV_ERR_USAGE;
	o->image = argv[optind];
	o->source = argv[optind + 1];
	return 0;
}
