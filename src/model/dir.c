// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/dir.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "model/dirent.h"
#include "model/dirhash.h"

/*
 * With metadata_csum every leaf block ends in a struct ext2_dir_entry_tail
 * (ext4_initialize_dirent_tail): names live in the first @top bytes only,
 * the kernel's blocksize - csum_size.
 */
static uint32_t leaf_top(const struct fs_state *fs)
{
	return fs->g.block_size -
	       (fs->g.metadata_csum ? sizeof(struct ext2_dir_entry_tail) : 0);
}

/* The tail's checksum is the image layer's: the layout alone here. */
static void init_tail(const struct fs_state *fs, unsigned char *blk)
{
	unsigned char *t = blk + leaf_top(fs);

	if (!fs->g.metadata_csum)
		return;
	memset(t, 0, sizeof(struct ext2_dir_entry_tail));
	put_le16(t + offsetof(struct ext2_dir_entry_tail, det_rec_len),
		 sizeof(struct ext2_dir_entry_tail));
	put_le16(t + offsetof(struct ext2_dir_entry_tail, det_reserved_name_len),
		 EXT2_DIR_NAME_LEN_CSUM);
}

/*
 * room[b], the largest record an entry of block @b can take, and first[b],
 * the first entry that can take the shortest one, from entry @from on:
 * the entries before it have less room than that (a name inserted goes
 * after them, so they never gain any), and a block filled in name order
 * is not walked again from its start for every name.
 */
static void set_room(const struct fs_state *fs, struct dirbuf *d, uint32_t b,
		     uint32_t from)
{
	uint32_t bs = fs->g.block_size, top = leaf_top(fs), off = from;
	uint32_t best = 0, first = top;
	const unsigned char *blk = d->data + (size_t)b * bs;

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
	free(d->first);
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
	p = realloc(d->first, cap * sizeof(*d->first));
	if (!p)
		return ENOMEM;
	d->first = p;
	d->cap = cap;
	return 0;
}

errcode_t dirbuf_add_block(const struct fs_state *fs, struct dirbuf *d,
			   fsblk_t phys, const unsigned char *data)
{
	uint32_t bs = fs->g.block_size;
	errcode_t err = grow(d, bs);

	if (err)
		return err;
	memcpy(d->data + (size_t)d->nblocks * bs, data, bs);
	d->phys[d->nblocks] = phys;
	set_room(fs, d, d->nblocks++, 0);
	return 0;
}

/* A new block: ext2_get_block for the directory, then one empty entry. */
static errcode_t new_block(struct fs_state *fs, struct dirbuf *d)
{
	uint32_t bs = fs->g.block_size, top = leaf_top(fs);
	fsblk_t phys;
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
	de_set_rec_len(blk, top > 65535 ? 65535 : top);
	init_tail(fs, blk);
	d->phys[d->nblocks] = phys;
	d->room[d->nblocks] = (uint16_t)(top > 65535 ? 65535 : top);
	d->first[d->nblocks] = 0;
	d->nblocks++;
	return 0;
}

static void set_entry(unsigned char *de, uint32_t ino, const char *name,
		      size_t len, unsigned int ftype, int filetype)
{
	de_set_inode(de, ino);
	de[DE_OFF(name_len)] = (unsigned char)len;
	de[DE_OFF(file_type)] = filetype ? (unsigned char)ftype : 0;
	memcpy(de + DE_OFF(name), name, len);
}

errcode_t dir_make_empty(struct fs_state *fs, struct dirbuf *d,
			 uint32_t parent_ino)
{
	uint32_t top = leaf_top(fs), dot = DIR_REC_LEN(1);
	unsigned char *blk;
	errcode_t err = new_block(fs, d);

	if (err)
		return err;
	blk = d->data;
	de_set_rec_len(blk, dot);
	set_entry(blk, d->map.ino, ".", 1, EXT2_FT_DIR, d->filetype);
	de_set_rec_len(blk + dot, top - dot);
	set_entry(blk + dot, parent_ino, "..", 2, EXT2_FT_DIR, d->filetype);
	set_room(fs, d, 0, 0);
	return 0;
}

/* Put the name record at @de, after the live entry there if any (the
 * live one keeps its own record, the new one the rest). */
static void insert_at(struct dirbuf *d, uint32_t bs, unsigned char *de,
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
	set_entry(de, ino, name, len, ftype, d->filetype);
}

/* The first entry of block @b with room for the name, as
 * ext2_add_link and ext4_find_dest_de search; 0 if none. */
