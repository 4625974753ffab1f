// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The first pass: will the tree fit, is every name and file acceptable.
 * It walks the source as the write pass will, counts the inodes and an
 * upper bound of the blocks it takes, and refuses before anything is
 * written.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "populate/quota.h"
#include "populate/scan.h"
#include "populate/attrs.h"
#include "populate/check.h"
#include "populate/hardlinks.h"
#include "populate/inode.h"
#include "populate/report.h"
#include "populate/casefold.h"
#include "lib/hash.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* Refuse a name the image has where the entry goes; a directory it may
 * merge into is loaded, as the scan's next frame's. */
static errcode_t check_name(struct pop_ctx *c, const struct src_entry *e,
			    struct dirbuf **merged, uint32_t *links)
{
	const struct scan_dir *up = &c->scan.dirs.v[c->scan.dirs.depth - 1];
	struct dirbuf *parent = up->existing;
	uint32_t ino;
	int found = 0;
	errcode_t err = 0;

	*merged = NULL;
	if (e->name_len > EXT2_NAME_LEN)
		return pop_fail(c, ORLOV_ERR_NAME_TOO_LONG, "checking", e->path);
	err = casefold_check_name(c, &c->scan.dirs.v[c->scan.dirs.depth - 1], e);
	if (err)
		return err;
	/* Only names in directories the image has can collide. */
	if (parent)
		err = dir_names_lookup(&up->old_names, &c->fs, parent, e->name,
				       e->name_len, &found, &ino);
	if (err)
		return pop_fail(c, err, "checking", e->path);
	if (found) {
		struct ext2_inode_large in;
		struct dirbuf *d;

		err = image_read_inode(c->img, ino, &in);
		if (err)
			return pop_fail(c, err, "checking", e->path);
		if (!merges(c, e, c->scan.dirs.depth) || !S_ISDIR(in.i_mode))
			return pop_fail(c, ORLOV_ERR_EXISTS, "checking", e->path);
		d = calloc(1, sizeof(*d));
		if (!d)
			return ENOMEM;
		dirbuf_init(d, ino, c->fs.g.inodes_per_group,
			    image_has_filetype(c->img));
		err = load_dir(c, &in, d);
		if (err) {
			dirbuf_release(&c->fs, d);
			free(d);
			return pop_fail(c, err, "reading directory", e->path);
		}
		*merged = d;
		*links = in.i_links_count;
	}
	if (c->scan.dirs.depth != 1)
		return 0;
	return walk_names_add(&c->scan.root_names, e->name, e->name_len, 0);
}

/*
 * A block for the attributes just built in c->xblock, unless an identical
 * one is already counted and has references to spare: the kernel's
 * mbcache shares it (up to 1024 references).  The sets are found by the
 * block's FNV-1a hash: a tree with a million distinct sets is counted in
 * linear time.
 */
static errcode_t count_xattr_block(struct pop_ctx *c)
{
	struct xsets *xs = &c->scan.xsets;
	uint32_t bs = c->fs.g.block_size;
	uint64_t h = fnv1a64(FNV1A64_INIT, c->xblock, bs);
	struct xset *x;
	size_t k, tail = 0;

	if (keymap_get(&xs->by_hash, h, &k)) {
		for (;;) {
			x = &xs->v[k];
			if (!memcmp(x->data, c->xblock, bs)) {
				if (x->refs++ % 1024 == 0)
					c->scan.need_blocks++;
				return 0;
			}
			if (!x->next)
				break;
			k = x->next - 1;
		}
		tail = k + 1;
	}
	if (grow_array(&xs->v, &xs->cap, xs->n + 1, sizeof(*xs->v), 16))
		return ENOMEM;
	x = &xs->v[xs->n];
	x->data = malloc(bs);
	if (!x->data)
		return ENOMEM;
	memcpy(x->data, c->xblock, bs);
	x->hash = h;
	x->refs = 1;
	x->next = 0;
	if (tail)
		xs->v[tail - 1].next = xs->n + 1;
	else if (keymap_add(&xs->by_hash, h, xs->n))
		return ENOMEM;
	xs->n++;
	c->scan.need_blocks++;
	return 0;
}

