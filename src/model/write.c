// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/write.h"
#include "lib/util.h"

uint64_t write_isize_at(uint64_t range_start, uint64_t prev_end, uint64_t pos)
{
	uint64_t piece = pos & ~(uint64_t)(WRITE_PAGE - 1);

	return piece > range_start ? piece : prev_end;
}

errcode_t write_begin_block(struct fs_state *fs, struct ifile *f, uint32_t lb,
			    uint64_t isize, fsblk_t *phys)
{
	/* ext4's mballoc sizes its request by i_size */
	f->mb.i_size = isize;
	return bmap_get_block(fs, f, 1, lb, phys);
}

void ext2_write_truncate(struct fs_state *fs, struct ifile *f)
{
	ext2_discard_reservation(fs, &f->bi);
}

void ext4_write_truncate(struct fs_state *fs, struct ifile *f)
{
	(void)fs;
	(void)f;
}

void ext2_write_release(struct fs_state *fs, struct ifile *f, int delayed)
{
	(void)delayed;
	ext2_discard_reservation(fs, &f->bi);
}

void ext4_write_release(struct fs_state *fs, struct ifile *f, int delayed)
{
	if (!delayed)
		ext4_discard_preallocations(fs, &f->mb);
}

errcode_t delalloc_start(struct delalloc *da, uint32_t ino,
			 const void *note, size_t len)
{
	struct delayed *d = &da->cur;

	d->ino = ino;
	d->size = 0;
	d->f = NULL;
	d->nrun = 0;
	d->n = 0;
	d->note_len = 0;
	if (len && grow_array(&d->note_buf, &d->note_cap, len, 1, 256))
		return ENOMEM;
	if (len)
		memcpy(d->note_buf, note, len);
	d->note = d->note_buf;
	d->note_len = len;
	return 0;
}

/*
 * A record: flags, inode number, i_size, the number of runs, then each
 * run as the blocks skipped since the previous one ended and its
 * length, then the note's length and the note, every number in 7-bit
 * groups, low first (a small file's record is under 10 bytes and its
 * note).
 */
#define REC_EXTENTS	0x1	/* EXTENTS_FL */
#define REC_REG		0x2	/* its extent tree's is_reg */
#define REC_KEPT	0x4	/* its allocation is the next of @kept */
#define REC_FLAGS	0x7
#define NUM_MAX		10	/* bytes of a 64-bit number */

static unsigned char *put_num(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* The number at @p (@len bytes) into *v: its bytes, 0 when @p ends
 * before it does, SIZE_MAX when it is no number. */
static size_t get_num(const unsigned char *p, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i == NUM_MAX || (i == NUM_MAX - 1 && p[i] > 1))
			return SIZE_MAX;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return 0;
}

/* @f into @kept: preallocations point at its mb_inode. */
static errcode_t keep_whole(struct delalloc *da, struct ifile *f)
{
	struct ifile *k;

	if (grow_array(&da->kept, &da->kept_cap, da->nkept + 1,
		       sizeof(*da->kept), 16) || !(k = malloc(sizeof(*k))))
		return ENOMEM;
	free(f->ibody);
	f->ibody = NULL;
	*k = *f;
	mb_inode_moved(&k->mb);
	memset(f, 0, sizeof(*f));
	da->kept[da->nkept++] = k;
	return 0;
}

errcode_t delalloc_keep(const struct fs_state *fs, struct delalloc *da,
			struct ifile *f)
{
	struct delayed *d = &da->cur;
	unsigned int flags = (f->extents ? REC_EXTENTS : 0) |
			     (f->ext.is_reg ? REC_REG : 0);
	uint64_t end = 0;
	unsigned char *p;
	size_t i;

