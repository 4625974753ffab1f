/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one step between the options as given and a run, for the command
 * line and the library alike: what does not go together refused, the
 * defaults filled, and what was chosen recorded with why, so that the
 * caller can say it.  The kernel release and what follows from the
 * options alone are filled before the run (populate_resolve); the driver
 * and delayed allocation, when not given, are the image's own mount's,
 * known once the image is (populate_resolve_mount, called by each run:
 * --create makes the image first).
 */
#ifndef ORLOV_POPULATE_RESOLVE_H
#define ORLOV_POPULATE_RESOLVE_H

#include <et/com_err.h>
#include "populate/opts.h"

/* What a run was made with, and whether each was given or defaulted. */
struct populate_choice {
	int known;		/* a run resolved the mount (not before) */
	enum fs_driver driver;
	int driver_given;	/* --driver; else the image's mount decided */
	int delalloc;
	int delalloc_given;	/* --delalloc or --no-delalloc; else the mount */
	uint32_t kver;		/* the kernel release modelled */
	int arm64;		/* --kernel 6.1-arm64 */
	int kver_given;		/* --kernel; else the default (6.1) */
};

/* @o checked (a usage error with *msg the reason) and its defaults that
 * need no image filled. */
errcode_t populate_resolve(struct populate_opts *o, const char **msg);

/* The driver and delayed allocation not given: what mounting an image
 * without options gives (@ext4: it has a feature only ext4 mounts;
 * @delalloc: its default mount options leave delayed allocation on);
 * recorded in @ch with the rest of @o's choice. */
void populate_resolve_mount(struct populate_opts *o, int ext4, int delalloc,
			    struct populate_choice *ch);

/* @ch in words: "ext4 driver (the image's mount), with delayed
 * allocation (the image's mount), Linux 6.1.192 (the default)". */
void populate_choice_text(const struct populate_choice *ch, char *buf,
			  size_t len);

#endif