static errcode_t check_xattrs(struct pop_ctx *c, const struct src_entry *e)
{
	errcode_t err = xattrs_acceptable(c, e);

	if (!err && e->nxattrs && c->o->xattrs)
		err = count_xattr_block(c);
	return err;
}

/* One more entry of @name_len in the directory @d: ext2_add_link fills a
 * block before it takes the next (an upper bound: it also fills slack
 * left in earlier blocks). */
static void scan_add_entry(struct pop_ctx *c, struct scan_dir *d, size_t name_len)
{
	uint32_t rec = 8 + (((uint32_t)name_len + 3) & ~3U);
	/* with metadata_csum a leaf ends in its checksum's dirent */
	uint32_t room = c->fs.g.block_size -
			(c->fs.g.metadata_csum ?
			 (uint32_t)sizeof(struct ext2_dir_entry_tail) : 0);

	if (d->used + rec > room) {
		d->blocks++;
		d->used = rec;
	} else {
		d->used += rec;
	}
}

/* The blocks a file of @nblocks data blocks takes with its map's. */
static uint64_t map_blocks_needed(const struct pop_ctx *c, uint64_t nblocks)
{
	uint32_t bs = c->fs.g.block_size;

	return c->fs.g.extents ? ext_blocks_needed(bs, nblocks) :
				 bmap_blocks_needed(bs / 4, nblocks);
}

/* The blocks a directory of @nblocks blocks of entries takes, indirect
 * ones included; an htree's leaves are split half full, and it has a root
 * and, past one index block, a second level. */
static uint64_t dir_blocks_needed(const struct pop_ctx *c, uint64_t nblocks)
{
	uint32_t bs = c->fs.g.block_size;

	/* (an index entry fewer a block with metadata_csum's dx tail) */
	uint32_t fanout = bs / 8 - (c->fs.g.metadata_csum ? 2 : 1);

	if (c->fs.dx.enabled && nblocks > 1)
		nblocks = 2 * nblocks + 1 + 2 * nblocks / fanout;
	return map_blocks_needed(c, nblocks);
}

/* ORLOV_ERR_TARGET_XATTRS when the target has attributes (block or,
 * for ext4, inode) that --root-attrs would have to replace. */
static errcode_t target_has_xattrs(struct pop_ctx *c)
{
	struct ext2_inode_large in;
	struct ifile f;
	errcode_t err = image_read_inode(c->img, c->target.ino, &in);

	if (err || inode_xattr_block(&in))
		return err ? err : ORLOV_ERR_TARGET_XATTRS;
	memset(&f, 0, sizeof(f));
	if (in.i_extra_isize == 32)
		err = ibody_new(c, &f);
	if (!err && f.ibody)
		err = image_read_inode_tail(c->img, c->target.ino, f.ibody);
	if (!err && f.ibody && !xattr_ibody_empty(f.ibody, f.ibody_size))
		err = ORLOV_ERR_TARGET_XATTRS;
	free(f.ibody);
	return err;
}

