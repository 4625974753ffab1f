/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --label and --uuid on an existing image, as tune2fs -L and -U set them
 * (with --create, mke2fs -L and -U do: mkfs.c).  The new name is set in
 * the open image's superblock and goes out with the run's commit, so a
 * kill leaves the old name with the old tree or the new with the new.
 */
#ifndef ORLOV_NAMING_H
#define ORLOV_NAMING_H

#include <et/com_err.h>

struct image;

/* The most bytes a label has (s_volume_name, no NUL needed). */
#define NAMING_LABEL_MAX 16

/* @arg as --uuid takes it (e2fsprogs' spelling): a UUID, random, time or
 * clear?  1 when it is. */
int naming_uuid_valid(const char *arg);

/*
 * Set @label and/or @uuid (either may be NULL) in @img.  A UUID change
 * of an image with metadata_csum but not metadata_csum_seed would need
 * every checksum rewritten: ORLOV_ERR_UUID_CSUM, nothing changed.  The
 * group descriptors' checksums (uninit_bg) follow the new UUID.
 */
errcode_t image_set_naming(struct image *img, const char *label,
			   const char *uuid);

#endif
