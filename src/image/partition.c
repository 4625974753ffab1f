// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The filesystem's place in a disk image: the partition table read with
 * libblkid's partition probing (GPT and MBR, logical partitions too),
 * the partition picked by number, GPT name or PARTUUID.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <ext2fs/ext2fs.h>

#include "image/partition.h"
#include "lib/orlov_err.h"

/* The image's bytes: a file's size, a device's. */
static errcode_t image_bytes(const char *path, uint64_t *bytes)
{
	blk64_t n;
	errcode_t err = ext2fs_get_device_size2(path, 512, &n);

	*bytes = (uint64_t)n * 512;
	return err;
}

/* Does partition @par answer to @sel (its number, GPT name, PARTUUID)? */
static int partition_is(blkid_partition par, const char *sel)
{
	const char *name = blkid_partition_get_name(par);
	const char *uuid = blkid_partition_get_uuid(par);

	if (sel[strspn(sel, "0123456789")] == '\0')
		return (long long)blkid_partition_get_partno(par) == atoll(sel);
	return (name && !strcmp(name, sel)) ||
	       (uuid && !strcasecmp(uuid, sel));
}

static errcode_t find_partition(const char *path, const char *sel,
				struct image_region *r)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	blkid_partlist ls;
	errcode_t err = ORLOV_ERR_NO_PARTITION;
	int i, n;

	if (!pr)
		return errno ? (errcode_t)errno : ORLOV_ERR_NO_PART_TABLE;
	/* the table alone: a filesystem signature at the start of a disk
	 * (a protective MBR's neighbour) must not hide it */
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	ls = blkid_probe_get_partitions(pr);
	n = ls ? blkid_partlist_numof_partitions(ls) : -1;
	if (n < 0)
		err = ORLOV_ERR_NO_PART_TABLE;
	for (i = 0; i < n; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);

		if (!par || !partition_is(par, sel))
			continue;
		/* libblkid counts in 512-byte sectors whatever the disk's */
		r->offset = (uint64_t)blkid_partition_get_start(par) * 512;
		r->size = (uint64_t)blkid_partition_get_size(par) * 512;
		r->partno = (unsigned int)blkid_partition_get_partno(par);
		err = 0;
		break;
	}
	blkid_free_probe(pr);
	return err;
}

errcode_t image_region_find(const char *path, const struct image_where *w,
			    struct image_region *r)
{
	uint64_t bytes;
	errcode_t err;

	memset(r, 0, sizeof(*r));
	if (w->partition)
		return find_partition(path, w->partition, r);
	r->offset = w->offset;
	if (!r->offset)
		return 0;
	/* a missing image is --create's to make (or the open's to report) */
	err = image_bytes(path, &bytes);
	if (err == ENOENT)
		return 0;
	if (err)
		return err;
	return r->offset >= bytes ? ORLOV_ERR_OFFSET_PAST_END : 0;
}

const char *image_region_io(const struct image_region *r, char *buf,
			    size_t size)
{
	if (!r || !r->offset)
		return NULL;
	snprintf(buf, size, "offset=%llu", (unsigned long long)r->offset);
	return buf;
}

char *image_region_name(const char *path, const struct image_region *r)
{
	char *s;
	size_t n;

	if (!r || !r->offset)
		return strdup(path);
	n = strlen(path) + 32;
	s = malloc(n);
	if (s)
		snprintf(s, n, "%s?offset=%llu", path,
			 (unsigned long long)r->offset);
	return s;
}

errcode_t image_region_fits(const struct image_region *r, uint64_t bytes)
{
	return r && r->size && bytes > r->size ? ORLOV_ERR_FS_PAST_PARTITION : 0;
}