static int add_to_block(const struct fs_state *fs, struct dirbuf *d,
			uint32_t b, const char *name, size_t len, uint32_t ino,
			unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, top = leaf_top(fs);
	unsigned char *blk = d->data + (size_t)b * bs;
	uint32_t off, reclen = DIR_REC_LEN(len);

	if (d->room[b] < reclen)
		return 0;
	for (off = d->first[b]; off + DE_HEAD <= top;
	     off += rec_len(blk + off, bs))
		if (entry_room(blk + off, bs) >= reclen)
			break;
	if (off + DE_HEAD > top)
		return 0;
	insert_at(d, bs, blk + off, name, len, ino, ftype);
	set_room(fs, d, b, d->first[b]);
	return 1;
}

/* ---- ext4's htree (fs/ext4/namei.c) ---------------------------------- */

/* struct ext2_dx_root_info after "." and ".." (struct dx_root) */
#define DX_ROOT_INFO (DIR_REC_LEN(1) + DIR_REC_LEN(2))
#define DX_INFO(f) (DX_ROOT_INFO + offsetof(struct ext2_dx_root_info, f))
#define DX_INFO_LEN sizeof(struct ext2_dx_root_info)
#define DX_NODE_ENTRIES DE_HEAD	/* after the fake dirent (dx_node) */
#define DX_MAX_LEVELS 2		/* without large_dir */
/* struct ext2_dx_entry @i of a table; entry 0 is the countlimit */
#define DX_ENTRY(e, i) ((e) + (size_t)(i) * sizeof(struct ext2_dx_entry))
#define DX_ENTRY_SIZE sizeof(struct ext2_dx_entry)
/* dx_root_limit, dx_node_limit: a struct ext2_dx_tail after the entries
 * with metadata_csum */
#define DX_TAIL(fs) ((fs)->g.metadata_csum ? sizeof(struct ext2_dx_tail) : 0)

static uint32_t dx_root_limit(const struct fs_state *fs)
{
	return (fs->g.block_size - DX_ROOT_INFO - DX_INFO_LEN - DX_TAIL(fs)) /
	       DX_ENTRY_SIZE;
}

static uint32_t dx_node_limit(const struct fs_state *fs)
{
	return (fs->g.block_size - DX_NODE_ENTRIES - DX_TAIL(fs)) / DX_ENTRY_SIZE;
}

struct dx_frame {
	uint32_t blk;		/* logical block of the index */
	uint32_t eoff;		/* offset of its entries */
	uint32_t at;		/* the entry followed */
};

static unsigned char *dx_entries(const struct dirbuf *d, uint32_t bs,
				 const struct dx_frame *f)
{
	return d->data + (size_t)f->blk * bs + f->eoff;
}

/* dx_get_count, dx_get_limit, dx_get_hash, dx_get_block and their set_
 * sides, byte by byte as the dirents: info_length, from the image, may
 * put the table anywhere. */
static uint32_t dx_count(const unsigned char *e)
{
	return get_le16(e + offsetof(struct ext2_dx_countlimit, count));
}

static void dx_set_count(unsigned char *e, uint32_t count)
{
	put_le16(e + offsetof(struct ext2_dx_countlimit, count), count);
}

static uint32_t dx_limit(const unsigned char *e)
{
	return get_le16(e + offsetof(struct ext2_dx_countlimit, limit));
}

static void dx_set_limit(unsigned char *e, uint32_t limit)
{
	put_le16(e + offsetof(struct ext2_dx_countlimit, limit), limit);
}

static uint32_t dx_hash(const unsigned char *e, uint32_t i)
{
	return get_le32(DX_ENTRY(e, i) + offsetof(struct ext2_dx_entry, hash));
}

static uint32_t dx_block(const unsigned char *e, uint32_t i)
{
	return get_le32(DX_ENTRY(e, i) + offsetof(struct ext2_dx_entry, block)) &
	       EXT4_DX_BLOCK_MASK;
}

static void dx_set_entry(unsigned char *e, uint32_t i, uint32_t hash,
			 uint32_t blk)
{
	if (i)	/* entry 0's hash is the countlimit */
		put_le32(DX_ENTRY(e, i) + offsetof(struct ext2_dx_entry, hash),
			 hash);
	put_le32(DX_ENTRY(e, i) + offsetof(struct ext2_dx_entry, block), blk);
}

