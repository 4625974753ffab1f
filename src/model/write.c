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
		ext4_discard_inode_pa(fs, &f->mb);
}

errcode_t delalloc_start(struct delalloc *da, uint32_t ino)
{
	struct delayed *d;

	if (grow_array(&da->dl, &da->cap, da->n + 1, sizeof(*da->dl), 256))
		return ENOMEM;
	d = &da->dl[da->n++];
	memset(d, 0, sizeof(*d));
	d->ino = ino;
	d->spill = da->spill_len;
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
	struct delayed *d = delalloc_cur(da);

	if (grow_array(&d->lb, &d->cap, d->n + 1, sizeof(*d->lb), 4))
		return ENOMEM;
	d->lb[d->n++] = (uint32_t)lb;
	da->spill_len += fs->g.block_size;
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
static errcode_t writeback_file(struct fs_state *fs, struct delayed *d,
				struct ifile *f,
				const struct writeback_sink *sink)
{
	uint32_t bs = fs->g.block_size, bpp = WRITE_PAGE / bs, cap = 2048;
	errcode_t err = 0;
	size_t i;

	for (i = 0; !err && i < d->n;) {
		uint32_t l = d->lb[i], n = 1, got;
		fsblk_t phys;

		while (i + n < d->n && n < cap && d->lb[i + n] == l + n)
			n++;
		err = bmap_map_blocks(fs, f, 1, l, n, &phys, &got);
		if (err)
			break;
		cap = got < n && (l + got) % bpp ? bpp - (l + got) % bpp : 2048;
		/* ext4_da_update_reserve_space */
		percpu_counter_add(&fs->mb->dirty, -(int64_t)got);
		if (got)
			err = sink->data(sink->ctx, d->spill + (uint64_t)i * bs,
					 phys, got);
		i += got;
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
	ext4_discard_inode_pa(fs, &d->f->mb);
	return err ? err : sink->file_done(sink->ctx, d);
}

errcode_t ext4_writeback(struct fs_state *fs, struct delalloc *da,
			 const struct writeback_sink *sink)
{
	errcode_t err = 0;
	size_t k;

	if (!da->n)
		return 0;
	fs->mb->writeback = 1;
	for (k = 0; !err && k < da->n; k++)
		err = writeback_closed(fs, &da->dl[k], sink);
	fs->mb->writeback = 0;
	return err;
}

static void delayed_free(const struct fs_state *fs, struct delayed *d)
{
	if (d->f)
		ifile_release(fs, d->f);
	free(d->f);
	free(d->lb);
}

errcode_t ext4_writeback_sb(struct fs_state *fs, struct delalloc *da,
			    struct ifile *cur, uint64_t isize,
			    const struct writeback_sink *sink)
{
	size_t k, last = da->n - 1;
	struct delayed *d = &da->dl[last];
	errcode_t err = 0;

	fs->mb->writeback = 1;
	for (k = 0; !err && k < last; k++)
		err = writeback_closed(fs, &da->dl[k], sink);
	if (!err) {
		cur->mb.i_size = isize;
		err = writeback_file(fs, d, cur, sink);
	}
	fs->mb->writeback = 0;
	for (k = 0; k < last; k++)
		delayed_free(fs, &da->dl[k]);
	da->dl[0] = *d;
	da->dl[0].n = 0;
	da->dl[0].spill = 0;
	da->n = 1;
	da->spill_len = 0;
	return err;
}

void delalloc_free(const struct fs_state *fs, struct delalloc *da)
{
	size_t i;

	for (i = 0; i < da->n; i++)
		delayed_free(fs, &da->dl[i]);
	free(da->dl);
	da->dl = NULL;
	da->n = da->cap = 0;
}
