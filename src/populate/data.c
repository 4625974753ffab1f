// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File data into the image as the page cache writes it (model/write.h):
 * front to back, each block mapped when first written, in runs of up to
 * RUN_BLOCKS; with --delalloc only reserved, and read from the source
 * again when the writeback maps it (source/reread.h): nothing of the
 * tree's data waits in TMPDIR, which need not hold it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "populate/data.h"
#include "model/ext4/inline.h"
#include "lib/orlov_err.h"
#include "populate/inode.h"
#include "populate/report.h"
#include "populate/wb_ahead.h"
#include "lib/spill.h"
#include "lib/util.h"

#define REC_WINDOW (64 << 10)	/* the writeback's reads of the records */

/*
 * A run spans files: the small files of a directory are allocated one
 * after the other, and one write for all of them costs a system call
 * where one per file cost one each.  Nothing else writes a data block,
 * and the run is out before the writeback and the commit.  A failure
 * names the file whose data the run starts with.
 */
static errcode_t run_flush(struct pop_ctx *c)
{
	errcode_t err = 0;

	if (c->data.run_len)
		err = image_write_blocks(c->img, c->data.run_start, c->data.run_len, c->data.run);
	c->data.run_len = 0;
	return err ? pop_fail(c, err, "writing data of", c->data.run_path.s) : 0;
}

static errcode_t run_add(struct pop_ctx *c, const struct src_entry *e,
			 fsblk_t phys, const unsigned char *blk)
{
	uint32_t bs = c->fs.g.block_size;
	errcode_t err;

	if (c->data.run_len && (phys != c->data.run_start + c->data.run_len ||
			   c->data.run_len == RUN_BLOCKS)) {
		err = run_flush(c);
		if (err)
			return err;
	}
	if (!c->data.run_len) {
		c->data.run_start = phys;
		sb_truncate(&c->data.run_path, 0);
		if (sb_append(&c->data.run_path, e->path, strlen(e->path)))
			return pop_fail(c, ENOMEM, "writing data of", e->path);
	}
	memcpy(c->data.run + (size_t)c->data.run_len * bs, blk, bs);
	c->data.run_len++;
	return 0;
}

/* ext4_da_write_begin: no block yet, only a reservation. */
static errcode_t delay_block(struct pop_ctx *c, const struct src_entry *e,
			     uint64_t lb)
{
	errcode_t err = ext4_da_reserve_block(&c->fs, &c->data.da, lb);

	return err ? pop_fail(c, err, "writing data of", e->path) : 0;
}

/* The writeback's pending run into the image. */
static errcode_t writeback_flush(struct pop_ctx *c)
{
	errcode_t err = 0;

	if (c->data.wb_len)
		err = image_write_blocks(c->img, c->data.wb_phys,
					 c->data.wb_len, c->data.run);
	c->data.wb_len = 0;
	return err;
}

/* The writeback's sink: @n blocks of @d from @lb on, read from the
 * source by its note, go to the image at @phys.  Small files written back
 * one after the other are adjacent in the image: they join one run, one
 * write for many files. */
static errcode_t writeback_data(void *ctx, const struct delayed *d,
				uint32_t lb, fsblk_t phys, uint32_t n)
{
	struct pop_ctx *c = ctx;
	struct pop_data *p = &c->data;
	uint32_t bs = c->fs.g.block_size;
	errcode_t err = 0;

	while (!err && n) {
		uint32_t m;

		if (p->wb_len && (phys != p->wb_phys + p->wb_len ||
				  p->wb_len == RUN_BLOCKS))
			err = writeback_flush(c);
		if (err)
			break;
		if (!p->wb_len)
			p->wb_phys = phys;
		m = RUN_BLOCKS - p->wb_len < n ? RUN_BLOCKS - p->wb_len : n;
		/* a dry run writes nothing */
		if (c->mode != RUN_DRY &&
		    !(p->ahead && wb_ahead_read(p->ahead, d->note, d->note_len,
						p->run + (size_t)p->wb_len * bs,
						(size_t)m * bs,
						(uint64_t)lb * bs)))
			err = src_reread(&p->rr, d->note, d->note_len,
					 p->run + (size_t)p->wb_len * bs,
					 (size_t)m * bs, (uint64_t)lb * bs);
		if (err)
			return pop_fail(c, err, "reading",
					src_reread_path(&p->rr));
		p->wb_len += m;
		phys += m;
		lb += m;
		n -= m;
	}
	return err;
}