/* The hash the root asks for (dx_probe's hinfo). */
static errcode_t dx_name_hash(const struct fs_state *fs, const struct dirbuf *d,
			      int root_version, const char *name, size_t len,
			      uint32_t *hash)
{
	int v = root_version, ok;

	if (v <= EXT2_HASH_TEA)
		v += fs->dx.unsigned_adj;
	*hash = ext4fs_dirhash_ci(v, fs->dx.seed, d->cf, name, (int)len, &ok);
	return ok ? 0 : ORLOV_ERR_CORRUPT;
}

/* dx_probe: root to leaf, at each level the last entry whose hash is not
 * above @hash.  Every field read is checked: the tree may come from the
 * image. */
static errcode_t dx_probe(const struct fs_state *fs, const struct dirbuf *d,
			  const char *name, size_t len, uint32_t *hash,
			  struct dx_frame *frames, int *nframes)
{
	uint32_t bs = fs->g.block_size;
	const unsigned char *root = d->data;
	uint32_t info_len = root[DX_INFO(info_length)];
	uint32_t levels = root[DX_INFO(indirect_levels)];
	struct dx_frame f = { 0, DX_ROOT_INFO + info_len, 0 };
	uint32_t lvl;
	errcode_t err;

	if (info_len < DX_INFO_LEN ||
	    DX_ROOT_INFO + info_len + DX_ENTRY_SIZE > bs ||
	    levels >= DX_MAX_LEVELS)
		return ORLOV_ERR_CORRUPT;
	err = dx_name_hash(fs, d, root[DX_INFO(hash_version)], name, len, hash);
	if (err)
		return err;
	for (lvl = 0;; lvl++) {
		const unsigned char *e = dx_entries(d, bs, &f);
		uint32_t count = dx_count(e), lo = 1, hi;

		if (!count || count > dx_limit(e) ||
		    f.eoff + DX_ENTRY_SIZE * dx_limit(e) > bs)
			return ORLOV_ERR_CORRUPT;
		hi = count;	/* search [lo, hi) */
		while (lo < hi) {
			uint32_t m = lo + (hi - lo) / 2;

			if (dx_hash(e, m) > *hash)
				hi = m;
			else
				lo = m + 1;
		}
		f.at = lo - 1;
		frames[lvl] = f;
		if (dx_block(e, f.at) == 0 || dx_block(e, f.at) >= d->nblocks)
			return ORLOV_ERR_CORRUPT;
		if (lvl == levels)
			break;
		f.blk = dx_block(e, f.at);
		f.eoff = DX_NODE_ENTRIES;
	}
	*nframes = (int)levels + 1;
	return 0;
}

/* dx_insert_block: a new entry right after the one followed. */
static void dx_insert_block(struct dirbuf *d, uint32_t bs,
			    const struct dx_frame *f, uint32_t hash,
			    uint32_t blk)
{
	unsigned char *e = dx_entries(d, bs, f);
	uint32_t count = dx_count(e);

	memmove(DX_ENTRY(e, f->at + 2), DX_ENTRY(e, f->at + 1),
		DX_ENTRY_SIZE * (count - f->at - 1));
	dx_set_entry(e, f->at + 1, hash, blk);
	dx_set_count(e, count + 1);
}

struct dx_map {
	uint32_t hash, offs, size;
};

/* dx_sort_map: comb sort, then bubble sort, in this order of swaps (it
 * decides where names with equal hashes land). */
static void dx_sort_map(struct dx_map *map, uint32_t count)
{
	struct dx_map t;
	uint32_t gap = count, i;
	int more;

	while (gap > 2) {
		gap = gap * 10 / 13;
		if (gap == 9 || gap == 10)
			gap = 11;
		for (i = count - 1; i >= gap; i--)
			if (map[i].hash < map[i - gap].hash) {
				t = map[i];
				map[i] = map[i - gap];
				map[i - gap] = t;
			}
	}
	do {
		more = 0;
		for (i = count - 1; i > 0; i--)
			if (map[i].hash < map[i - 1].hash) {
				t = map[i];
				map[i] = map[i - 1];
				map[i - 1] = t;
				more = 1;
			}
	} while (more);
}

/* A new block at the end of the directory, its logical number. */
static errcode_t dir_append(struct fs_state *fs, struct dirbuf *d,
			    uint32_t *lblk)
{
	errcode_t err = new_block(fs, d);

	*lblk = d->nblocks - 1;
	return err;
}

/* dx_make_map: the hash, offset and size of each entry in use, in block
 * order. */
