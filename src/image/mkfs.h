/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --create: a new filesystem in IMAGE, made by the installed mke2fs. */
#ifndef ORLOV_MKFS_H
#define ORLOV_MKFS_H

#include <stdint.h>
#include <et/com_err.h>

struct strbuf;

struct mkfs_opts {
	const char *size;	/* mke2fs's fs-size: 64M, 2G, 100000 (blocks) */
	const char *fs_type;	/* -t; NULL: mkfs_fs_type()'s default */
	const char *block_size;	/* -b */
	const char *inodes;	/* -N */
	const char *extra;	/* more mke2fs options, split at blanks */
	int has_epoch;		/* SOURCE_DATE_EPOCH: fixed times, UUID, seed */
	uint32_t epoch;
	uint64_t seed;		/* --seed: another UUID from the same epoch */
	uint64_t digest;	/* of the tree and options: the UUID's */
	const char *label;	/* --label: -L (or tune2fs -L's, naming.h) */
	const char *uuid;	/* --uuid: -U, before the epoch's */
	int quiet;		/* mke2fs's messages to /dev/null (a size
				   tried, not asked for) */
	struct strbuf *msgs;	/* else, when set: mke2fs's messages of its
				   last run, collected (run_program) */
	uint64_t offset;	/* -E offset=: the filesystem's first byte */
	uint64_t limit;		/* the partition's bytes: a larger size is
				   refused before mke2fs runs; 0: none */
};

/* The type --create makes: ext4 unless told, as mkfs.ext4 and Debian's
 * and Ubuntu's installers make, the filesystem image builders ship. */
static inline const char *mkfs_fs_type(const struct mkfs_opts *m)
{
	return m->fs_type ? m->fs_type : "ext4";
}

/* @s reads as --create's SIZE: auto[...] (options.c checks the rest) or
 * mke2fs's fs-size, a number with an optional K, M, G, T or s suffix. */
int mkfs_size_word(const char *s);

/* The UUID (and directory hash seed) a reproducible run gives IMAGE. */
void mkfs_uuid(const struct mkfs_opts *m, int which, char out[37]);

/* Run mke2fs on @image.  Its own messages go to stderr, or into m->msgs.  At an offset
 * the file is neither truncated nor shortened: the rest is another's. */
errcode_t mkfs_create(const char *image, const struct mkfs_opts *m);

#endif
