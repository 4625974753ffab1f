/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every run of the engine reads from and how far it goes: the part
 * of a run's state (ctx.h) that populate.c, create.c and preflight.c,
 * which prepare the runs, need.
 */
#ifndef ORLOV_POPULATE_INPUTS_H
#define ORLOV_POPULATE_INPUTS_H

#include <stdint.h>

#include "populate/populate.h"
#include "image/image.h"
#include "source/source.h"

/* What a run goes as far as: the first pass (sizing an image for
 * --create auto), the write pass without a byte written (--dry-run), or
 * all of it. */
enum run_mode { RUN_CHECK, RUN_DRY, RUN_WRITE };

/* What every run reads from: kept across the runs of --create auto. */
struct inputs {
	struct source src;	/* SOURCE: a directory or an archive */
	struct devtable dt;	/* --devtable */
	struct devtable *dtp;	/* &dt, or NULL without one */
	const char *path;	/* the image opened: IMAGE, or ... */
	char *tmp;		/* --create's new image until it is renamed */
	char *image;		/* IMAGE, a final symlink followed */
	int image_fd;		/* --create: IMAGE's flock, or -1 */
	int tmp_fd;		/* --create: @tmp's flock, or -1 */
	struct file_id skip[3];	/* the image's own files: not walked */
	size_t nskip;
	uint64_t digest;	/* --create: of the tree and options, for the
				   UUID (0: none) */
	struct image_region region;	/* the filesystem's place in IMAGE */
	struct image_region place;	/* --create in a partition or at an
					   offset: the region the scratch image
					   goes to at the commit (offset and
					   size 0: none) */
};

#endif
