/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the engine is asked to do: IMAGE, SOURCE and the choices that
 * shape the copy.  The command line (cli/options.c) fills it in.
 */
#ifndef ORLOV_POPULATE_OPTS_H
#define ORLOV_POPULATE_OPTS_H

#include <stdint.h>
#include "source/meta.h"
#include "image/mkfs.h"
#include "image/partition.h"

enum alloc_policy { POLICY_ORLOV, POLICY_OLDALLOC };
enum topdir_rule { TOPDIR_HASH, TOPDIR_RANDOM };
/* --driver: which driver mounts the image and places what is written */
enum fs_driver { DRIVER_EXT2, DRIVER_EXT4 };
/* --rotational: the disk's queue/rotational, which sets mballoc's
 * s_mb_max_linear_groups */
enum rotational { ROTATIONAL_YES, ROTATIONAL_NO };

/* How far a run is, for a progress line. */
struct populate_progress {
	uint64_t entries, total_entries;	/* written, and the tree's */
	uint64_t bytes, total_bytes;
	double seconds;		/* since the write pass began */
	int done;		/* the write pass is over (the last call) */
};

/*
 * What a run tells while it runs, for a caller that shows it (the
 * programs: cli/summary.c); the engine itself prints nothing.  Any member
 * may be NULL.
 */
struct populate_events {
	/* an entry written: its path in the image as the source has it
	 * (below --target), its inode and group */
	void (*entry)(void *cookie, const char *path, uint32_t ino,
		      uint32_t group);
	/* at most once a second while the write pass runs, then once with
	 * done set */
	void (*progress)(void *cookie, const struct populate_progress *p);
	/* an archive read into TMPDIR before anything else: @done 0 as it
	 * starts, 1 once it is in */
	void (*archive)(void *cookie, const char *source, const char *tmpdir,
			int done);
	void *cookie;
};

struct populate_opts {
	const char *image;
	const char *source;	/* the first of @layers */
	const char *const *layers;	/* SOURCE and the layers after it */
	size_t nlayers;
	int whiteouts;		/* OCI whiteouts: --whiteouts, or layers */
	const char *target;	/* directory inside the image, "/" by default */
	enum alloc_policy policy;
	enum topdir_rule topdir;
	uint64_t seed;		/* --seed, for --topdir random */
	unsigned int colour;	/* --block-colour: the writer's pid % 16 */
	unsigned int cpus;	/* --cpus: online CPUs, or CPUS_UP (0) */
	unsigned int possible_cpus;	/* --possible-cpus, 0: --cpus */
	uint32_t kver;		/* --kernel: the release modelled (model/kver.h);
				   0: populate_resolve() fills the default */
	int kver_default;	/* filled so by populate_resolve() */
	int arm64;		/* --kernel 6.1-arm64: unsigned char before 6.2 */
	enum fs_driver driver;
	int delalloc;		/* --delalloc: ext4 mounted with delayed allocation */
	enum rotational rotational;
	int mb_optimize_scan;	/* --mb-optimize-scan: MB_OPTIMIZE_SCAN_* */
	/* --driver and --delalloc / --no-delalloc given; else the mount
	 * without options decides, once the image is known
	 * (populate_resolve_mount) */
	int driver_set, delalloc_set;
	int verbosity;		/* -1 quiet, 0 summary, 1 one line per entry */
	const char *trace;	/* --trace FILE */
	const char *undo;	/* --undo FILE */
	int atomic;		/* --atomic: write a copy, rename it over IMAGE */
	int in_place;		/* --in-place: never a copy, even without a
				   journal */
	const char *fault;	/* a fault to inject (io_guard.h): set by the
				   test build only (ORLOV_TEST_HOOKS) */
	/* Called between the check pass and the write pass, when set: a
	 * test program's hook to change the source or the image there
	 * (tests/race-populate.c).  Never set by the shipped programs nor
	 * the library, so that no environment can make them run anything. */
	errcode_t (*between_passes)(void *cookie);
	void *between_cookie;
	const struct populate_events *events;	/* NULL: told nothing */
	size_t stage_budget;	/* the staged inodes' memory, for the test
				   build's ORLOV_STAGE_BUDGET; 0: the default */
	size_t dir_budget;	/* one directory's blocks in memory, for the
				   test build's ORLOV_DIR_BUDGET; 0: the
				   default (populate/dirspill.h) */
	int xattrs;		/* copy extended attributes (default on) */
	int fsck;		/* e2fsck -fn first (default on; --no-fsck) */
	int jobs;		/* --jobs: 2 reads the source ahead on a thread */
	int create;		/* --create SIZE: mke2fs first */
	int force;		/* --force: --create overwrites what is no
				   ext2/3/4 filesystem */
	int auto_size;		/* --create auto[+MARGIN] */
	unsigned int margin_pct;	/* auto+N%% */
	uint64_t margin_bytes;	/* auto+SIZE */
	int merge;		/* --merge: into directories IMAGE has */
	/* --casefold PATH...: directories of SOURCE made casefolded (+F),
	 * relative to it, "a/b" */
	const char **casefold;
	size_t ncasefold;
	int root_attrs;		/* --root-attrs: SOURCE's own onto the target */
	int dry_run;		/* --dry-run: no write, figures printed */
	int json;		/* --json: the summary as one JSON object */
	struct mkfs_opts mkfs;
	struct meta_rules meta;	/* --all-root, --uid-map, SOURCE_DATE_EPOCH */
	const char *devtable;	/* --devtable FILE */
	int root_owner;		/* --root-owner UID:GID given */
	uint32_t root_uid, root_gid;
	/* --partition N|LABEL|UUID, --offset BYTES: where in IMAGE */
	struct image_where where;
};

#endif
