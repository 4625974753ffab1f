// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dir.h"
#include "orlov_err.h"
#include "util.h"





/* ext2_rec_len_from_disk for block sizes up to 64 KiB */
static uint32_t rec_len(const unsigned char *de, uint32_t bs)
{
	uint32_t len = get_le16(de + 4);

	if (len == 65535 || len == 0)
		return bs > 65535 ? 65536 : len;
	return len;
}

/* How big a new name record the entry at @de could take. */
static uint32_t entry_room(const unsigned char *de, uint32_t bs)
{
	uint32_t rl = rec_len(de, bs);

	if (!get_le32(de))
		return rl;
	return rl - DIR_REC_LEN(de[6]);
}

static uint16_t block_room(const unsigned char *blk, uint32_t bs)
{
	uint32_t off = 0, best = 0;

	while (off + 8 <= bs) {
		uint32_t rl = rec_len(blk + off, bs), r;

		if (rl < 8 || off + rl > bs)
			break;	/* corrupt: nothing here can be used */
		r = entry_room(blk + off, bs);
		if (r > best)
			best = r;
		off += rl;
	}
	return (uint16_t)(best > 65535 ? 65535 : best);
}

void dirbuf_init(struct dirbuf *d, uint32_t ino, uint32_t ipg, int filetype)
{
	memset(d, 0, sizeof(*d));
	ifile_init(&d->map, ino, ipg);
	d->filetype = filetype;
}

void dirbuf_release(const struct fs_state *fs, struct dirbuf *d)
{
	ifile_release(fs, &d->map);
	free(d->data);
	free(d->phys);
	free(d->room);
	memset(d, 0, sizeof(*d));
}

static errcode_t grow(struct dirbuf *d, uint32_t bs)
{
	uint32_t cap;
	void *p;

	if (d->nblocks < d->cap)
		return 0;
	cap = d->cap ? d->cap * 2 : 4;
	p = realloc(d->data, (size_t)cap * bs);
	if (!p)
		return ENOMEM;
	d->data = p;
	p = realloc(d->phys, cap * sizeof(*d->phys));
	if (!p)
		return ENOMEM;
	d->phys = p;
	p = realloc(d->room, cap * sizeof(*d->room));
	if (!p)
		return ENOMEM;
	d->room = p;
	d->cap = cap;
	return 0;
}

errcode_t dirbuf_add_block(struct dirbuf *d, uint32_t bs, uint32_t phys,
			   const unsigned char *data)
{
	errcode_t err = grow(d, bs);

	if (err)
		return err;
	memcpy(d->data + (size_t)d->nblocks * bs, data, bs);
	d->phys[d->nblocks] = phys;
	d->room[d->nblocks] = block_room(data, bs);
	d->nblocks++;
	return 0;
}

/* A new block: ext2_get_block for the directory, then one empty entry. */
static errcode_t new_block(struct fs_state *fs, struct dirbuf *d)
{
	uint32_t bs = fs->g.block_size, phys;
	unsigned char *blk;
	errcode_t err;

	err = grow(d, bs);
	if (err)
		return err;
	err = bmap_get_block(fs, &d->map, 0, d->nblocks, &phys);
	if (err)
		return err;
	blk = d->data + (size_t)d->nblocks * bs;
	memset(blk, 0, bs);
	put_le16(blk + 4, bs > 65535 ? 65535 : bs);
	d->phys[d->nblocks] = phys;
	d->room[d->nblocks] = (uint16_t)(bs > 65535 ? 65535 : bs);
	d->nblocks++;
	return 0;
}

static void set_entry(unsigned char *de, uint32_t ino, const char *name,
		      size_t len, unsigned int ftype, int filetype)
{
	put_le32(de, ino);
	de[6] = (unsigned char)len;
	de[7] = filetype ? (unsigned char)ftype : 0;
	memcpy(de + 8, name, len);
}

errcode_t dir_make_empty(struct fs_state *fs, struct dirbuf *d,
			 uint32_t parent_ino)
{
	uint32_t bs = fs->g.block_size;
	unsigned char *blk;
	errcode_t err = new_block(fs, d);

	if (err)
		return err;
	blk = d->data;
	put_le16(blk + 4, DIR_REC_LEN(1));
	set_entry(blk, d->map.ino, ".", 1, EXT2_FT_DIR, d->filetype);
	put_le16(blk + 12 + 4, bs - 12);
	set_entry(blk + 12, parent_ino, "..", 2, EXT2_FT_DIR, d->filetype);
	d->room[0] = block_room(blk, bs);
	return 0;
}

errcode_t dir_add_link(struct fs_state *fs, struct dirbuf *d,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, reclen = DIR_REC_LEN(len);
	uint32_t b, off;
	unsigned char *blk, *de;
	errcode_t err;

	if (len > EXT2_NAME_LEN)
		return ORLOV_ERR_NAME_TOO_LONG;
	for (b = 0; b < d->nblocks; b++)
		if (d->room[b] >= reclen)
			break;
	if (b == d->nblocks) {
		err = new_block(fs, d);
		if (err)
			return err;
	}
	blk = d->data + (size_t)b * bs;
	for (off = 0; off + 8 <= bs; off += rec_len(blk + off, bs)) {
		de = blk + off;
		if (entry_room(de, bs) >= reclen)
			break;
	}
	if (off + 8 > bs)
		return ORLOV_ERR_CORRUPT;
	de = blk + off;
	if (get_le32(de)) {
		/* Split: the live entry keeps its own record, we take the rest. */
		uint32_t own = DIR_REC_LEN(de[6]);
		uint32_t rl = rec_len(de, bs);

		put_le16(de + 4, own);
		de += own;
		memset(de, 0, 8);
		put_le16(de + 4, rl - own);
	}
	set_entry(de, ino, name, len, ftype, d->filetype);
	d->room[b] = block_room(blk, bs);
	return 0;
}

int dir_lookup(const struct dirbuf *d, uint32_t bs, const char *name,
	       size_t len, uint32_t *ino)
{
	uint32_t b, off;

	for (b = 0; b < d->nblocks; b++) {
		const unsigned char *blk = d->data + (size_t)b * bs;

		for (off = 0; off + 8 <= bs;) {
			const unsigned char *de = blk + off;
			uint32_t rl = rec_len(de, bs);

			if (rl < 8)
				break;
			if (get_le32(de) && de[6] == len && !memcmp(de + 8, name, len)) {
				if (ino)
					*ino = get_le32(de);
				return 1;
			}
			off += rl;
		}
	}
	return 0;
}