	if (!d->n)
		return 0;
	if (grow_array(&da->rec, &da->rec_cap,
		       da->rec_len + (5 + 2 * d->nrun) * NUM_MAX + d->note_len,
		       1, 4096))
		return ENOMEM;
	if (!ifile_is_new(fs, f)) {
		if (keep_whole(da, f))
			return ENOMEM;
		flags |= REC_KEPT;
	}
	p = put_num(da->rec + da->rec_len, flags);
	p = put_num(p, d->ino);
	p = put_num(p, d->size);
	p = put_num(p, d->nrun);
	for (i = 0; i < d->nrun; i++) {
		p = put_num(p, d->run[i].lb - end);
		p = put_num(p, d->run[i].n);
		end = (uint64_t)d->run[i].lb + d->run[i].n;
	}
	p = put_num(p, d->note_len);
	if (d->note_len)
		memcpy(p, d->note, d->note_len);
	p += d->note_len;
	da->rec_len = (size_t)(p - da->rec);
	da->queued += d->n;
	return 0;
}

int ext4_nonda_switch(const struct fs_state *fs, struct delalloc *da,
		      uint64_t lb, unsigned int possible, int *push)
{
	uint64_t page = lb * fs->g.block_size / WRITE_PAGE;
	/* EXT4_FREECLUSTERS_WATERMARK: percpu_counter_batch, of the online
	 * CPUs, times nr_cpu_ids, the possible ones; 0 without CONFIG_SMP
	 * (batch 0) */
	int64_t free, dirty, wm = 4 * (int64_t)fs->freeb.batch * (int64_t)possible;

	*push = 0;
	if (da->nonda_ino == delalloc_cur(da)->ino && da->nonda_page == page)
		return da->nonda;
	da->nonda_ino = delalloc_cur(da)->ino;
	da->nonda_page = page;
	free = percpu_counter_read_positive(&fs->freeb);
	dirty = percpu_counter_read_positive(&fs->mb->dirty);
	*push = dirty && free < 2 * dirty;
	da->nonda = 2 * free < 3 * dirty || free < dirty + wm;
	return da->nonda;
}

errcode_t ext4_da_reserve_block(struct fs_state *fs, struct delalloc *da,
				uint64_t lb)
{
	struct delayed *d = &da->cur;
	struct delayed_run *r = d->nrun ? &d->run[d->nrun - 1] : NULL;

	if (r && (uint64_t)r->lb + r->n == lb && r->n < UINT32_MAX) {
		r->n++;
	} else {
		if (grow_array(&d->run, &d->cap, d->nrun + 1, sizeof(*d->run),
			       4))
			return ENOMEM;
		d->run[d->nrun].lb = (uint32_t)lb;
		d->run[d->nrun++].n = 1;
	}
	d->n++;
	/* ext4_da_reserve_space */
	percpu_counter_add(&fs->mb->dirty, 1);
	return 0;
}

/*
 * Map @d's delayed blocks into @f and hand them to @sink, extent by
 * extent as ext4_writepages collects them: up to 2048 contiguous blocks
 * (MAX_WRITEPAGES_EXTENT_LEN).  When fewer are mapped and the rest
 * starts inside a page, the next request is the rest of that page alone
 * (mpage_process_page), then extents from the next page on.
 */
static errcode_t writeback_file(struct fs_state *fs, const struct delayed *d,
				struct ifile *f,
				const struct writeback_sink *sink)
{
	uint32_t bs = fs->g.block_size, bpp = WRITE_PAGE / bs, cap = 2048;
	uint32_t o = 0;		/* of run @r */
	errcode_t err = 0;
	size_t r = 0;

	while (!err && r < d->nrun) {
		uint32_t l = d->run[r].lb + o, left = d->run[r].n - o;
		uint32_t n = left < cap ? left : cap, got;
		fsblk_t phys;

		err = bmap_map_blocks(fs, f, 1, l, n, &phys, &got);
		if (err)
			break;
		cap = got < n && (l + got) % bpp ? bpp - (l + got) % bpp : 2048;
		/* ext4_da_update_reserve_space */
		percpu_counter_add(&fs->mb->dirty, -(int64_t)got);
		if (got)
			err = sink->data(sink->ctx, d, l, phys, got);
		o += got;
		if (o == d->run[r].n) {
			r++;
			o = 0;
		}
	}
	return err;
}