/* A file written back: its indirect blocks, and its inode's block map. */
static errcode_t writeback_done(void *ctx, const struct delayed *d)
{
	struct pop_ctx *c = ctx;
	struct ext2_inode_large in;
	errcode_t err = image_write_indirect(c->img, &c->fs, d->f);

	if (err || image_read_staged(c->img, d->ino, &in))
		return err;
	set_blocks(c, &in, d->f, inode_xattr_block(&in));
	return image_stage_inode(c->img, d->ino, &in);
}

static const struct writeback_sink sink_ops = {
	.data = writeback_data, .file_done = writeback_done,
};

errcode_t delay_keep(struct pop_ctx *c, struct ifile *f)
{
	struct pop_data *d = &c->data;
	size_t budget = c->o->stage_budget ? c->o->stage_budget :
			DELAYED_BUDGET;
	errcode_t err = delalloc_keep(&c->fs, &d->da, f);

	if (err || d->da.rec_len < budget)
		return err;
	if (!d->rec_open) {
		err = spill_open(&d->rec_fd, "delayed");
		if (err)
			return pop_fail_scratch(c, err, "creating");
		d->rec_open = 1;
	}
	err = spill_write(d->rec_fd, d->da.rec, d->da.rec_len, d->rec_len);
	if (err)
		return pop_fail_scratch(c, err, "writing");
	d->rec_len += d->da.rec_len;
	delalloc_records_taken(&d->da);
	return 0;
}

/* The scratch file's records read back through a window of
 * REC_WINDOW bytes, made larger for a record that does not fit. */
static errcode_t writeback_spilled(struct pop_ctx *c,
				   const struct writeback_sink *sink)
{
	struct pop_data *d = &c->data;
	uint64_t off = 0;
	size_t have = 0, used, want;
	errcode_t err = 0;

	while (!err && off < d->rec_len) {
		if (have == d->rec_win_cap &&
		    grow_array(&d->rec_win, &d->rec_win_cap, have + 1, 1,
			       REC_WINDOW))
			return ENOMEM;
		want = d->rec_win_cap - have;
		if (want > d->rec_len - off)
			want = (size_t)(d->rec_len - off);
		err = spill_read(d->rec_fd, d->rec_win + have, want, off);
		if (err)
			pop_fail_scratch(c, err, "reading");
		off += want;
		have += want;
		if (!err)
			err = ext4_writeback_records(&c->fs, &d->da, d->rec_win,
						     have, &used, sink);
		if (!err) {
			memmove(d->rec_win, d->rec_win + used, have - used);
			have -= used;
		}
	}
	/* a record cut short */
	return err ? err : have ? EIO : 0;
}

/* The recorded files, oldest first: those in the scratch file, then
 * those still in memory; @cur (at i_size @isize), when there is one,
 * last. */
static errcode_t writeback_all(struct pop_ctx *c, struct ifile *cur,
			       uint64_t isize,
			       const struct writeback_sink *sink)
{
	struct delalloc *da = &c->data.da;
	size_t used;
	errcode_t err;

	ext4_writeback_begin(&c->fs);
	/* without the thread (--jobs 1, or it could not start) the
	 * writeback is the same */
	if (c->mode != RUN_DRY && c->o->jobs > 1 &&
	    wb_ahead_start(&c->data.ahead, &c->in->src,
			   c->data.rec_open ? c->data.rec_fd : -1,
			   c->data.rec_len, da->rec, da->rec_len))
		c->data.ahead = NULL;
	err = writeback_spilled(c, sink);
	c->data.rec_len = 0;
	if (!err)
		err = ext4_writeback_records(&c->fs, da, da->rec, da->rec_len,
					     &used, sink);
	if (!err && used != da->rec_len)
		err = EIO;
	if (!err && cur)
		err = ext4_writeback_cur(&c->fs, da, cur, isize, sink);
	wb_ahead_stop(c->data.ahead);
	c->data.ahead = NULL;
	ext4_writeback_end(&c->fs, da);
	return err;
}

/* The last run out first: c->data.run is the writeback's buffer. */
static errcode_t writeback_begin(struct pop_ctx *c)
{
	return run_flush(c);
}

errcode_t writeback(struct pop_ctx *c)
{
	struct writeback_sink sink = sink_ops;
	errcode_t err = writeback_begin(c);

	sink.ctx = c;
	if (!err && c->data.da.queued)
		err = writeback_all(c, NULL, 0, &sink);
	if (!err)
		err = writeback_flush(c);
	return err ? pop_fail_at(c, err, "writing back delayed data to", c->o->image) : 0;
}

/* ext4_nonda_switch's writeback, before a page of @e (@f, at i_size
 * @isize). */
static errcode_t writeback_now(struct pop_ctx *c, const struct src_entry *e,
			       struct ifile *f, uint64_t isize)
{
	struct writeback_sink sink = sink_ops;
	errcode_t err = writeback_begin(c);

