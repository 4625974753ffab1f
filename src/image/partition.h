/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where in IMAGE the filesystem lies: from its first byte, at a bare
 * offset (--offset), or in a partition of a GPT or MBR disk image
 * (--partition).  Every opening of the image (libext2fs, e2fsck, mke2fs,
 * the raw superblock check) goes through the one region found here, and
 * nothing is written outside it.
 */
#ifndef ORLOV_IMAGE_PARTITION_H
#define ORLOV_IMAGE_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

/* What the command line asked for. */
struct image_where {
	const char *partition;	/* N, a GPT partition name or a PARTUUID */
	uint64_t offset;	/* --offset BYTES (without --partition) */
};

/* What it is in the image. */
struct image_region {
	uint64_t offset;	/* the filesystem's first byte in IMAGE */
	uint64_t size;		/* the bytes it may take; 0: to IMAGE's end */
	unsigned int partno;	/* the partition's number; 0: none */
};

/* The region @w names in the image at @path: a partition by its number
 * (all digits), else by its GPT name or its PARTUUID (any case);
 * ORLOV_ERR_NO_PART_TABLE, ORLOV_ERR_NO_PARTITION, or
 * ORLOV_ERR_OFFSET_PAST_END for an offset at or past the image's end.
 * No partition and no offset: the whole image. */
errcode_t image_region_find(const char *path, const struct image_where *w,
			    struct image_region *r);

/* "offset=N", libext2fs's I/O option for @r (NULL at offset 0). */
const char *image_region_io(const struct image_region *r, char *buf,
			    size_t size);

/* @path as libext2fs and e2fsck name a filesystem at an offset,
 * "PATH?offset=N", or @path itself; malloc'd, NULL when out of memory. */
char *image_region_name(const char *path, const struct image_region *r);

/* ORLOV_ERR_FS_PAST_PARTITION when a filesystem of @bytes does not fit in
 * @r (a partition); 0 when it does or @r has no end of its own. */
errcode_t image_region_fits(const struct image_region *r, uint64_t bytes);

/* What libblkid finds in @r of the image at @path other than ext2/3/4:
 * its TYPE ("vfat", "swap"...) into @type, "" when nothing else (no
 * signature, or an ext2/3/4 filesystem, which --create may replace). */
errcode_t image_region_probe(const char *path, const struct image_region *r,
			     char *type, size_t n);

/* The image file @from (--create's, made apart) written at @offset of the
 * disk @disk open as @to: its data, and its holes as zeros (punched in a
 * file).  The host's room for it is allocated first (ORLOV_ERR_NO_HOST_SPACE
 * before any write), then the old bytes it overwrites are saved in a
 * rollback file next to the disk (ORLOV_ERR_ROLLBACK_SPACE when there is
 * no room for it), synced; the old primary superblock is zeroed before
 * the rest and the new one written last, each synced.  A failed write
 * puts the old bytes back; killed, the rollback file stays for the next
 * run (image_rollback_pending).  @fault: ORLOV_FAULT (io_guard_parse). */
errcode_t image_region_fill(const char *disk, int to, const char *from,
			    uint64_t offset, const char *fault);
/* A rollback file a killed image_region_fill left for the disk image
 * @path: with @apply, its old bytes put back into the disk (the caller
 * holds the disk's lock), the file removed, *applied counted (@applied
 * may be NULL); else ORLOV_ERR_ROLLBACK_PENDING.  None: 0. */
errcode_t image_rollback_pending(const char *path, int apply,
				 unsigned int *applied);

#endif