static errcode_t scan_enter(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	struct dirbuf *merged = NULL;
	struct scan_dir *d;
	uint32_t links = 0;
	errcode_t err;

	if (grow_array(&c->scan.dirs.v, &c->scan.dirs.cap, c->scan.dirs.depth + 1,
		       sizeof(*c->scan.dirs.v), 32))
		return ENOMEM;
	d = &c->scan.dirs.v[c->scan.dirs.depth];
	memset(d, 0, sizeof(*d));
	/* An inherited ACL may take a block of its own (more at most). */
	if (c->scan.dirs.depth && c->scan.dirs.v[c->scan.dirs.depth - 1].defacl)
		c->scan.need_blocks++;
	d->defacl = c->scan.dirs.depth && c->xa.xs.posix_acl &&
		has_src_xattr(e, "system.posix_acl_default");
	if (c->scan.dirs.depth) {
		err = check_name(c, e, &merged, &links);
		if (err)
			return err;
	}
	/* chowned, whether made or merged into */
	if (c->scan.dirs.depth) {
		err = quota_chown(c, e);
		if (err)
			return err;
	}
	if (merged) {
		/* like the target: its links, new entries in new blocks */
		d->existing = merged;
		d->cf = merged->cf != NULL;
		err = casefold_check_merge(c, e, d->cf);
		if (err)
			return err;
		d->owned = 1;
		err = dir_names_load(&d->old_names, &c->fs, merged);
		if (err)
			return err;
		d->links = links;
		d->blocks = d->had = dir_nblocks(merged);
		d->used = c->fs.g.block_size;
		c->pr.total_entries++;
		c->scan.dirs.depth++;
		return 0;
	}
	if (c->scan.dirs.depth) {
		/* mkdir past the link limit is refused: so it is here, early
		 * (a directory that big is an htree wherever it can be) */
		if (dir_links_full(c, c->scan.dirs.v[c->scan.dirs.depth - 1].links++,
				   c->fs.dx.enabled))
			return pop_fail(c, ORLOV_ERR_TOO_MANY_LINKS,
				    "creating directory", e->path);
		c->scan.need_inodes++;
		c->pr.total_entries++;
		d->cf = c->scan.dirs.v[c->scan.dirs.depth - 1].cf ||
			casefold_flag(c, e);
		scan_add_entry(c, &c->scan.dirs.v[c->scan.dirs.depth - 1], e->name_len);
		err = check_xattrs(c, e);
		if (err)
			return err;
	}
	d->links = c->scan.dirs.depth ? 2 : c->target.links;
	if (c->scan.dirs.depth) {
		/* "." and ".." in its first block */
		d->blocks = 1;
		d->used = 24;
		d->had = 0;
	} else {
		if (c->o->root_attrs && c->o->xattrs && e->nxattrs) {
			/* its attribute block (at most), where it has none */
			err = target_has_xattrs(c);
			if (err)
				return pop_fail_at(c, err, "applying SOURCE's attributes to",
					       c->o->target);
			err = check_xattrs(c, e);
			if (err)
				return err;
		}
		/* the target: new entries in new blocks (at most) */
		d->existing = c->target.d;
		d->cf = c->target.d->cf != NULL;
		d->old_names = c->target.names;
		d->blocks = d->had = dir_nblocks(c->target.d);
		d->used = c->fs.g.block_size;
	}
	c->scan.dirs.depth++;
	return 0;
}

static void scan_drop(struct pop_ctx *c, struct scan_dir *d)
{
	if (d->owned) {
		dirbuf_release(&c->fs, d->existing);
		free(d->existing);
		dir_names_free(&d->old_names);
	}
	d->existing = NULL;
	memset(&d->old_names, 0, sizeof(d->old_names));
	cf_set_free(&d->cf_names);
	d->owned = 0;
}

static errcode_t scan_leave(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	const struct scan_dir *d = &c->scan.dirs.v[c->scan.dirs.depth - 1];

	(void)e;
	c->scan.need_blocks += dir_blocks_needed(c, d->blocks) -
			  (d->had ? dir_blocks_needed(c, d->had) : 0);
	scan_drop(c, &c->scan.dirs.v[c->scan.dirs.depth - 1]);
	c->scan.dirs.depth--;
	return 0;
}

