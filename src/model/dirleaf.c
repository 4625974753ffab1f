// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/dirleaf.h"
#include "model/dirblocks.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "model/dirent.h"

/*
 * With metadata_csum every leaf block ends in a struct ext2_dir_entry_tail
 * (ext4_initialize_dirent_tail): names live in the first @top bytes only,
 * the kernel's blocksize - csum_size.
 */
uint32_t dirleaf_top(const struct fs_state *fs)
{
	return fs->g.block_size -
	       (fs->g.metadata_csum ? sizeof(struct ext2_dir_entry_tail) : 0);
}

/* The tail's checksum is the image layer's: the layout alone here. */
void dirleaf_init_tail(const struct fs_state *fs, unsigned char *blk)
{
	unsigned char *t = blk + dirleaf_top(fs);

	if (!fs->g.metadata_csum)
		return;
	memset(t, 0, sizeof(struct ext2_dir_entry_tail));
	put_le16(t + offsetof(struct ext2_dir_entry_tail, det_rec_len),
		 sizeof(struct ext2_dir_entry_tail));
	put_le16(t + offsetof(struct ext2_dir_entry_tail, det_reserved_name_len),
		 EXT2_DIR_NAME_LEN_CSUM);
}

/* Block @b, taken (dirb_get, dirb_new) by the same operation: pinned in
 * memory (dirblocks.h). */
unsigned char *dirleaf_held(const struct dirbuf *d, uint32_t b)
{
	return d->b.blk[b];
}

/*
 * room[b], the largest record an entry of block @b can take, and first[b],
 * the first entry that can take the shortest one, from entry @from on:
 * the entries before it have less room than that (a name inserted goes
 * after them, so they never gain any), and a block filled in name order
 * is not walked again from its start for every name.
 */
void dirleaf_set_room(const struct fs_state *fs, struct dirbuf *d,
		      uint32_t b, uint32_t from)
{
	uint32_t bs = fs->g.block_size, top = dirleaf_top(fs), off = from;
	uint32_t best = 0, first = top;
	const unsigned char *blk = dirleaf_held(d, b);

	while (off + DE_HEAD <= top) {
		uint32_t rl = rec_len(blk + off, bs), r;

		if (rl < DE_HEAD || off + rl > top)
			break;	/* corrupt: nothing here can be used */
		r = entry_room(blk + off, bs);
		if (r > best)
			best = r;
		if (r >= DIR_REC_LEN(1) && first == top)
			first = off;
		off += rl;
	}
	d->room[b] = (uint16_t)(best > 65535 ? 65535 : best);
	d->first[b] = (uint16_t)(first > 65535 ? 65535 : first);
}

errcode_t dirleaf_grow(struct dirbuf *d)
{
	uint32_t cap;
	void *p;

	/* phys, room and first have the room the block store has */
	if (dir_nblocks(d) < d->b.cap)
		return 0;
	cap = d->b.cap ? d->b.cap * 2 : 4;
	p = realloc(d->phys, cap * sizeof(*d->phys));
	if (!p)
		return ENOMEM;
	d->phys = p;
	p = realloc(d->room, cap * sizeof(*d->room));
	if (!p)
		return ENOMEM;
	d->room = p;
	p = realloc(d->first, cap * sizeof(*d->first));
	if (!p)
		return ENOMEM;
	d->first = p;
	return dirb_reserve(&d->b, cap);
}

/* A new block: ext2_get_block for the directory, then one empty entry;
 * *out, its bytes. */
errcode_t dirleaf_new_block(struct fs_state *fs, struct dirbuf *d,
			    unsigned char **out)
{
	uint32_t bs = fs->g.block_size, top = dirleaf_top(fs), n = dir_nblocks(d);
	fsblk_t phys;
	unsigned char *blk;
	errcode_t err;

	err = dirleaf_grow(d);
	if (err)
		return err;
	err = bmap_get_block(fs, &d->map, 0, n, &phys);
	if (!err)
		err = dirb_new(fs, &d->b, &blk);
	if (err)
		return err;
	memset(blk, 0, bs);
	de_set_rec_len(blk, top > 65535 ? 65535 : top);
	dirleaf_init_tail(fs, blk);
	d->phys[n] = phys;
	d->room[n] = (uint16_t)(top > 65535 ? 65535 : top);
	d->first[n] = 0;
	if (out)
		*out = blk;
	return 0;
}

void dirleaf_set_entry(unsigned char *de, uint32_t ino, const char *name,
		       size_t len, unsigned int ftype, int filetype)
{
	de_set_inode(de, ino);
	de[DE_OFF(name_len)] = (unsigned char)len;
	de[DE_OFF(file_type)] = filetype ? (unsigned char)ftype : 0;
	memcpy(de + DE_OFF(name), name, len);
}

/* Put the name record at @de, after the live entry there if any (the
 * live one keeps its own record, the new one the rest). */
void dirleaf_insert_at(struct dirbuf *d, uint32_t bs, unsigned char *de,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype)
{
	if (de_inode(de)) {
		uint32_t own = DIR_REC_LEN(de_name_len(de));
		uint32_t rl = rec_len(de, bs);

		de_set_rec_len(de, own);
		de += own;
		memset(de, 0, DE_HEAD);
		de_set_rec_len(de, rl - own);
	}
	dirleaf_set_entry(de, ino, name, len, ftype, d->filetype);
}

/* The first entry of block @b with room for the name, as
 * ext2_add_link and ext4_find_dest_de search: *added 0 if none. */
errcode_t dirleaf_add(const struct fs_state *fs, struct dirbuf *d, uint32_t b,
		      const char *name, size_t len, uint32_t ino,
		      unsigned int ftype, int *added)
{
	uint32_t bs = fs->g.block_size, top = dirleaf_top(fs);
	unsigned char *blk;
	uint32_t off, reclen = DIR_REC_LEN(len);
	errcode_t err;

	*added = 0;
	if (d->room[b] < reclen)
		return 0;
	err = dirb_get(fs, &d->b, b, &blk);
	if (err)
		return err;
	for (off = d->first[b]; off + DE_HEAD <= top;
	     off += rec_len(blk + off, bs))
		if (entry_room(blk + off, bs) >= reclen)
			break;
	if (off + DE_HEAD > top)
		return 0;
	dirleaf_insert_at(d, bs, blk + off, name, len, ino, ftype);
	dirleaf_set_room(fs, d, b, d->first[b]);
	*added = 1;
	return 0;
}

errcode_t dirleaf_for_each(const unsigned char *buf, uint32_t size,
			   errcode_t (*fn)(void *arg, const char *name,
					   size_t len, uint32_t ino),
			   void *arg)
{
	uint32_t off;
	errcode_t err = 0;

	for (off = 0; !err && off + DE_HEAD <= size;) {
		const unsigned char *de = buf + off;
		uint32_t rl = rec_len(de, size);

		if (rl < DE_HEAD)
			break;
		if (de_inode(de))
			err = fn(arg, (const char *)de + DE_OFF(name),
				 de_name_len(de), de_inode(de));
		off += rl;
	}
	return err;
}
