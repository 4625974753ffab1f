/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orlov-mkfs's view of a mke2fs command line: what -d asks for, the same
 * command without it, and the installed mke2fs that runs it.
 */
#ifndef ORLOV_CLI_MKFS_ARGS_H
#define ORLOV_CLI_MKFS_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

struct words {
	char **v;	/* NULL-terminated once built */
	size_t n, cap;
};

struct mkfs_call {
	const char *name;	/* argv[0] for mke2fs: its name decides the
				   type (mkfs.ext4), "mke2fs" for orlov-mkfs */
	int usage_error;	/* an option mke2fs refuses: it says so */
	const char *root;	/* -d (the last one, as mke2fs keeps) */
	const char *device;	/* the first operand */
	int has_size;		/* a blocks-count operand */
	int quiet, verbose, force, noaction, super_only, version;
	uint64_t offset;	/* -E offset=: the filesystem's first byte */
	struct words out;	/* the command without -d, for mke2fs */
	size_t dev_at;		/* the device's index in @out */
};

/* Read @argv as mke2fs 1.47 does (its option letters, operands anywhere). */
errcode_t mkfs_args_parse(int argc, char **argv, struct mkfs_call *c);
void mkfs_args_free(struct mkfs_call *c);

/* @s split into words as a shell splits it (blanks; '...', "...", \),
 * without expanding anything.  EINVAL for an unterminated quote. */
errcode_t words_split(const char *s, struct words *w);
errcode_t words_add(struct words *w, const char *s);
void words_free(struct words *w);

/* The installed mke2fs: the first on PATH that is not this program (a
 * link in the directory that switches pipelines to it), else /usr/sbin's
 * or /sbin's.  ENOENT when there is none. */
errcode_t mkfs_find_mke2fs(const char *argv0, char **path);

#endif