	sink.ctx = c;
	/* Part of this file is written back now, the rest later: with
	 * dioread_nolock its extents are unwritten until their writes
	 * complete (model/write.h), converted here, before the rest is
	 * mapped.  What ext4_nonda_switch then writes without delay is
	 * mapped unwritten at write_begin (ext4_get_block_unwritten) next
	 * to them, which is not modelled: put_block warns. */
	if (f->extents && delalloc_cur(&c->data.da)->n &&
	    kver_dioread_nolock(c->fs.kver, c->fs.g.block_size))
		c->data.pushed_ino = f->ino;
	if (!err)
		err = writeback_all(c, f, isize, &sink);
	if (!err)
		err = writeback_flush(c);
	c->res->writebacks++;
	return err ? pop_fail(c, err, "writing back delayed data before", e->path) : 0;
}

/*
 * Block @lb of @e read now, into *blk: a delayed file's block that
 * ext4_nonda_switch writes at once (near a full image), whose data was
 * left for the writeback.  RUN_BLOCKS are read at a time; holes read as
 * zeros, as the blocks built from the data ranges have them.
 */
static errcode_t block_now(struct pop_ctx *c, const struct src_entry *e,
			   uint64_t lb, const unsigned char **blk)
{
	struct pop_data *d = &c->data;
	uint32_t bs = c->fs.g.block_size;
	uint64_t at = lb * bs, size = (uint64_t)e->st.st_size;
	size_t n = (size_t)RUN_BLOCKS * bs;
	errcode_t err = 0;

	if (at < d->chunk_off || at - d->chunk_off >= d->chunk_len) {
		if (n > size - at)
			n = (size_t)(size - at);
		/* a dry run allocates by the ranges alone */
		if (c->mode != RUN_DRY)
			err = e->data->read(e, d->chunk, n, at);
		if (err)
			return pop_fail(c, err, "reading", e->path);
		d->chunk_len = (n + bs - 1) / bs * bs;
		memset(d->chunk + n, 0, d->chunk_len - n);
		d->chunk_off = at;
	}
	*blk = d->chunk + (at - d->chunk_off);
	return 0;
}

/* Map logical block @lb (UINT64_MAX: none yet) and queue its contents
 * (@blk; NULL with --delalloc, where it is read when needed).  @isize:
 * i_size when the kernel maps it (ext4's mballoc sizes its request by
 * it). */
static errcode_t put_block(struct pop_ctx *c, const struct src_entry *e,
			   struct ifile *f, uint64_t lb, uint64_t isize,
			   const unsigned char *blk)
{
	fsblk_t phys;
	errcode_t err;

	if (lb == UINT64_MAX)
		return 0;
	if (c->data.delalloc) {
		unsigned int possible = c->o->possible_cpus ?
					c->o->possible_cpus : c->o->cpus;
		int push, nonda = ext4_nonda_switch(&c->fs, &c->data.da, lb,
						    possible, &push);

		if (push) {
			err = writeback_now(c, e, f, isize);
			if (err)
				return err;
		}
		if (!nonda)
			return delay_block(c, e, lb);
		if (f->ino == c->data.pushed_ino && !c->res->unwritten_at)
			c->res->unwritten_at = source_path(c, e->path);
		err = block_now(c, e, lb, &blk);
		if (err)
			return err;
	}
	err = write_begin_block(&c->fs, f, (uint32_t)lb, isize, &phys);
	if (err)
		return pop_fail(c, err, "writing data of", e->path);
	return run_add(c, e, phys, blk);
}

/* With --delalloc, @e's note for the writeback, and no data read now. */
static errcode_t delay_start(struct pop_ctx *c, const struct src_entry *e,
			     struct ifile *f)
{
	struct pop_data *d = &c->data;
	errcode_t err = src_note(e, &d->note);

	if (!err)
		err = delalloc_start(&d->da, f->ino, d->note.s, d->note.len);
	d->chunk_len = 0;
	return err ? pop_fail(c, err, "reading", e->path) : 0;
}

/*
 * Write the data ranges front to back.  The kernel maps a block when a
 * write() first touches it, so blocks are allocated in logical order and
 * only where data is; a block shared by two ranges is written once.
 */
errcode_t copy_data(struct pop_ctx *c, const struct src_entry *e,
		    struct ifile *f)
{
	uint32_t bs = c->fs.g.block_size;
	uint64_t size = (uint64_t)e->st.st_size, off = 0, s, t;
	uint64_t end = 0;		/* end of the last data range */
	uint64_t cur = UINT64_MAX;	/* logical block being filled */
	uint64_t cur_isize = 0;		/* i_size when it is mapped */
	unsigned char *blk = c->xblock;
	size_t chunk_cap = (size_t)RUN_BLOCKS * bs;
	int defer = c->data.delalloc;
	errcode_t err;