static errcode_t dx_make_map(struct fs_state *fs, const struct dirbuf *d,
			     int root_version, const unsigned char *d1,
			     struct dx_map *map, uint32_t *count)
{
	uint32_t bs = fs->g.block_size, off, n = 0;
	errcode_t err;

	for (off = 0; off + DE_HEAD <= bs; off += rec_len(d1 + off, bs)) {
		const unsigned char *de = d1 + off;

		if (!de_name_len(de) || !de_inode(de))
			continue;
		err = dx_name_hash(fs, d, root_version,
				   (const char *)de + DE_OFF(name),
				   de_name_len(de), &map[n].hash);
		if (err)
			return err;
		map[n].offs = off;
		map[n].size = rec_len(de, bs);
		n++;
	}
	*count = n;
	return 0;
}

/* dx_move_dirents: packed into the new block, wiped in the old; the
 * offset of the last one moved. */
static uint32_t dx_move_dirents(unsigned char *d1, unsigned char *d2,
				const struct dx_map *map, uint32_t count,
				uint32_t bs)
{
	uint32_t n, to = 0, last2 = 0;

	for (n = 0; n < count; n++) {
		unsigned char *de = d1 + map[n].offs;
		uint32_t rl = DIR_REC_LEN(de_name_len(de));

		memcpy(d2 + to, de, rl);
		de_set_rec_len(d2 + to, rl);
		last2 = to;
		to += rl;
		de_set_inode(de, 0);
		memset(de + DE_OFF(name_len), 0,
		       rec_len(de, bs) - DE_OFF(name_len));
	}
	return last2;
}

/* dx_pack_dirents: the rest slides to the front, in order; the offset of
 * the last entry. */
static uint32_t dx_pack_dirents(unsigned char *d1, uint32_t bs)
{
	uint32_t off, to = 0, prev = 0;

	for (off = 0; off + DE_HEAD <= bs;) {
		uint32_t next = off + rec_len(d1 + off, bs);

		if (de_name_len(d1 + off) && de_inode(d1 + off)) {
			uint32_t rl = DIR_REC_LEN(de_name_len(d1 + off));

			if (off > to)
				memmove(d1 + to, d1 + off, rl);
			de_set_rec_len(d1 + to, rl);
			prev = to;
			to += rl;
		}
		off = next;
	}
	return prev;
}

/*
 * do_split: a new block takes the entries of leaf @lb with the higher
 * hashes, so that neither is over half full; the index gets the new
 * block; *tb and *toff say where the name hashing to @hash goes.
 */
static errcode_t do_split(struct fs_state *fs, struct dirbuf *d, uint32_t lb,
			  const struct dx_frame *frame, uint32_t hash,
			  int root_version, uint32_t *tb, uint32_t *toff)
{
	uint32_t bs = fs->g.block_size, nb, off, count = 0, n = 0;
	uint32_t size = 0, move = 0, split, hash2, last2, prev;
	unsigned char *d1, *d2;
	struct dx_map *map;
	int i, continued;
	errcode_t err;

	err = dir_append(fs, d, &nb);
	if (err)
		return err;
	d1 = d->data + (size_t)lb * bs;
	d2 = d->data + (size_t)nb * bs;
	for (off = 0; off + DE_HEAD <= bs; off += rec_len(d1 + off, bs)) {
		if (rec_len(d1 + off, bs) < DE_HEAD)
			return ORLOV_ERR_CORRUPT;
		count++;
	}
	map = calloc(count ? count : 1, sizeof(*map));
	if (!map)
		return ENOMEM;
	err = dx_make_map(fs, d, root_version, d1, map, &count);
	if (err)
		goto out;
	if (count < 2) {
		err = ORLOV_ERR_CORRUPT;
		goto out;
	}
	/* the kernel's dx_make_map fills from the top down: the first entry
	 * is last */
	for (n = 0; n < count / 2; n++) {
		struct dx_map t = map[n];

		map[n] = map[count - 1 - n];
		map[count - 1 - n] = t;
	}
	dx_sort_map(map, count);
	/* neither half over half full: the top entries move */
	for (i = (int)count - 1; i >= 0; i--) {
		if (size + map[i].size / 2 > bs / 2)
			break;
		size += map[i].size;
		move++;
	}
	split = i > 0 ? count - move : count / 2;
	hash2 = map[split].hash;
	continued = hash2 == map[split - 1].hash;

	last2 = dx_move_dirents(d1, d2, map + split, count - split, bs);
	prev = dx_pack_dirents(d1, bs);
	de_set_rec_len(d1 + prev, leaf_top(fs) - prev);
	de_set_rec_len(d2 + last2, leaf_top(fs) - last2);
	init_tail(fs, d1);
	init_tail(fs, d2);
	set_room(fs, d, lb, 0);
	set_room(fs, d, nb, 0);
	if (hash >= hash2) {
		*tb = nb;
		*toff = last2;
	} else {
		*tb = lb;
		*toff = prev;
	}
	dx_insert_block(d, bs, frame, hash2 + (uint32_t)continued, nb);
out:
	free(map);
	return err;
}

