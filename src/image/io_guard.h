/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An I/O channel stacked on the image's own (unix, or undo over unix) that
 * makes the commit reversible: once io_guard_begin() is called, the first
 * write to any region saves what the region held, so that a failure half
 * way through the metadata writes can put every byte back
 * (io_guard_rollback) instead of leaving the image for e2fsck.  Blocks that
 * were all zeros cost no memory, so a fresh inode table is free to guard.
 *
 * It is also where tests inject faults (io_guard_parse; the test build's
 * ORLOV_FAULT, tests/orlov-populate-hooks):
 * every write, byte write and flush is one numbered operation, and so,
 * numbered apart, is every block read.
 */
#ifndef ORLOV_IO_GUARD_H
#define ORLOV_IO_GUARD_H

#include <ext2fs/ext2fs.h>

enum io_fault_kind { IO_FAULT_NONE, IO_FAULT_COUNT, IO_FAULT_KILL,
		     IO_FAULT_EIO, IO_FAULT_ENOSPC, IO_FAULT_EIO_READ,
		     IO_FAULT_FILL_KILL, IO_FAULT_FILL_EIO };

struct io_fault {
	enum io_fault_kind kind;
	unsigned long at;	/* 1-based operation number */
};

/* "count", "kill:N", "eio:N", "enospc:N" (the Nth write, byte write or
 * flush) or "eioread:N" (the Nth block read, numbered apart, from the
 * allocator state's loading on); "fillkill:N" or "filleio:N": the Nth
 * write of --create's copy into a partition (image_region_fill, which
 * writes past the guard); NULL or "" is no fault. */
errcode_t io_guard_parse(const char *spec, struct io_fault *f);

/* Wrap @backing (the channel takes it over and closes it). */
errcode_t io_guard_wrap(io_channel backing, const struct io_fault *f,
			io_channel *out);
/* Byte writes refused, so that libext2fs writes the primary superblock
 * whole (write_primary_superblock's fallback): with metadata_csum, a kill
 * between its changed ranges and its checksum would leave it invalid. */
void io_guard_whole_super(io_channel ch);
/* From now on, save each region before its first overwrite. */
void io_guard_begin(io_channel ch);
/* Write every saved region back, newest save first, and flush.  The
 * injected fault, being spent, does not fire again. */
errcode_t io_guard_rollback(io_channel ch);

/* One operation the channel does not see (a write to a copy of the
 * image): numbered, and faulted, as the channel's own. */
errcode_t io_guard_tick(io_channel ch);

/*
 * An image file written in place (@fd, the channel's byte 0 at @base in
 * it): every hole a write of the run fills is remembered, so that a run
 * that fails (out of host space, say) gives the file back its holes and
 * its size, and the host its space.  io_guard_note_holes remembers the
 * holes of file bytes [off, off + len) a fallocate is about to fill.
 */
errcode_t io_guard_track_holes(io_channel ch, int fd, unsigned long long base);
/* From here on the channel reads and writes the file @path (a copy of
 * the image, made before the run wrote anything) instead. */
errcode_t io_guard_switch(io_channel ch, const char *path);
/* Every few MiB the run writes through the channel, their writeback to
 * the disk under @fd (the image file) is started, not waited for. */
void io_guard_write_behind(io_channel ch, int fd);
errcode_t io_guard_note_holes(io_channel ch, unsigned long long off,
			      unsigned long long len);
/* The run failed and every block in use is as it was: the remembered
 * holes punched again, the file cut to its old size.  (A channel that
 * is not a guard: nothing.) */
errcode_t io_guard_give_back(io_channel ch);
/* Blocks in use may point at what the run wrote (a rollback failed):
 * give nothing back. */
void io_guard_keep(io_channel ch);

struct io_capture;

/* While on, writes go to copies (capture.h: in memory up to @bytes of
 * io_guard_capture_budget, 0 its default, then in a spill file; reads
 * see them), for a journal or a copy to commit; flushes do nothing.
 * io_guard_take_captured hands the blocks over (NULL: none), in the order
 * first written, and reads see the disk again; capture_free frees them. */
void io_guard_capture(io_channel ch, int on);
void io_guard_capture_budget(io_channel ch, size_t bytes);
struct io_capture *io_guard_take_captured(io_channel ch);

#endif
