/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The blocks a journal or copy commit changes, captured before any is
 * written (io_guard_capture): in memory up to a budget, the rest in a
 * spill file, each at its own place there (its number in the capture
 * times the block size).  A large tree's commit is mostly new inode-table
 * blocks, a quarter of a KiB per inode: kept whole in memory, the commit
 * of a million inodes would take a quarter of a GiB.
 */
#ifndef ORLOV_CAPTURE_H
#define ORLOV_CAPTURE_H

#include <ext2fs/ext2fs.h>

struct io_capture;

/* An empty capture of @bs-byte blocks holding at most @budget bytes in
 * memory (0: the default, 8 MiB). */
errcode_t capture_new(size_t bs, size_t budget, struct io_capture **out);
void capture_free(struct io_capture *c);

/* How many blocks, in the order first captured, and the @i-th's number. */
size_t capture_count(const struct io_capture *c);
unsigned long long capture_blk(const struct io_capture *c, size_t i);
/* The position of block @blk in the capture, if it is there. */
int capture_find(const struct io_capture *c, unsigned long long blk,
		 size_t *i);

/* Block @blk's copy in memory at *@data, to be changed: captured now
 * (read from @real) if it was not.  *@data is valid until the next call. */
errcode_t capture_block(struct io_capture *c, io_channel real,
			unsigned long long blk, unsigned char **data);
/* Blocks @i to @i + @cnt - 1 of the capture, as captured, into @buf. */
errcode_t capture_read(struct io_capture *c, size_t i, size_t cnt,
		       unsigned char *buf);

#endif
