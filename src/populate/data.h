/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_DATA_H
#define ORLOV_POPULATE_DATA_H

#include "populate/ctx.h"

/* Write @e's data ranges into @f, front to back. */
errcode_t copy_data(struct pop_ctx *c, const struct src_entry *e, struct ifile *f);
/* ext4's inline data: the file's bytes in the inode (@in's i_block and
 * system.data in @f's attribute space), *done; 0 with *done 0: written
 * as any (copy_data).  ORLOV_ERR_INLINE_SPARSE for a small file with
 * holes. */
errcode_t write_inline(struct pop_ctx *c, const struct src_entry *e,
		       struct ifile *f, struct ext2_inode_large *in, int *done);
/* --delalloc: the current file, @f, closed: its delayed blocks wait for
 * the writeback in a record of a few bytes (model/write.h), the records
 * past a budget in a scratch file. */
errcode_t delay_keep(struct pop_ctx *c, struct ifile *f);
/* --delalloc: the writeback at the end of the write pass (nothing to do
 * without). */
errcode_t writeback(struct pop_ctx *c);

#endif
