/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scratch file for what a run keeps beyond its memory budget: unlinked
 * at once in TMPDIR (or /tmp), so that nothing is left behind by a kill,
 * and read back by offset.  Its pages are the kernel's page cache, not
 * the process's memory.
 */
#ifndef ORLOV_SPILL_H
#define ORLOV_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#include "lib/errctx.h"

/* Where scratch files go: TMPDIR, or /tmp when it is unset or empty. */
const char *spill_dir(void);
/* A new unlinked scratch file, open read-write on *fd, named (while it
 * has a name) orlov-@what-XXXXXX. */
errcode_t spill_open(int *fd, const char *what);
/* All @len bytes at @off, or an error (EIO: the file ends before). */
errcode_t spill_read(int fd, void *buf, size_t len, uint64_t off);
errcode_t spill_write(int fd, const void *buf, size_t len, uint64_t off);
/* @err of a scratch file told as TMPDIR's, not as the source's or the
 * image's whose data it held: "... while @doing ("writing") the scratch
 * file in DIR (TMPDIR)", unless @ec holds an error already. */
errcode_t spill_error(struct errctx *ec, errcode_t err, const char *doing);

#endif