/* do_split, then add_dirent_to_buf at the entry it returns. */
static errcode_t split_insert(struct fs_state *fs, struct dirbuf *d,
			      uint32_t lb, const struct dx_frame *frame,
			      uint32_t hash, int root_version, const char *name,
			      size_t len, uint32_t ino, unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, tb = 0, toff = 0;
	errcode_t err = do_split(fs, d, lb, frame, hash, root_version, &tb,
				 &toff);

	if (err)
		return err;
	insert_at(d, bs, d->data + (size_t)tb * bs + toff, name, len, ino, ftype);
	set_room(fs, d, tb, 0);
	return 0;
}

/* make_indexed_dir: block 0 becomes the root, its entries move to a new
 * block 1, which is split at once. */
static errcode_t make_indexed_dir(struct fs_state *fs, struct dirbuf *d,
				  const char *name, size_t len, uint32_t ino,
				  unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, lb, de_off, length, off, hash;
	uint32_t dot = DIR_REC_LEN(1);
	struct dx_frame frame = { 0, DX_ROOT_INFO + DX_INFO_LEN, 0 };
	unsigned char *root, *b1, *e;
	errcode_t err;

	de_off = dot + rec_len(d->data + dot, bs);
	if (rec_len(d->data, bs) != dot || de_off >= leaf_top(fs))
		return ORLOV_ERR_CORRUPT;
	/* the root keeps its old tail's bytes, as the kernel's: only
	 * what was in front of it moves and is wiped */
	length = leaf_top(fs) - de_off;
	err = dir_append(fs, d, &lb);
	if (err)
		return err;
	root = d->data;
	b1 = d->data + (size_t)lb * bs;
	memcpy(b1, root + de_off, length);
	memset(root + de_off, 0, length);
	for (off = 0; off + rec_len(b1 + off, bs) < length;)
		off += rec_len(b1 + off, bs);
	de_set_rec_len(b1 + off, leaf_top(fs) - off);

	de_set_rec_len(root + dot, bs - dot);
	memset(root + DX_ROOT_INFO, 0, DX_INFO_LEN);
	root[DX_INFO(hash_version)] = (unsigned char)fs->dx.def_version;
	root[DX_INFO(info_length)] = DX_INFO_LEN;
	e = root + DX_ROOT_INFO + DX_INFO_LEN;
	dx_set_limit(e, dx_root_limit(fs));
	dx_set_count(e, 1);
	dx_set_entry(e, 0, 0, lb);
	d->indexed = 1;
	d->room[0] = 0;
	set_room(fs, d, lb, 0);

	err = dx_name_hash(fs, d, fs->dx.def_version, name, len, &hash);
	return err ? err : split_insert(fs, d, lb, &frame, hash,
					fs->dx.def_version, name, len, ino, ftype);
}

