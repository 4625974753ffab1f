/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A regular file's data read again once the walk has left it: ext4's
 * delayed allocation maps a file's blocks only at the writeback, after
 * the whole tree is written, and its data is read then from the source
 * rather than kept in a scratch file the size of the tree.  The walk
 * gives each file a note (src_data_ops.note): its place in the source and
 * what it was then; the reader opens the file the note names and refuses
 * one that is no longer the file the walk saw (ORLOV_ERR_SOURCE_CHANGED),
 * as tar refuses a file changed while it was read.
 */
#ifndef ORLOV_REREAD_H
#define ORLOV_REREAD_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#include "lib/util.h"

struct source;
struct src_entry;

/*
 * A note: what the walk saw of the file (host: device, inode, size, and
 * the modification and change times; archive: its member's number in the
 * tree, and size), then its path below the source root.  Packed with
 * memcpy, as a record keeps it unaligned.
 */
struct src_note_id {
	uint64_t dev, ino, size;
	int64_t mtime, ctime;
	uint32_t mtime_ns, ctime_ns;
};

/* @e's note into @note (emptied first).  ENOTSUP: @e's reader cannot read
 * it again (its data must be read now). */
errcode_t src_note(const struct src_entry *e, struct strbuf *note);

struct src_reread {
	const struct source *src;
	int root;		/* the source directory, once needed */
	int dir;		/* the directory @dir_path names, or -1 */
	struct strbuf dir_path;	/* below the source root: the files of one
				   directory come one after the other, each
				   then opened there, not looked up from
				   the root again */
	int fd;			/* the file of @cur */
	struct strbuf cur;	/* its note */
	struct strbuf path;	/* the last note's path, for messages */
};

void src_reread_init(struct src_reread *r, const struct source *src);
/* @len bytes at @off of the file @note (@nlen bytes) names, zeros past
 * its end. */
errcode_t src_reread(struct src_reread *r, const void *note, size_t nlen,
		     void *buf, size_t len, uint64_t off);
/* The path (below the source root) of the note last read from. */
static inline const char *src_reread_path(const struct src_reread *r)
{
	return r->path.s ? r->path.s : "";
}
void src_reread_end(struct src_reread *r);

#endif