static errcode_t scan_leaf(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	uint32_t bs = c->fs.g.block_size, apb = bs / 4;
	uint64_t max_blocks = c->fs.g.extents ? EXT_MAX_BLOCKS :
			      EXT2_NDIR_BLOCKS + apb + (uint64_t)apb * apb +
			      (uint64_t)apb * apb * apb;
	struct dirbuf *merged;
	uint32_t links;
	errcode_t err = check_name(c, e, &merged, &links);

	c->pr.total_entries++;
	if (S_ISREG(e->st.st_mode))
		c->pr.total_bytes += (uint64_t)e->st.st_size;

	if (err)
		return err;
	scan_add_entry(c, &c->scan.dirs.v[c->scan.dirs.depth - 1], e->name_len);
	if (e->st.st_nlink > 1) {
		if (link_find(&c->links, e->st.st_dev, e->st.st_ino))
			return 0;
		err = link_add(&c->links, e->st.st_dev, e->st.st_ino, 0);
		if (err)
			return err;
	}
	c->scan.need_inodes++;
	err = quota_chown(c, e);
	if (err)
		return err;
	if (c->scan.dirs.depth && c->scan.dirs.v[c->scan.dirs.depth - 1].defacl && !S_ISLNK(e->st.st_mode))
		c->scan.need_blocks++;	/* an inherited access ACL */
	err = check_xattrs(c, e);
	if (err)
		return err;
	err = check_kind(c, e, "checking");
	if (err)
		return err;
	if (S_ISLNK(e->st.st_mode)) {
		if (e->link_len + 1 > 60)
			c->scan.need_blocks++;
	} else if (S_ISREG(e->st.st_mode)) {
		uint64_t off = 0, s, t, nb = 0, last = UINT64_MAX;
		uint64_t size = (uint64_t)e->st.st_size;
		/* (The walk opened it: readable before we write.)  Where the
		 * host allocated the whole size, the whole size is the one
		 * range, unasked: a hole could only lower the bound. */
		int whole = src_allocated_whole(&e->st);

		while (off < size) {
			if (whole) {
				s = 0;
				t = size;
			} else if ((err = e->data->next_data(e, off, &s, &t))) {
				return pop_fail(c, err, "reading", e->path);
			}
			if (s >= t)
				break;
			nb += (t - 1) / bs - s / bs + 1 - (s / bs == last);
			last = (t - 1) / bs;
			off = t;
		}
		/* The driver refuses to write or truncate past s_maxbytes,
		 * holes or not (the size itself: check_kind); nor can the
		 * block map reach past its triple indirect blocks. */
		if (last != UINT64_MAX && last >= max_blocks)
			return pop_fail(c, ORLOV_ERR_FILE_TOO_BIG, "checking", e->path);
		c->scan.need_blocks += map_blocks_needed(c, nb);
	}
	return 0;
}

errcode_t first_pass(struct pop_ctx *c)
{
	struct walk_opts wo = { .want_xattrs = c->o->xattrs, .want_data = 1,
				.ranges_only = 1, .ahead = c->o->jobs > 1,
				.skip = c->in->skip, .nskip = c->in->nskip };
	struct walk_visitor v = {
		.enter_dir = scan_enter, .leave_dir = scan_leave,
		.leaf = scan_leaf, .error = walk_error,
		.scratch_error = walk_scratch_error, .ctx = c,
	};
	errcode_t err = casefold_begin(c);

	if (!err)
		err = source_walk(&c->in->src, &wo, &c->o->meta, c->in->dtp, &v);
	if (!err)
		err = casefold_check_paths(c);
	while (c->scan.dirs.depth > 0)	/* frames an error left */
		scan_drop(c, &c->scan.dirs.v[--c->scan.dirs.depth]);
	links_free(&c->links);	/* the write pass knows the image's inodes */
	if (err)
		return err;
	c->res->need_inodes = c->scan.need_inodes;
	c->res->need_blocks = c->scan.need_blocks;
	c->res->free_inodes = (uint64_t)percpu_counter_sum(&c->fs.freei);
	c->res->free_blocks = (uint64_t)percpu_counter_sum(&c->fs.freeb);
	c->res->block_size = c->fs.g.block_size;
	c->res->fs_blocks = c->fs.g.blocks_count;
	c->res->fs_inodes = c->fs.g.inodes_count;
	if (c->scan.need_inodes > c->res->free_inodes)
		return too_small(c, ORLOV_ERR_NO_INODES);
	if (c->scan.need_blocks > c->res->free_blocks)
		return too_small(c, ORLOV_ERR_NO_BLOCKS);
	return 0;
}