/* A closed file: all of it, then, nothing left reserved and no writer,
 * its preallocations go (ext4_da_update_reserve_space). */
static errcode_t writeback_closed(struct fs_state *fs, struct delayed *d,
				  const struct writeback_sink *sink)
{
	errcode_t err;

	d->f->mb.i_size = d->size;
	d->f->mb.closed = 1;
	err = writeback_file(fs, d, d->f, sink);
	if (!err)
		err = bmap_writes_done(fs, d->f);
	ext4_discard_preallocations(fs, &d->f->mb);
	return err ? err : sink->file_done(sink->ctx, d);
}

void ext4_writeback_begin(struct fs_state *fs)
{
	fs->mb->writeback = 1;
}

/* A record's first four numbers (flags, inode, i_size, runs) into @v:
 * the bytes they take, 0 when @p (@len bytes) ends before them, SIZE_MAX
 * when one is no number. */
static size_t record_head(const unsigned char *p, size_t len, uint64_t v[4])
{
	size_t k, at = 0, i;

	for (i = 0; i < 4; i++, at += k) {
		k = get_num(p + at, len - at, &v[i]);
		if (!k || k == SIZE_MAX)
			return k;
	}
	return at;
}

/* A record's note, its length at @at of @p (@len bytes): the end of the
 * record, 0 when @p ends before it, SIZE_MAX when the length is no
 * number. */
static size_t record_note(const unsigned char *p, size_t len, size_t at,
			  const unsigned char **note, size_t *note_len)
{
	uint64_t x;
	size_t k = get_num(p + at, len - at, &x);

	if (!k || k == SIZE_MAX)
		return k;
	at += k;
	if (x > len - at)
		return 0;
	*note = p + at;
	*note_len = (size_t)x;
	return at + (size_t)x;
}

/* The record at @p into @da->wb and *flags: *used its bytes, 0 when @p
 * ends before it does. */
static errcode_t record_read(struct delalloc *da, const unsigned char *p,
			     size_t len, size_t *used, unsigned int *flags)
{
	struct delayed *d = &da->wb;
	uint64_t v[4], end = 0, gap = 0, n = 0;
	size_t k, at = record_head(p, len, v), i;

	*used = 0;
	if (at == SIZE_MAX)
		return EINVAL;
	if (!at)
		return 0;
	if (v[0] & ~(uint64_t)REC_FLAGS || !v[1] || v[1] > UINT32_MAX)
		return EINVAL;
	/* two bytes a run at least: no room taken for a record not all
	 * there yet */
	if (v[3] > (len - at) / 2)
		return 0;
	if (grow_array(&d->run, &d->cap, (size_t)v[3], sizeof(*d->run), 4))
		return ENOMEM;
	d->n = 0;
	for (i = 0; i < v[3]; i++) {
		k = get_num(p + at, len - at, &gap);
		if (k && k != SIZE_MAX) {
			at += k;
			k = get_num(p + at, len - at, &n);
		}
		if (k == SIZE_MAX || (k && (!n || gap > UINT32_MAX ||
		    n > UINT32_MAX || end + gap + n > 1ULL << 32)))
			return EINVAL;
		if (!k)
			return 0;
		at += k;
		d->run[i].lb = (uint32_t)(end + gap);
		d->run[i].n = (uint32_t)n;
		end += gap + n;
		d->n += n;
	}
	at = record_note(p, len, at, &d->note, &d->note_len);
	if (at == SIZE_MAX)
		return EINVAL;
	if (!at)
		return 0;
	*flags = (unsigned int)v[0];
	d->ino = (uint32_t)v[1];
	d->size = v[2];
	d->nrun = (size_t)v[3];
	*used = at;
	return 0;
}

