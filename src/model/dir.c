// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/dir.h"
#include "model/dirblocks.h"
#include "model/dirleaf.h"
#include "model/ext4/namei_dx.h"
#include "model/ext4/inline.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "model/dirent.h"
#include "model/casefold.h"

void dirbuf_init(struct dirbuf *d, uint32_t ino, uint32_t ipg, int filetype)
{
	memset(d, 0, sizeof(*d));
	ifile_init(&d->map, ino, ipg);
	d->filetype = filetype;
}

void dirbuf_release(const struct fs_state *fs, struct dirbuf *d)
{
	ifile_release(fs, &d->map);
	dirb_release(fs, &d->b);
	free(d->phys);
	free(d->room);
	free(d->first);
	memset(d, 0, sizeof(*d));
}

errcode_t dirbuf_add_block(const struct fs_state *fs, struct dirbuf *d,
			   fsblk_t phys, const unsigned char *data)
{
	unsigned char *blk;
	errcode_t err = dirleaf_grow(d);

	if (!err)
		err = dirb_new(fs, &d->b, &blk);
	if (err)
		return err;
	memcpy(blk, data, fs->g.block_size);
	d->phys[dir_nblocks(d) - 1] = phys;
	dirleaf_set_room(fs, d, dir_nblocks(d) - 1, 0);
	return 0;
}

errcode_t dir_make_empty(struct fs_state *fs, struct dirbuf *d,
			 uint32_t parent_ino)
{
	uint32_t top = dirleaf_top(fs), dot = DIR_REC_LEN(1);
	unsigned char *blk;
	errcode_t err = dirleaf_new_block(fs, d, &blk);

	if (err)
		return err;
	de_set_rec_len(blk, dot);
	dirleaf_set_entry(blk, d->map.ino, ".", 1, EXT2_FT_DIR, d->filetype);
	de_set_rec_len(blk + dot, top - dot);
	dirleaf_set_entry(blk + dot, parent_ino, "..", 2, EXT2_FT_DIR, d->filetype);
	dirleaf_set_room(fs, d, 0, 0);
	return 0;
}

errcode_t dir_add_link(struct fs_state *fs, struct dirbuf *d,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype)
{
	uint32_t b, c;
	int added;
	errcode_t err;

	if (len > EXT2_NAME_LEN)
		return ORLOV_ERR_NAME_TOO_LONG;
	/* ext4_add_entry: an inline directory first, which may convert it
	 * to its first block, where the name then goes as in any */
	if (d->inline_dir) {
		err = ext4_try_add_inline_entry(fs, d, name, len, ino, ftype,
						&added);
		if (err || added)
			return err;
	}
	if (fs->dx.enabled && d->indexed)
		return ext4_dx_add_entry(fs, d, name, len, ino, ftype);
	if (fs->dx.enabled && dir_nblocks(d) == 1 &&
	    d->room[0] < DIR_REC_LEN(len))
		return dx_make_indexed_dir(fs, d, name, len, ino, ftype);
	/* blocks only lose room until the htree: none before fit[c] can take
	 * a record of this size (ext2_add_link would walk past them) */
	c = (DIR_REC_LEN(len) - DIR_REC_LEN(1)) / 4;
	for (b = d->fit[c]; b < dir_nblocks(d); b++) {
		err = dirleaf_add(fs, d, b, name, len, ino, ftype, &added);
		if (err)
			return err;
		if (added) {
			d->fit[c] = b;
			return 0;
		}
	}
	d->fit[c] = dir_nblocks(d);
	err = dirleaf_new_block(fs, d, NULL);
	if (!err)
		err = dirleaf_add(fs, d, dir_nblocks(d) - 1, name, len, ino,
				   ftype, &added);
	return err ? err : added ? 0 : ORLOV_ERR_CORRUPT;
}

uint64_t dir_size(const struct dirbuf *d, uint32_t bs)
{
	if (d->inline_dir)
		return ext4_inline_dir_size(d);
	return (uint64_t)dir_nblocks(d) * bs;
}

errcode_t dir_for_each(const struct fs_state *fs, const struct dirbuf *d,
		       errcode_t (*fn)(void *arg, const char *name, size_t len,
				       uint32_t ino),
		       void *arg)
{
	uint32_t bs = fs->g.block_size, b;
	unsigned char *copy = NULL;
	errcode_t err = 0;

	if (d->inline_dir)
		return ext4_inline_for_each(d, fn, arg);
	for (b = 0; !err && b < dir_nblocks(d); b++) {
		const unsigned char *blk = d->b.blk[b];

		if (!blk) {	/* spilled: read back aside, nothing moves */
			if (!copy && !(copy = malloc(bs)))
				return ENOMEM;
			err = dirb_copy(fs, &d->b, b, copy);
			blk = copy;
		}
		err = dirleaf_for_each(blk, bs, fn, arg);
	}
	free(copy);
	return err;
}

struct lookup {
	const struct ext2fs_nls_table *cf;
	const char *name;
	size_t len;
	uint32_t ino;
	int found;
};

static errcode_t lookup_one(void *arg, const char *name, size_t len,
			    uint32_t ino)
{
	struct lookup *l = arg;

	if (l->cf ? !cf_equal(l->cf, l->name, l->len, name, len) :
		    len != l->len || memcmp(name, l->name, len))
		return 0;
	l->ino = ino;
	l->found = 1;
	return EEXIST;	/* stops the walk: not an error (found) */
}

errcode_t dir_lookup(const struct fs_state *fs, const struct dirbuf *d,
		     const char *name, size_t len, int *found, uint32_t *ino)
{
	struct lookup l = { .cf = d->cf, .name = name, .len = len };
	errcode_t err = dir_for_each(fs, d, lookup_one, &l);

	*found = l.found;
	if (l.found && ino)
		*ino = l.ino;
	return l.found ? 0 : err;
}