	if (defer && (err = delay_start(c, e, f)))
		return err;
	while (off < size) {
		uint64_t r0;

		err = e->data->next_data(e, off, &s, &t);
		if (err)
			return pop_fail(c, err, "reading", e->path);
		if (s >= size || s >= t)
			break;
		r0 = s;
		while (s < t) {
			size_t n = (size_t)(t - s < chunk_cap ? t - s : chunk_cap);
			size_t k = 0;

			/* a dry run allocates by the ranges alone */
			err = c->mode == RUN_DRY || defer ? 0 :
			      e->data->read(e, c->data.chunk, n, s);
			if (err)
				return pop_fail(c, err, "reading", e->path);
			while (k < n) {
				uint64_t lb = (s + k) / bs;
				size_t in = (size_t)((s + k) % bs);
				size_t m = bs - in < n - k ? bs - in : n - k;

				if (lb != cur) {
					err = put_block(c, e, f, cur, cur_isize,
							defer ? NULL : blk);
					if (err)
						return err;
					if (!defer)
						memset(blk, 0, bs);
					cur = lb;
					cur_isize = write_isize_at(r0, end, s + k);
				}
				if (!defer)
					memcpy(blk + in, c->data.chunk + k, m);
				k += m;
			}
			s += n;
		}
		off = end = t;
	}
	err = put_block(c, e, f, cur, cur_isize, defer ? NULL : blk);
	if (err)
		return err;
	if (defer)
		delalloc_cur(&c->data.da)->size = size;
	/* a trailing hole is made with ftruncate */
	if (end < size)
		c->drv->truncate(&c->fs, f);
	err = image_write_indirect(c->img, &c->fs, f);
	return err ? pop_fail(c, err, "writing data of", e->path) : 0;
}

/*
 * ext4_da_write_inline_data_begin (delalloc) and
 * ext4_try_to_write_inline_data (nodelalloc): the first write_begin, the
 * file's first page, goes into the inode when its end fits
 * ext4_get_max_inline_size (the attributes already set, an inherited
 * ACL, count); the data then never needs a block.  Otherwise the inode
 * loses EXT4_STATE_MAY_INLINE_DATA and the file is written as any.  An
 * empty file gets no system.data.  A file with holes whose first page
 * would be inline is refused: its later writes (convert or grow) are not
 * modelled.
 */
errcode_t write_inline(struct pop_ctx *c, const struct src_entry *e,
		       struct ifile *f, struct ext2_inode_large *in, int *done)
{
	uint64_t size = (uint64_t)e->st.st_size, s = 0, t = 0, end;
	size_t vsize = 0;
	unsigned char *v;
	errcode_t err;
	int fits;

	*done = 0;
	if (!c->fs.g.inline_data || !f->ibody || !size)
		return 0;
	err = e->data->next_data(e, 0, &s, &t);
	if (err)
		return pop_fail(c, err, "reading", e->path);
	if (s >= size || s >= t)
		return 0;	/* no data at all: ftruncate alone */
	if (t > size)
		t = size;
	/* the first write_begin ends with its page or the data range */
	end = (s | (WRITE_PAGE - 1)) + 1;
	if (end > t)
		end = t;
	if (end > ext4_get_max_inline_size(f->ibody, f->ibody_size))
		return 0;
	if (s || t < size)
		return pop_fail(c, ORLOV_ERR_INLINE_SPARSE, "writing", e->path);
	err = ext4_prepare_inline_data(f->ibody, f->ibody_size, (size_t)t,
				       &fits);
	if (err)
		return pop_fail(c, err, "writing", e->path);
	if (!fits)
		return 0;
	*done = 1;
	if (c->mode == RUN_DRY)
		return 0;	/* a dry run allocates by the ranges alone */
	err = e->data->read(e, c->data.chunk, (size_t)t, 0);
	if (err)
		return pop_fail(c, err, "reading", e->path);
	/* ext4_write_inline_data: i_block first, then the value */
	memcpy(in->i_block, c->data.chunk,
	       t < EXT4_MIN_INLINE_DATA_SIZE ? (size_t)t :
					       EXT4_MIN_INLINE_DATA_SIZE);
	v = ext4_inline_value(f->ibody, f->ibody_size, &vsize);
	if (t > EXT4_MIN_INLINE_DATA_SIZE && v)
		memcpy(v, c->data.chunk + EXT4_MIN_INLINE_DATA_SIZE,
		       (size_t)t - EXT4_MIN_INLINE_DATA_SIZE);
	return 0;
}