/* One recorded file, in its allocation: the one kept, or the new
 * inode's rebuilt. */
static errcode_t writeback_record(struct fs_state *fs, struct delalloc *da,
				  unsigned int flags,
				  const struct writeback_sink *sink)
{
	struct delayed *d = &da->wb;
	struct ifile own;
	errcode_t err;

	if (flags & REC_KEPT) {
		if (da->kept_next == da->nkept)
			return EINVAL;
		d->f = da->kept[da->kept_next];
		da->kept[da->kept_next++] = NULL;
	} else {
		ifile_init(&own, d->ino, fs->g.inodes_per_group);
		if (flags & REC_EXTENTS)
			ifile_use_extents(fs, &own, !!(flags & REC_REG));
		d->f = &own;
	}
	err = writeback_closed(fs, d, sink);
	da->written += d->n;
	/* its preallocations are gone: nothing points at it any more */
	ifile_release(fs, d->f);
	if (flags & REC_KEPT)
		free(d->f);
	d->f = NULL;
	return err;
}

errcode_t ext4_writeback_records(struct fs_state *fs, struct delalloc *da,
				 const unsigned char *p, size_t len,
				 size_t *used,
				 const struct writeback_sink *sink)
{
	unsigned int flags = 0;
	errcode_t err = 0;
	size_t k;

	*used = 0;
	while (!err && *used < len) {
		err = record_read(da, p + *used, len - *used, &k, &flags);
		if (err || !k)
			break;
		*used += k;
		err = writeback_record(fs, da, flags, sink);
	}
	return err;
}

errcode_t ext4_writeback_cur(struct fs_state *fs, struct delalloc *da,
			     struct ifile *cur, uint64_t isize,
			     const struct writeback_sink *sink)
{
	struct delayed *d = &da->cur;
	errcode_t err;

	cur->mb.i_size = isize;
	err = writeback_file(fs, d, cur, sink);
	if (!err)
		err = bmap_writes_done(fs, cur);
	d->nrun = 0;
	d->n = 0;
	return err;
}

/* The recorded files not written back (a failed run): theirs to free. */
static void kept_free(const struct fs_state *fs, struct delalloc *da)
{
	size_t i;

	for (i = da->kept_next; i < da->nkept; i++) {
		ifile_release(fs, da->kept[i]);
		free(da->kept[i]);
	}
	da->nkept = da->kept_next = 0;
}

errcode_t delalloc_record_note(const unsigned char *p, size_t len,
			       size_t *used, const unsigned char **note,
			       size_t *note_len, uint64_t *size)
{
	uint64_t v[4], x;
	size_t k, at = record_head(p, len, v), i;

	*used = 0;
	if (at == SIZE_MAX)
		return EINVAL;
	if (!at)
		return 0;
	if (v[3] > (len - at) / 2)
		return 0;
	/* each run's two numbers, skipped */
	for (i = 0; i < 2 * v[3]; i++, at += k) {
		k = get_num(p + at, len - at, &x);
		if (k == SIZE_MAX)
			return EINVAL;
		if (!k)
			return 0;
	}
	at = record_note(p, len, at, note, note_len);
	if (at == SIZE_MAX)
		return EINVAL;
	*size = v[2];
	*used = at;
	return 0;
}

void ext4_writeback_end(struct fs_state *fs, struct delalloc *da)
{
	ext4_end_io_frees(fs);
	fs->mb->writeback = 0;
	kept_free(fs, da);
	da->rec_len = 0;
	da->queued = da->written = 0;
}

void delalloc_free(const struct fs_state *fs, struct delalloc *da)
{
	kept_free(fs, da);
	free(da->kept);
	free(da->rec);
	free(da->cur.run);
	free(da->cur.note_buf);
	free(da->wb.run);
	memset(da, 0, sizeof(*da));
}
