// SPDX-License-Identifier: GPL-2.0-or-later
/* Options that do not go together: a table of rules, each with the
 * message that says why, apart from the parser so that either can grow. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "populate/conflict.h"
#include "model/kver.h"
#include "source/selabel.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *options_conflict(const struct populate_opts *p)
{
	const struct { int bad; const char *msg; } rules[] = {
		{ p->delalloc && p->driver_set && p->driver != DRIVER_EXT4,
		  "--delalloc is the ext4 driver's: give --driver ext4" },
		{ p->delalloc && !p->driver_set &&
		  (p->policy == POLICY_OLDALLOC || p->topdir == TOPDIR_RANDOM ||
		   !kver_ext4_modelled(p->kver)),
		  "--delalloc is the ext4 driver's: it has no oldalloc, no random top-level directories" },
		{ p->rotational == ROTATIONAL_NO && p->driver_set &&
		  p->driver != DRIVER_EXT4,
		  "--rotational no changes only the ext4 driver's mballoc: give --driver ext4" },
		{ p->possible_cpus && !p->cpus,
		  "--possible-cpus goes with --cpus N: a uniprocessor kernel has one CPU" },
		{ p->possible_cpus && p->possible_cpus < p->cpus,
		  "--possible-cpus counts the online CPUs too: give at least --cpus N" },
		{ p->possible_cpus && p->driver_set && p->driver != DRIVER_EXT4,
		  "--possible-cpus changes only the ext4 driver's delayed allocation: give --driver ext4" },
		{ p->driver == DRIVER_EXT4 && p->policy == POLICY_OLDALLOC,
		  "--policy oldalloc is the ext2 driver's: ext4 has no oldalloc" },
		{ p->driver == DRIVER_EXT4 && p->topdir == TOPDIR_RANDOM,
		  "--topdir random is the ext2 driver's: ext4 always hashes the name" },
		{ p->mb_optimize_scan && p->driver_set &&
		  p->driver != DRIVER_EXT4,
		  "--mb-optimize-scan is an ext4 mount option: give --driver ext4" },
		{ p->mkfs.fs_type && !strcmp(p->mkfs.fs_type, "ext4") &&
		  p->driver_set && p->driver != DRIVER_EXT4,
		  "--fs-type ext4 makes an image only the ext4 driver writes: give --driver ext4 or none" },
		/* the default type has extents: the ext2 driver refuses it,
		 * and said so only after mke2fs, as a missing feature */
		{ p->create && !p->mkfs.fs_type &&
		  ((p->driver_set && p->driver != DRIVER_EXT4) ||
		   p->policy == POLICY_OLDALLOC || p->topdir == TOPDIR_RANDOM),
		  "--create makes ext4 unless told: give --fs-type ext2 or ext3 for the ext2 driver (--driver ext2, --policy oldalloc, --topdir random)" },
		{ p->atomic && p->undo,
		  "--atomic never changes IMAGE in place: no --undo needed" },
		{ p->atomic && p->in_place,
		  "--atomic writes a copy, --in-place the image itself: give one" },
		{ !p->create && (p->mkfs.fs_type || p->mkfs.block_size ||
				 p->mkfs.inodes || p->mkfs.extra),
		  "--fs-type, --block-size, --inodes and --mkfs-options go with --create SIZE" },
		{ p->force && !p->create,
		  "--force goes with --create (it lets mke2fs overwrite a file that holds no filesystem)" },
		/* the image is opened at its first byte: one made at an
		 * offset would be refused after mke2fs as no filesystem */
		{ p->mkfs.extra && strstr(p->mkfs.extra, "offset="),
		  "--mkfs-options -E offset=: give --offset or --partition" },
		{ p->where.partition && p->where.offset,
		  "--partition gives the offset: not with --offset" },
		{ p->atomic && (p->where.partition || p->where.offset),
		  "--atomic copies a whole image file: not with --partition or --offset (an ext3 journal or --undo keeps the commit safe there)" },
		{ p->meta.all_root && (p->meta.uid.n || p->meta.gid.n),
		  "--all-root leaves nothing for --uid-map or --gid-map to map" },
		{ p->create && p->undo,
		  "--create makes a new filesystem: nothing for --undo to give back" },
		{ p->dry_run && (p->undo || p->atomic || p->in_place),
		  "--dry-run writes nothing: not with --undo, --atomic or --in-place" },
		{ p->meta.file_contexts && !selabel_supported(),
		  "--file-contexts: this build has no libselinux (install libselinux1-dev and configure again)" },
		{ p->meta.file_contexts && !p->xattrs,
		  "--file-contexts stores labels as extended attributes: not with --no-xattrs" },
	};
	size_t i;

	for (i = 0; i < NELEM(rules); i++)
		if (rules[i].bad)
			return rules[i].msg;
	return NULL;
}
