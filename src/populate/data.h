/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_DATA_H
#define ORLOV_POPULATE_DATA_H

#include "populate/ctx.h"

/* Write @e's data ranges into @f, front to back. */
errcode_t copy_data(struct ctx *c, const struct src_entry *e, struct ifile *f);
/* --delalloc: the writeback at the end of the write pass (nothing to do
 * without). */
errcode_t writeback(struct ctx *c);

#endif
