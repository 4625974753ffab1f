/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File data as the page cache writes it (mm/filemap.c with fs/ext2 and
 * fs/ext4 of Linux 6.1): a block is mapped by the write_begin of the
 * first page piece that touches it, with i_size where write_end left it;
 * with ext4's delayed allocation (--delalloc) write_begin only reserves,
 * and the writeback at sync maps the delayed blocks file by file, in
 * runs.  Pure: the data itself is the caller's, found again at the
 * writeback through a note the caller gives each file.
 */
#ifndef ORLOV_WRITE_H
#define ORLOV_WRITE_H

#include "model/bmap.h"

#define WRITE_PAGE 4096u	/* the writing kernel's page size (x86) */

/* The page cache writes page by page: a block is mapped by the
 * write_begin of the first page piece that touches it, after write_end
 * has moved i_size past everything before that piece in its range.  The
 * replayer's write() calls end on page boundaries, so pieces are pages.
 * @range_start: the data range's start, @prev_end: the previous one's
 * end, @pos: the byte written. */
uint64_t write_isize_at(uint64_t range_start, uint64_t prev_end, uint64_t pos);

/* write_begin of logical block @lb of @f at i_size @isize, not delayed:
 * the block is mapped (allocated if new) to *phys. */
errcode_t write_begin_block(struct fs_state *fs, struct ifile *f, uint32_t lb,
			    uint64_t isize, fsblk_t *phys);

/* A trailing hole made with ftruncate: ext2_setsize ends in
 * __ext2_truncate_blocks, which discards the window even when the file
 * grows (a later attribute block then gets a new window of the goal
 * size, not a doubled one); ext4 keeps its preallocations. */
typedef void write_truncate_fn(struct fs_state *fs, struct ifile *f);
write_truncate_fn ext2_write_truncate, ext4_write_truncate;

/* The last close: the window goes back (ext2_release_file), the
 * preallocations go unless delayed blocks still need them
 * (ext4_release_file); a window must never outlive the file here.
 * @delayed: the file has blocks waiting for the writeback. */
typedef void write_release_fn(struct fs_state *fs, struct ifile *f,
			      int delayed);
write_release_fn ext2_write_release, ext4_write_release;

/* Delayed logical blocks lb .. lb + n - 1. */
struct delayed_run {
	uint32_t lb, n;
};

/* One file's delayed blocks: the file being written, or one read back
 * from its record for the writeback. */
struct delayed {
	uint32_t ino;
	uint64_t size;		/* i_size at writeback */
	struct ifile *f;	/* its allocation at writeback */
	struct delayed_run *run;	/* ascending, none adjacent */
	size_t nrun, cap;
	uint64_t n;		/* blocks in all */
	/* the caller's note of where the data is to be read (a source
	 * file's name and identity): a copy of its own in @note_buf for
	 * the file being written, in the record for one read back */
	const unsigned char *note;
	size_t note_len;
	unsigned char *note_buf;
	size_t note_cap;
};

/*
 * The files with delayed blocks, in the order they were dirtied, each in
 * a record of a few bytes (struct delayed packed: its number, size,
 * runs, EXTENTS_FL and the caller's note) while its allocation is a new
 * inode's, which the writeback rebuilds; only a file the page cache mapped blocks of (with
 * ext4_nonda_switch on), whose preallocations point at it, is kept
 * whole in @kept.  The records are @rec, oldest first; the caller may
 * take them out of memory (delalloc_records_taken) and hand them back,
 * in the same order, to the writeback.
 */
struct delalloc {
	struct delayed cur;	/* the file being written */
	unsigned char *rec;
	size_t rec_len, rec_cap;
	struct ifile **kept;	/* oldest first, from @kept_next on */
	size_t nkept, kept_cap, kept_next;
	uint64_t queued;	/* blocks of the recorded files */
	uint64_t written;	/* of them, written back so far */
	uint32_t nonda_ino;	/* the page ext4_nonda_switch last judged */
	uint64_t nonda_page;
	int nonda;
	struct delayed wb;	/* the record being written back */
};

/* A new file's delayed blocks: the current one.  @note (@len bytes) is
 * what the writeback hands back with them (struct delayed): the caller's
 * way to read their data then.  ENOMEM. */
errcode_t delalloc_start(struct delalloc *da, uint32_t ino,
			 const void *note, size_t len);