/* ext4_dx_add_entry */
static errcode_t dx_add_entry(struct fs_state *fs, struct dirbuf *d,
			      const char *name, size_t len, uint32_t ino,
			      unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, hash, leaf;
	struct dx_frame frames[DX_MAX_LEVELS];
	int nframes, fi;
	errcode_t err;

again:
	err = dx_probe(fs, d, name, len, &hash, frames, &nframes);
	if (err)
		return err;
	fi = nframes - 1;
	leaf = dx_block(dx_entries(d, bs, &frames[fi]), frames[fi].at);
	if (add_to_block(fs, d, leaf, name, len, ino, ftype))
		return 0;
	if (dx_count(dx_entries(d, bs, &frames[fi])) ==
	    dx_limit(dx_entries(d, bs, &frames[fi]))) {
		int add_level = 1, restart = 0;
		uint32_t icount, nb;
		unsigned char *e, *e2, *node;

		while (fi > 0) {
			e = dx_entries(d, bs, &frames[fi - 1]);
			if (dx_count(e) < dx_limit(e)) {
				add_level = 0;
				break;
			}
			fi--;
			restart = 1;
		}
		if (add_level && nframes == DX_MAX_LEVELS)
			return ORLOV_ERR_DIR_INDEX_FULL;
		err = dir_append(fs, d, &nb);
		if (err)
			return err;
		e = dx_entries(d, bs, &frames[fi]);
		icount = dx_count(e);
		node = d->data + (size_t)nb * bs;
		memset(node, 0, bs);	/* no dirent tail in an index node */
		de_set_rec_len(node, bs);
		e2 = node + DX_NODE_ENTRIES;
		d->room[nb] = 0;
		if (!add_level) {
			uint32_t ic1 = icount / 2, ic2 = icount - ic1;
			uint32_t hash2 = dx_hash(e, ic1);

			memcpy(e2, DX_ENTRY(e, ic1), DX_ENTRY_SIZE * ic2);
			dx_set_count(e, ic1);
			dx_set_count(e2, ic2);
			dx_set_limit(e2, dx_node_limit(fs));
			if (frames[fi].at >= ic1) {
				frames[fi].blk = nb;
				frames[fi].eoff = DX_NODE_ENTRIES;
				frames[fi].at -= ic1;
			}
			dx_insert_block(d, bs, &frames[fi - 1], hash2, nb);
			if (restart)
				goto again;
		} else {
			memcpy(e2, e, DX_ENTRY_SIZE * icount);
			dx_set_limit(e2, dx_node_limit(fs));
			dx_set_count(e, 1);
			dx_set_entry(e, 0, 0, nb);
			d->data[DX_INFO(indirect_levels)]++;
			goto again;
		}
	}
	return split_insert(fs, d, leaf, &frames[fi], hash,
			    d->data[DX_INFO(hash_version)], name, len, ino,
			    ftype);
}

errcode_t dir_add_link(struct fs_state *fs, struct dirbuf *d,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype)
{
	uint32_t b, c;
	errcode_t err;

	if (len > EXT2_NAME_LEN)
		return ORLOV_ERR_NAME_TOO_LONG;
	if (fs->dx.enabled && d->indexed)
		return dx_add_entry(fs, d, name, len, ino, ftype);
	if (fs->dx.enabled && d->nblocks == 1 &&
	    d->room[0] < DIR_REC_LEN(len))
		return make_indexed_dir(fs, d, name, len, ino, ftype);
	/* blocks only lose room until the htree: none before fit[c] can take
	 * a record of this size (ext2_add_link would walk past them) */
	c = (DIR_REC_LEN(len) - DIR_REC_LEN(1)) / 4;
	for (b = d->fit[c]; b < d->nblocks; b++)
		if (add_to_block(fs, d, b, name, len, ino, ftype)) {
			d->fit[c] = b;
			return 0;
		}
	d->fit[c] = d->nblocks;
	err = new_block(fs, d);
	if (err)
		return err;
	if (!add_to_block(fs, d, d->nblocks - 1, name, len, ino, ftype))
		return ORLOV_ERR_CORRUPT;
	return 0;
}

int dir_for_each(const struct dirbuf *d, uint32_t bs,
		 int (*fn)(void *arg, const char *name, size_t len,
			   uint32_t ino),
		 void *arg)
{
	uint32_t b, off;
	int r;

	for (b = 0; b < d->nblocks; b++) {
		const unsigned char *blk = d->data + (size_t)b * bs;

		for (off = 0; off + DE_HEAD <= bs;) {
			const unsigned char *de = blk + off;
			uint32_t rl = rec_len(de, bs);

			if (rl < DE_HEAD)
				break;
			if (de_inode(de) &&
			    (r = fn(arg, (const char *)de + DE_OFF(name),
				    de_name_len(de), de_inode(de))))
				return r;
			off += rl;
		}
	}
	return 0;
}

struct lookup {
	const char *name;
	size_t len;
	uint32_t ino;
};

static int lookup_one(void *arg, const char *name, size_t len, uint32_t ino)
{
	struct lookup *l = arg;

	if (len != l->len || memcmp(name, l->name, len))
		return 0;
	l->ino = ino;
	return 1;
}

int dir_lookup(const struct dirbuf *d, uint32_t bs, const char *name,
	       size_t len, uint32_t *ino)
{
	struct lookup l = { .name = name, .len = len };

	if (!dir_for_each(d, bs, lookup_one, &l))
		return 0;
	if (ino)
		*ino = l.ino;
	return 1;
}
