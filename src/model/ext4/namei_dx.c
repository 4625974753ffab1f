// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/ext4/namei_dx.h"
#include "model/dirleaf.h"
#include "model/dirblocks.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "model/dirent.h"
#include "model/dirhash.h"

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

/* A frame's table: dx_probe took its block, which stays in memory. */
static unsigned char *dx_entries(const struct dirbuf *d,
				 const struct dx_frame *f)
{
	return dirb_index(&d->b, f->blk) + f->eoff;
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

/* Block @n of an htree's index, in memory from now on. */
static errcode_t index_block(const struct fs_state *fs, struct dirbuf *d,
			     uint32_t n, unsigned char **p)
{
	errcode_t err = dirb_get(fs, &d->b, n, p);

	if (!err)
		dirb_set_index(&d->b, n);
	return err;
}

/* dx_probe: root to leaf, at each level the last entry whose hash is not
 * above @hash.  Every field read is checked: the tree may come from the
 * image. */
static errcode_t dx_probe(const struct fs_state *fs, struct dirbuf *d,
			  const char *name, size_t len, uint32_t *hash,
			  struct dx_frame *frames, int *nframes)
{
	uint32_t bs = fs->g.block_size;
	unsigned char *root, *blk;
	uint32_t info_len, levels, lvl;
	struct dx_frame f = { 0, 0, 0 };
	errcode_t err = index_block(fs, d, 0, &root);

	if (err)
		return err;
	info_len = root[DX_INFO(info_length)];
	levels = root[DX_INFO(indirect_levels)];
	f.eoff = DX_ROOT_INFO + info_len;
	if (info_len < DX_INFO_LEN ||
	    DX_ROOT_INFO + info_len + DX_ENTRY_SIZE > bs ||
	    levels >= DX_MAX_LEVELS)
		return ORLOV_ERR_CORRUPT;
	err = dx_name_hash(fs, d, root[DX_INFO(hash_version)], name, len, hash);
	if (err)
		return err;
	for (lvl = 0;; lvl++) {
		const unsigned char *e;
		uint32_t count, lo = 1, hi;

		if (lvl && (err = index_block(fs, d, f.blk, &blk)))
			return err;
		e = dx_entries(d, &f);
		count = dx_count(e);
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
		if (dx_block(e, f.at) == 0 || dx_block(e, f.at) >= dir_nblocks(d))
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
	unsigned char *e = dx_entries(d, f);
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
			    uint32_t *lblk, unsigned char **blk)
{
	errcode_t err = dirleaf_new_block(fs, d, blk);

	*lblk = dir_nblocks(d) - 1;
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

	err = dir_append(fs, d, &nb, &d2);
	if (!err)
		err = dirb_get(fs, &d->b, lb, &d1);
	if (err)
		return err;
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
	de_set_rec_len(d1 + prev, dirleaf_top(fs) - prev);
	de_set_rec_len(d2 + last2, dirleaf_top(fs) - last2);
	dirleaf_init_tail(fs, d1);
	dirleaf_init_tail(fs, d2);
	dirleaf_set_room(fs, d, lb, 0);
	dirleaf_set_room(fs, d, nb, 0);
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
	dirleaf_insert_at(d, bs, dirleaf_held(d, tb) + toff, name, len, ino, ftype);
	dirleaf_set_room(fs, d, tb, 0);
	return 0;
}

/* make_indexed_dir: block 0 becomes the root, its entries move to a new
 * block 1, which is split at once. */
errcode_t dx_make_indexed_dir(struct fs_state *fs, struct dirbuf *d,
			      const char *name, size_t len, uint32_t ino,
			      unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, lb, de_off, length, off, hash;
	uint32_t dot = DIR_REC_LEN(1);
	struct dx_frame frame = { 0, DX_ROOT_INFO + DX_INFO_LEN, 0 };
	unsigned char *root, *b1, *e;
	errcode_t err;

	err = dirb_get(fs, &d->b, 0, &root);
	if (err)
		return err;
	de_off = dot + rec_len(root + dot, bs);
	if (rec_len(root, bs) != dot || de_off >= dirleaf_top(fs))
		return ORLOV_ERR_CORRUPT;
	/* the root keeps its old tail's bytes, as the kernel's: only
	 * what was in front of it moves and is wiped */
	length = dirleaf_top(fs) - de_off;
	err = dir_append(fs, d, &lb, &b1);
	if (!err)
		err = index_block(fs, d, 0, &root);
	if (err)
		return err;
	memcpy(b1, root + de_off, length);
	memset(root + de_off, 0, length);
	for (off = 0; off + rec_len(b1 + off, bs) < length;)
		off += rec_len(b1 + off, bs);
	de_set_rec_len(b1 + off, dirleaf_top(fs) - off);

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
	dirleaf_set_room(fs, d, lb, 0);

	err = dx_name_hash(fs, d, fs->dx.def_version, name, len, &hash);
	return err ? err : split_insert(fs, d, lb, &frame, hash,
					fs->dx.def_version, name, len, ino, ftype);
}

/* ext4_dx_add_entry */
errcode_t ext4_dx_add_entry(struct fs_state *fs, struct dirbuf *d,
			    const char *name, size_t len, uint32_t ino,
			    unsigned int ftype)
{
	uint32_t bs = fs->g.block_size, hash, leaf;
	struct dx_frame frames[DX_MAX_LEVELS];
	int nframes, fi, added;
	errcode_t err;

again:
	err = dx_probe(fs, d, name, len, &hash, frames, &nframes);
	if (err)
		return err;
	fi = nframes - 1;
	leaf = dx_block(dx_entries(d, &frames[fi]), frames[fi].at);
	err = dirleaf_add(fs, d, leaf, name, len, ino, ftype, &added);
	if (err || added)
		return err;
	if (dx_count(dx_entries(d, &frames[fi])) ==
	    dx_limit(dx_entries(d, &frames[fi]))) {
		int add_level = 1, restart = 0;
		uint32_t icount, nb;
		unsigned char *e, *e2, *node;

		while (fi > 0) {
			e = dx_entries(d, &frames[fi - 1]);
			if (dx_count(e) < dx_limit(e)) {
				add_level = 0;
				break;
			}
			fi--;
			restart = 1;
		}
		if (add_level && nframes == DX_MAX_LEVELS)
			return ORLOV_ERR_DIR_INDEX_FULL;
		err = dir_append(fs, d, &nb, &node);
		if (err)
			return err;
		dirb_set_index(&d->b, nb);
		e = dx_entries(d, &frames[fi]);
		icount = dx_count(e);
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
			dirb_index(&d->b, 0)[DX_INFO(indirect_levels)]++;
			goto again;
		}
	}
	return split_insert(fs, d, leaf, &frames[fi], hash,
			    dirb_index(&d->b, 0)[DX_INFO(hash_version)], name, len, ino,
			    ftype);
}
