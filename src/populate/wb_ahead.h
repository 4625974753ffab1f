/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The writeback's reader ahead: a thread that goes through the delayed
 * files' records in the writeback's order and reads the small files'
 * data from the source (source/reread.h), while the writeback maps the
 * files before them.  Each such file costs four system calls (open,
 * fstat, pread, close) that the writeback then leaves to the other CPU;
 * while the reader is behind, wb_ahead_read reads the files after it
 * rather than wait.  Only an optimisation: what it has not read, or
 * could not, the writeback reads itself (and reports any error there).
 */
#ifndef ORLOV_POPULATE_WB_AHEAD_H
#define ORLOV_POPULATE_WB_AHEAD_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

struct source;
struct wb_ahead;

/* Start on the records in @rec_fd's first @rec_len bytes (none when
 * @rec_len is 0), then the @mem_len bytes at @mem, which must stay as
 * they are until wb_ahead_stop. */
errcode_t wb_ahead_start(struct wb_ahead **out, const struct source *src,
			 int rec_fd, uint64_t rec_len,
			 const unsigned char *mem, size_t mem_len);
/* @len bytes at @off of the file @note names, when the reader has read it
 * (zeros past its end): 1, else 0 (the caller reads them).  Files must be
 * asked for in the records' order; one that is not next is not had. */
int wb_ahead_read(struct wb_ahead *a, const void *note, size_t nlen,
		  void *buf, size_t len, uint64_t off);
void wb_ahead_stop(struct wb_ahead *a);

#endif