/* The file being written: the last started. */
static inline struct delayed *delalloc_cur(struct delalloc *da)
{
	return &da->cur;
}

/*
 * The current file, @f, closed: its delayed blocks wait for the
 * writeback in a record at the end of @da->rec, with @f's allocation
 * (moved into @kept when ifile_is_new says it cannot be rebuilt: @f is
 * then left empty).  A file with nothing delayed leaves no record.
 */
errcode_t delalloc_keep(const struct fs_state *fs, struct delalloc *da,
			struct ifile *f);

/* The caller took @da->rec's records (to a scratch file): @da keeps
 * none in memory from here on. */
static inline void delalloc_records_taken(struct delalloc *da)
{
	da->rec_len = 0;
}

/*
 * ext4_nonda_switch, once per page of logical block @lb of the current
 * file on a kernel of @possible CPUs (nr_cpu_ids: the online ones and
 * those that could be added, QEMU's -smp N,maxcpus=P; the counters'
 * batch is of the online ones): 1 when it writes without delaying (past
 * two thirds of the free space delayed, or within the watermark).
 * *push is set when delayed data passed half the free space: ext4 then
 * writes back every file before this page (try_to_writeback_inodes_sb
 * waits for it), and the caller must do so (ext4_writeback_cur) before
 * the page; the answer is still the one read before it, as the kernel's.
 */
int ext4_nonda_switch(const struct fs_state *fs, struct delalloc *da,
		      uint64_t lb, unsigned int possible, int *push);

/* ext4_da_write_begin of block @lb of the current file: no block, only a
 * reservation (ext4_da_reserve_space); its data is read at the writeback
 * (the file's note). */
errcode_t ext4_da_reserve_block(struct fs_state *fs, struct delalloc *da,
				uint64_t lb);

/* Where the writeback's blocks go. */
struct writeback_sink {
	/* @n delayed blocks of @d, from logical block @lb on, mapped to
	 * @phys on */
	errcode_t (*data)(void *ctx, const struct delayed *d, uint32_t lb,
			  fsblk_t phys, uint32_t n);
	/* @d's blocks are all mapped: its block map is final */
	errcode_t (*file_done)(void *ctx, const struct delayed *d);
	void *ctx;
};

/*
 * The writeback at sync or unmount, in the order the files were dirtied
 * (created): each run of delayed blocks (at most 2048,
 * MAX_WRITEPAGES_EXTENT_LEN) is mapped in as few requests as the indirect
 * blocks allow, by a writer that has closed the file; once nothing of it
 * is left reserved, its preallocations go.
 *
 * ext4_writeback_begin, then ext4_writeback_records over every record in
 * the order they were made (those the caller took first, then
 * @da->rec), then ext4_writeback_end, which forgets them.
 */
void ext4_writeback_begin(struct fs_state *fs);
/* The whole records at the start of @p (@len bytes), written back;
 * *used is how many bytes they took (0: the first is longer than @len,
 * or @len is 0). */
errcode_t ext4_writeback_records(struct fs_state *fs, struct delalloc *da,
				 const unsigned char *p, size_t len,
				 size_t *used,
				 const struct writeback_sink *sink);
void ext4_writeback_end(struct fs_state *fs, struct delalloc *da);

/* The note and i_size of the record at @p (@len bytes), read without
 * writing it back: for a reader of the data running ahead of the
 * writeback.  *used: the record's bytes, 0 when it ends past @len. */
errcode_t delalloc_record_note(const unsigned char *p, size_t len,
			       size_t *used, const unsigned char **note,
			       size_t *note_len, uint64_t *size);

/*
 * The writeback ext4_nonda_switch waits for: the flusher writes back
 * every dirty inode in the order they were dirtied, each whole (the
 * work is tagged): after the recorded files (as above, between
 * ext4_writeback_begin and ext4_writeback_end), this: the current file
 * @cur, up to i_size @isize, while its writer holds it open (its
 * preallocations stay; its block map is the caller's, who still writes
 * it).  What is written is forgotten: the current file has nothing
 * delayed from here on (its note stays).
 */
errcode_t ext4_writeback_cur(struct fs_state *fs, struct delalloc *da,
			     struct ifile *cur, uint64_t isize,
			     const struct writeback_sink *sink);

void delalloc_free(const struct fs_state *fs, struct delalloc *da);

#endif
