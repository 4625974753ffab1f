/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liborlov: what orlov-populate(1) does, called instead of run.
 *
 *	struct orlov_options o;
 *	struct orlov_result r = { .size = sizeof(r) };
 *	long err;
 *
 *	orlov_options_init(&o);
 *	o.create = "64M";
 *	err = orlov_populate("disk.img", "rootfs/", &o, &r);
 *	if (err)
 *		fprintf(stderr, "%s while %s %s\n", orlov_strerror(err),
 *			r.what, r.path ? r.path : "");
 *	orlov_result_free(&r);
 *
 * The image is the one the command line makes with the same options,
 * byte for byte.  The library prints nothing and never exits: an error
 * is the returned code (an errno value, a libext2fs code or one of
 * orlov-populate's own, all com_err codes that orlov_strerror() names)
 * with what was being done and on which path in the result.
 *
 * Both structures start with their size, so that they can grow: a program
 * built against an older header passes its smaller structures and the
 * library reads and writes only that much.  In the options, a zero or
 * NULL member is the command line's default.
 *
 * Link with `pkg-config --libs orlov`.
 *
 * Threads: every function may be called from several threads at once,
 * each call on its own image (two calls on one image: the second is
 * refused as the image of another writer, as between two processes).
 * What the calls share with the process is never changed under another
 * thread: the options are parsed in the call's own memory, without
 * getopt (optind and optarg stay the caller's); the umask is read, not
 * set; libext2fs's mount-table
 * check and its --undo globals are taken under a lock (calls with --undo
 * run one after another); libselinux's log callback is swapped under a
 * lock while a --file-contexts file is read; the programs a call runs
 * (mke2fs, e2fsck) get no descriptor but 0, 1 and 2, and an image's
 * lock is dropped, not just closed, so that another thread's child
 * cannot keep it.  The library sets no signal handler, no locale, no
 * com_err hook, no environment variable and never changes the working
 * directory.  Not covered, being the caller's: its
 * own getmntent() or libselinux calls in another thread during
 * a call (they share state the library uses), and its fork()s, whose
 * children may inherit a descriptor libext2fs opens without
 * close-on-exec.
 */
#ifndef ORLOV_ORLOV_H
#define ORLOV_ORLOV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* orlov_options.flags: the command line's switches of the same names */
#define ORLOV_NO_XATTRS		(1u << 0)	/* --no-xattrs */
#define ORLOV_NO_FSCK		(1u << 1)	/* --no-fsck */
#define ORLOV_ATOMIC		(1u << 2)	/* --atomic */
#define ORLOV_IN_PLACE		(1u << 3)	/* --in-place */
#define ORLOV_FORCE		(1u << 4)	/* --force (with create) */
#define ORLOV_MERGE		(1u << 5)	/* --merge */
#define ORLOV_ROOT_ATTRS	(1u << 6)	/* --root-attrs */
#define ORLOV_DRY_RUN		(1u << 7)	/* --dry-run */
#define ORLOV_ALL_ROOT		(1u << 8)	/* --all-root */
#define ORLOV_SQUASH_PERMS	(1u << 9)	/* --squash-perms */
#define ORLOV_DELALLOC		(1u << 10)	/* --delalloc */
#define ORLOV_NO_DELALLOC	(1u << 11)	/* --no-delalloc */

struct orlov_options {
	size_t size;		/* sizeof(struct orlov_options): set by
				   orlov_options_init() */
	unsigned int flags;	/* ORLOV_* above */
	/* Strings as the options of orlov-populate(1) take them; NULL: the
	 * option not given. */
	const char *target;		/* --target DIR inside the image */
	const char *create;		/* --create SIZE|auto[+MARGIN] */
	const char *fs_type;		/* --fs-type ext2|ext3|ext4 */
	const char *block_size;		/* --block-size 1024|2048|4096 */
	const char *inodes;		/* --inodes N */
	const char *mkfs_options;	/* --mkfs-options "ARGS" */
	const char *label;		/* --label LABEL */
	const char *uuid;		/* --uuid UUID */
	const char *partition;		/* --partition N|LABEL|UUID */
	const char *offset;		/* --offset BYTES */
	const char *kernel;		/* --kernel RELEASE */
	const char *driver;		/* --driver ext2|ext4 */
	const char *policy;		/* --policy orlov|oldalloc */
	const char *topdir;		/* --topdir hash|random */
	const char *seed;		/* --seed N */
	const char *cpus;		/* --cpus N|up */
	const char *block_colour;	/* --block-colour N */
	const char *rotational;		/* --rotational yes|no */
	const char *uid_map;		/* --uid-map FROM:TO[:COUNT],... */
	const char *gid_map;		/* --gid-map FROM:TO[:COUNT],... */
	const char *root_owner;		/* --root-owner UID:GID */
	const char *devtable;		/* --devtable FILE */
	const char *file_contexts;	/* --file-contexts FILE */
	const char *undo;		/* --undo FILE */
	const char *trace;		/* --trace FILE */
	/* Further options of orlov-populate(1), one word each as on its
	 * command line, NULL-terminated; for those this structure has no
	 * member for yet.  Options only, read after the members: "--NAME",
	 * "--NAME=VALUE", "--NAME" "VALUE" (NAME or an abbreviation of one
	 * option), and the short options ("-t" "DIR", "-tDIR", "-qv").  A
	 * word that is no option ("IMAGE", "-", "--") is refused: IMAGE
	 * and SOURCE are orlov_populate()'s arguments.  -v, -q and --json
	 * change nothing (the library prints nothing), --help and
	 * --version are refused. */
	const char *const *args;
	/* The timestamps (SOURCE_DATE_EPOCH): with has_source_date_epoch,
	 * this value; without, the environment's as the command line
	 * reads it. */
	int has_source_date_epoch;
	unsigned long long source_date_epoch;
};

struct orlov_result {
	size_t size;		/* sizeof(struct orlov_result): set by the
				   caller */
	/* On error (all NULL on success; free with orlov_result_free()): */
	char *what;		/* what was being done: "reading directory" */
	char *path;		/* on which path (image, source or file) */
	char *usage;		/* an invalid option: which and why */
	/* On success: the figures of the command line's summary. */
	unsigned long long entries;	/* entries copied */
	unsigned long long bytes;	/* bytes of file data */
	unsigned long long inodes_used;
	unsigned long long blocks_used;	/* of block_size bytes */
	unsigned long long free_inodes;	/* free before the run */
	unsigned long long free_blocks;
	unsigned int block_size;
	unsigned int groups_used;	/* block groups that got an inode */
	double seconds;
	/* Warnings the command line prints, on success: */
	char *in_place;		/* the image was written in place: why */
	char *racy_at;		/* --delalloc: the file from which the
				   layout is not necessarily the kernel's
				   (written back while being written, to
				   unwritten extents), or NULL */
	int mount_unknown;	/* no mount table to check the image against */
	unsigned int stale_removed;	/* stale copies of killed runs removed */
	/* On error: the words of the program or library that failed
	 * (mke2fs's messages, libselinux's), on one line, or NULL.  The
	 * library prints nothing: they are here instead. */
	char *detail;
};

/* Zero (every option its default) and set the size. */
void orlov_options_init(struct orlov_options *opts);

/* Fill @image (an ext2/ext3/ext4 image file, or with opts->create one to
 * make) from @source (a directory, or an archive libarchive reads)
 * with @opts (NULL: every option its default).  Returns 0 or an error
 * code, with @res filled in either way (@res may be NULL).  The image is
 * as it was before the call on error.  The library never calls getopt:
 * optind, optarg and opterr are left as they were. */
long orlov_populate(const char *image, const char *source,
		    const struct orlov_options *opts, struct orlov_result *res);

/* The message of an error code orlov_populate() returned. */
const char *orlov_strerror(long err);

/* Free the strings of @res and set them to NULL (@res may be NULL). */
void orlov_result_free(struct orlov_result *res);

/* The library's version, "0.1.0". */
const char *orlov_version(void);

#ifdef __cplusplus
}
#endif

#endif
