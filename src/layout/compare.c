// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-layout verify: one source entry against its image namesake. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "lib/ftype.h"
#include "layout/verify.h"
#include "lib/orlov_err.h"
#include "lib/util.h"

void mismatch(struct verify *v, const char *what, const char *exp,
	      const char *got)
{
	v->mismatches++;
	fputs("mismatch: ", stdout);
	fput_escaped(stdout, v->ipath.s, v->ipath.len);
	printf(": %s (expected %s, got %s)\n", what, exp, got);
}

void mismatch_u(struct verify *v, const char *what, unsigned long long exp,
		unsigned long long got)
{
	char e[32], g[32];

	snprintf(e, sizeof(e), "%llu", exp);
	snprintf(g, sizeof(g), "%llu", got);
	mismatch(v, what, e, g);
}

/* A source error, once, with the path of SOURCE it happened at. */
errcode_t verify_src_error(struct verify *v, errcode_t err, const char *doing,
			   const char *path)
{
	const char *src = v->opts->source;
	struct strbuf p = { 0 };

	if (!err || errctx_isset(v->ctx))
		return err;
	if (!sb_append(&p, src, strlen(src)) && *path &&
	    !sb_append(&p, "/", 1))
		sb_append(&p, path, strlen(path));
	errctx_set_path(v->ctx, err, doing, p.s ? p.s : src);
	sb_free(&p);
	return err;
}

errcode_t vfail(struct verify *v, const struct src_entry *se, errcode_t err,
		const char *doing)
{
	return verify_src_error(v, err, doing, se->path);
}

/* Only the namespaces ext2 stores; others (e.g. system.nfs4_acl) can't be. */
static int xattr_wanted(const char *name)
{
	return !strncmp(name, "user.", 5) || !strncmp(name, "trusted.", 8) ||
	       !strncmp(name, "security.", 9) ||
	       !strcmp(name, "system.posix_acl_access") ||
	       !strcmp(name, "system.posix_acl_default");
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct ir_xattr *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The entry's attributes that the image can hold, sorted by name.  The
 * names and values stay the walk's. */
static errcode_t src_xattrs(const struct src_entry *e, struct ir_xattrs *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->a = calloc(e->nxattrs ? e->nxattrs : 1, sizeof(*out->a));
	if (!out->a)
		return ENOMEM;
	for (i = 0; i < e->nxattrs; i++) {
		if (!xattr_wanted(e->xattrs[i].name))
			continue;
		out->a[out->n].name = e->xattrs[i].name;
		out->a[out->n].value = e->xattrs[i].value;
		out->a[out->n++].len = e->xattrs[i].size;
	}
	if (out->n > 1)
		qsort(out->a, out->n, sizeof(*out->a), xattr_cmp);
	return 0;
}

static errcode_t escaped(struct strbuf *b, const void *s, size_t n)
{
	sb_truncate(b, 0);
	if (!n)
		return sb_append(b, "\"\"", 2);
	return sb_escaped(b, s, n);
}

static errcode_t compare_xattrs(struct verify *v, const struct src_entry *se,
				ext2_ino_t ino, const struct ext2_inode_large *inode)
{
	struct ir_xattrs sx, ix;
	struct strbuf what = { 0 }, e = { 0 }, g = { 0 };
	size_t i = 0, j = 0;
	errcode_t err;

	err = src_xattrs(se, &sx);
	if (err)
		return err;
	err = ir_read_xattrs(v->fs, ino, inode, &ix);
	if (err == ORLOV_ERR_CORRUPT) {
		/* Corruption is what verify is for: report it, go on. */
		if (ix.corrupt & IR_XATTR_BAD_INODE)
			mismatch(v, "in-inode xattrs", "valid", "corrupt");
		if (ix.corrupt & IR_XATTR_BAD_BLOCK)
			mismatch(v, "xattr block", "valid", "corrupt");
		free(sx.a);
		return 0;
	}
	if (err) {
		free(sx.a);
		return errctx_set_path(v->ctx, err,
				       "reading extended attributes of",
				       v->ipath.s);
	}
	while (!err && (i < sx.n || j < ix.n)) {
		int c = i >= sx.n ? 1 : j >= ix.n ? -1 :
			strcmp(sx.a[i].name, ix.a[j].name);
		const struct ir_xattr *x = c <= 0 ? &sx.a[i] : &ix.a[j];
		size_t copies = 0, in_inode = 0;

		/* The image's copies of this name: more than one (in the
		 * inode and the block, or twice in one) is corruption; the
		 * first is the one ext4 reads, compared below. */
		while (c >= 0 && j + copies < ix.n &&
		       !strcmp(ix.a[j + copies].name, ix.a[j].name))
			in_inode += ix.a[j + copies++].in_inode != 0;
		sb_truncate(&what, 0);
		err = sb_append(&what, "xattr ", 6);
		if (!err)
			err = sb_escaped(&what, x->name, strlen(x->name));
		if (err)
			break;
		if (copies > 1) {
			char got[64];

			if (in_inode && in_inode < copies)
				snprintf(got, sizeof(got),
					 "in the inode and the block");
			else
				snprintf(got, sizeof(got), "%zu copies in the %s",
					 copies, in_inode ? "inode" : "block");
			mismatch(v, what.s, "one copy", got);
		}
		if (c < 0) {
			mismatch(v, what.s, "present", "missing");
		} else if (c > 0) {
			mismatch(v, what.s, "absent", "present");
		} else if (sx.a[i].len != ix.a[j].len ||
			   memcmp(sx.a[i].value, ix.a[j].value,
				  sx.a[i].len)) {
			err = escaped(&e, sx.a[i].value, sx.a[i].len);
			if (!err)
				err = escaped(&g, ix.a[j].value, ix.a[j].len);
			if (!err)
				mismatch(v, what.s, e.s, g.s);
		}
		i += c <= 0;
		j += c >= 0 ? copies : 0;
	}
	sb_free(&what);
	sb_free(&e);
	sb_free(&g);
	free(sx.a);
	ir_xattrs_free(&ix);
	return err;
}

/*
 * Where an image file has blocks that may read as non-zero, in ascending
 * order and without a list of them: a 16 TiB sparse file must cost
 * verify the time of its data, not of its size.  An extent tree is
 * walked leaf by leaf through libext2fs's handle (ir_block_map has
 * already checked it), unwritten extents passed over as they read as
 * zeros; an indirect map is searched from the top at each step, a zero
 * pointer's whole subtree skipped, in one block buffer per level.
 */
struct imap {
	ext2_filsys fs;
	const struct ext2_inode_large *inode;
	ext2_extent_handle_t h;		/* extent-mapped; else indirect */
	struct ext2fs_extent ext;	/* the handle's current leaf extent */
	int at_end;			/* no extent at or after @ext */
	int all;			/* inline data: all of it is data */
	unsigned char *buf;		/* indirect: a block per level */
};

#define IMAP_NONE (~(blk64_t)0)

static errcode_t imap_open(ext2_filsys fs, ext2_ino_t ino,
			   struct ext2_inode_large *inode, struct imap *m)
{
	errcode_t err;

	memset(m, 0, sizeof(*m));
	m->fs = fs;
	m->inode = inode;
	if (!ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode)) {
		m->all = 1;
		return 0;
	}
	if (!(inode->i_flags & EXT4_EXTENTS_FL))
		return ext2fs_get_array(3, fs->blocksize, &m->buf);
	err = ext2fs_extent_open2(fs, ino, (struct ext2_inode *)inode, &m->h);
	if (!err)
		err = ext2fs_extent_get(m->h, EXT2_EXTENT_ROOT, &m->ext);
	/* the root of a deeper tree is an index: go down to a leaf */
	if (!err && !(m->ext.e_flags & EXT2_EXTENT_FLAGS_LEAF))
		err = ext2fs_extent_get(m->h, EXT2_EXTENT_NEXT_LEAF, &m->ext);
	if (err == EXT2_ET_EXTENT_NO_NEXT || err == EXT2_ET_NO_CURRENT_NODE) {
		m->at_end = 1;	/* no extent at all: an empty file */
		err = 0;
	}
	return err;
}

static void imap_close(struct imap *m)
{
	if (m->h)
		ext2fs_extent_free(m->h);
	ext2fs_free_mem(&m->buf);
}

/* The first written extent that ends after @from: [*s, *e). */
static errcode_t imap_next_extent(struct imap *m, blk64_t from, blk64_t *s,
				  blk64_t *e)
{
	const struct ext2fs_extent *x = &m->ext;
	errcode_t err;

	while (!m->at_end) {
		if (!(x->e_flags & EXT2_EXTENT_FLAGS_UNINIT) &&
		    x->e_lblk + x->e_len > from) {
			*s = x->e_lblk > from ? x->e_lblk : from;
			*e = x->e_lblk + x->e_len;
			return 0;
		}
		err = ext2fs_extent_get(m->h, EXT2_EXTENT_NEXT_LEAF, &m->ext);
		if (err == EXT2_ET_EXTENT_NO_NEXT)
			m->at_end = 1;
		else if (err)
			return err;
	}
	return 0;
}

/*
 * Below the @n block pointers @p at @level (0: they point at data),
 * mapping from logical block @base on: the first run of mapped blocks
 * at or after @from, within one pointer block.  *s == *e when none.
 */
static errcode_t ind_find(struct imap *m, const uint32_t *p, blk64_t n,
			  unsigned int level, blk64_t base, blk64_t from,
			  blk64_t *s, blk64_t *e)
{
	ext2_filsys fs = m->fs;
	blk64_t per = fs->blocksize / 4, span = 1, i, b;
	unsigned char *child;
	unsigned int k;
	errcode_t err;

	for (k = 0; k < level; k++)
		span *= per;
	for (i = from > base ? (from - base) / span : 0; i < n; i++) {
		b = ext2fs_le32_to_cpu(p[i]);
		if (!b)
			continue;
		if (!level) {
			*s = base + i;
			while (i + 1 < n && p[i + 1])
				i++;
			*e = base + i + 1;
			return 0;
		}
		if (b < fs->super->s_first_data_block ||
		    b >= ext2fs_blocks_count(fs->super))
			return EXT2_ET_BAD_IND_BLOCK;
		child = m->buf + (size_t)(level - 1) * fs->blocksize;
		err = io_channel_read_blk64(fs->io, b, 1, child);
		if (!err)
			err = ind_find(m, (const uint32_t *)child, per,
				       level - 1, base + i * span, from, s, e);
		if (err || *s != *e)
			return err;
	}
	return 0;
}

/* The first run of blocks at or after @from that may hold data, in
 * blocks: [*s, *e), both IMAP_NONE when none. */
static errcode_t imap_next(struct imap *m, blk64_t from, blk64_t *s,
			   blk64_t *e)
{
	const uint32_t *ib = m->inode->i_block;
	blk64_t per = m->fs->blocksize / 4, base = EXT2_NDIR_BLOCKS, span = per;
	unsigned int level;
	errcode_t err;

	*s = *e = 0;
	if (m->all) {
		*s = from;
		*e = IMAP_NONE;
		return 0;
	}
	if (m->h)
		err = imap_next_extent(m, from, s, e);
	else
		err = ind_find(m, ib, EXT2_NDIR_BLOCKS, 0, 0, from, s, e);
	for (level = 1; !err && !m->h && *s == *e && level <= 3; level++) {
		err = ind_find(m, ib + EXT2_NDIR_BLOCKS + level - 1, 1, level,
			       base, from, s, e);
		base += span;
		span *= per;
	}
	if (!err && *s == *e)
		*s = *e = IMAP_NONE;
	return err;
}

/* [lo, hi) of the source and the image file, byte for byte; the first
 * difference reported. */
static errcode_t compare_range(struct verify *v, const struct src_entry *se,
			       ext2_file_t f, uint64_t lo, uint64_t hi)
{
	uint64_t off = lo;
	errcode_t err;

	err = ext2fs_file_llseek(f, lo, EXT2_SEEK_SET, NULL);
	if (err)
		return errctx_set_path(v->ctx, err, "reading image file",
				       v->ipath.s);
	while (off < hi) {
		size_t r = hi - off < VBUF_SIZE ? (size_t)(hi - off) : VBUF_SIZE;
		unsigned int got;
		size_t k;

		err = se->data->read(se, v->sbuf, r, off);
		if (err)
			return vfail(v, se, err, "reading");
		err = ext2fs_file_read(f, v->ibuf, (unsigned int)r, &got);
		if (err)
			return errctx_set_path(v->ctx, err,
					       "reading image file", v->ipath.s);
		if (memcmp(v->sbuf, v->ibuf, got) || got < r) {
			char what[64], e[8], g[16];

			for (k = 0; k < got && v->sbuf[k] == v->ibuf[k]; k++)
				;
			snprintf(what, sizeof(what), "data at offset %llu",
				 (unsigned long long)(off + k));
			snprintf(e, sizeof(e), "0x%02x", v->sbuf[k]);
			if (k < got)
				snprintf(g, sizeof(g), "0x%02x", v->ibuf[k]);
			else
				snprintf(g, sizeof(g), "end of file");
			mismatch(v, what, e, g);
			return 0;
		}
		off += r;
	}
	return 0;
}

/* The next range of either side that may hold data, each side's range
 * [*s, *e) kept till @off passes it; @n (the end compared) when none. */
static errcode_t next_ranges(struct verify *v, const struct src_entry *se,
			     struct imap *m, uint64_t off, uint64_t n,
			     uint64_t r[4])
{
	uint64_t bs = v->fs->blocksize;
	blk64_t s, e;
	errcode_t err;

	if (r[1] <= off) {
		err = se->data->next_data(se, off, &r[0], &r[1]);
		if (err)
			return vfail(v, se, err, "reading");
		r[1] = r[1] < n ? r[1] : n;
		if (r[0] >= r[1])
			r[0] = r[1] = n;
	}
	if (r[3] <= off) {
		err = imap_next(m, off / bs, &s, &e);
		if (err)
			return errctx_set_path(v->ctx, err, "reading block map of",
					       v->ipath.s);
		/* in bytes, @n at or past it (IMAP_NONE too), no overflow */
		r[2] = s <= n / bs ? s * bs : n;
		r[3] = e <= n / bs ? e * bs : n;
		if (r[2] >= r[3])
			r[2] = r[3] = n;
	}
	return 0;
}

/*
 * The file's data, compared only where either side may hold some: a
 * range that is a hole in the source (SEEK_HOLE) and a hole or an
 * unwritten extent in the image reads as zeros on both and is skipped.
 * Where one side has data and the other a hole, the read of the hole
 * gives the zeros the data must be.
 */
static errcode_t compare_data(struct verify *v, const struct src_entry *se,
			      ext2_ino_t ino, struct ext2_inode_large *inode)
{
	uint64_t isize = EXT2_I_SIZE(inode), off = 0, lo, hi;
	uint64_t ssize = (uint64_t)se->st.st_size;
	uint64_t n = ssize < isize ? ssize : isize;
	uint64_t r[4] = { 0, 0, 0, 0 };	/* source, image: [start, end) */
	unsigned long long before = v->mismatches;
	struct imap m;
	ext2_file_t f;
	errcode_t err, err2;

	err = imap_open(v->fs, ino, inode, &m);
	if (err) {
		imap_close(&m);
		return errctx_set_path(v->ctx, err, "reading block map of",
				       v->ipath.s);
	}
	err = ext2fs_file_open2(v->fs, ino, (struct ext2_inode *)inode, 0, &f);
	if (err) {
		imap_close(&m);
		return errctx_set_path(v->ctx, err,
				       "opening image file", v->ipath.s);
	}
	while (!err && off < n && v->mismatches == before) {
		err = next_ranges(v, se, &m, off, n, r);
		if (err)
			break;
		lo = r[0] < r[2] ? r[0] : r[2];
		lo = lo > off ? lo : off;
		if (lo >= n)
			break;
		hi = r[0] <= lo && lo < r[1] ? r[1] : 0;
		if (r[2] <= lo && lo < r[3] && r[3] > hi)
			hi = r[3];
		err = compare_range(v, se, f, lo, hi);
		off = hi;
	}
	imap_close(&m);
	err2 = ext2fs_file_close(f);
	return err ? err : err2;
}

static void compare_time(struct verify *v, const char *what,
			 const struct ext2_inode_large *inode,
			 enum ir_time which, const struct timespec *ts)
{
	int64_t sec, tmin, tmax;
	uint32_t nsec;
	int has_nsec;
	char e[48], g[48];
	struct timespec want = *ts;

	/* what orlov-populate stored: the time the inode can hold */
	meta_time_range(EXT2_INODE_SIZE(v->fs->super) >=
			EXT2_GOOD_OLD_INODE_SIZE + 32, &tmin, &tmax);
	meta_fit_time(&want, tmin, tmax);
	ts = &want;
	ir_inode_time(v->fs, inode, which, &sec, &nsec, &has_nsec);
	if (sec == (int64_t)ts->tv_sec &&
	    (!has_nsec || nsec == (uint32_t)ts->tv_nsec))
		return;
	if (has_nsec) {
		snprintf(e, sizeof(e), "%lld.%09ld", (long long)ts->tv_sec,
			 (long)ts->tv_nsec);
		snprintf(g, sizeof(g), "%lld.%09lu", (long long)sec,
			 (unsigned long)nsec);
	} else {
		snprintf(e, sizeof(e), "%lld", (long long)ts->tv_sec);
		snprintf(g, sizeof(g), "%lld", (long long)sec);
	}
	mismatch(v, what, e, g);
}

/*
 * A non-directory, for the hard link check at the end.  Only a source
 * file with more than one link can share its inode (as orlov-populate
 * decides): the others, device table entries among them (which have no
 * inode number), each get a key of their own.
 */
static errcode_t record_link(struct verify *v, const struct stat *st,
			     ext2_ino_t ino,
			     const struct ext2_inode_large *inode)
{
	struct vlink *l;
	size_t pos;

	if (grow_array(&v->links, &v->cap, v->nlinks + 1, sizeof(*v->links), 256))
		return ENOMEM;
	l = &v->links[v->nlinks];
	memset(l, 0, sizeof(*l));
	l->path = strdup(v->ipath.s);
	if (!l->path)
		return ENOMEM;
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->alone = st->st_nlink > 1 ? 0 : v->nlinks + 1;
	l->mode = st->st_mode;
	l->uid = st->st_uid;
	l->gid = st->st_gid;
	l->rdev = st->st_rdev;
	l->img = ino;
	l->img_links = inode->i_links_count;
	v->nlinks++;
	if (l->alone)
		return 0;
	if (!keymap_get(&v->by_ino, (uint64_t)st->st_ino, &pos))
		return keymap_add(&v->by_ino, (uint64_t)st->st_ino,
				  v->nlinks - 1);
	while (v->links[pos].same_ino)
		pos = v->links[pos].same_ino - 1;
	v->links[pos].same_ino = v->nlinks;
	return 0;
}

/*
 * What the image inode of @st holds: the first path of a source inode
 * with hard links made it, a later one is only linked to it (as ln
 * does), whatever a device table line says of that path.  1 for such
 * a later path.
 */
static int expected(const struct verify *v, const struct stat *st,
		    struct stat *want)
{
	const struct vlink *l;
	size_t pos;

	*want = *st;
	if (S_ISDIR(st->st_mode) || st->st_nlink <= 1 ||
	    !keymap_get(&v->by_ino, (uint64_t)st->st_ino, &pos))
		return 0;
	for (;;) {
		l = &v->links[pos];
		if (!l->alone && l->dev == st->st_dev && l->ino == st->st_ino)
			break;
		if (!l->same_ino)
			return 0;
		pos = l->same_ino - 1;
	}
	want->st_mode = l->mode;
	want->st_uid = l->uid;
	want->st_gid = l->gid;
	want->st_rdev = l->rdev;
	return 1;
}

static void compare_owner(struct verify *v, const struct stat *st,
			  const struct ext2_inode_large *inode)
{
	if (st->st_uid != inode_uid(*inode))
		mismatch_u(v, "uid", st->st_uid, inode_uid(*inode));
	if (st->st_gid != inode_gid(*inode))
		mismatch_u(v, "gid", st->st_gid, inode_gid(*inode));
}

static void compare_mode(struct verify *v, const struct stat *st,
			 const struct ext2_inode_large *inode)
{
	char e[64], g[64];

	if ((st->st_mode & 07777) != (inode->i_mode & 07777)) {
		snprintf(e, sizeof(e), "%04o", (unsigned)(st->st_mode & 07777));
		snprintf(g, sizeof(g), "%04o", (unsigned)(inode->i_mode & 07777));
		mismatch(v, "mode", e, g);
	}
}

/* The inode's fields against the source's (types already the same). */
static void compare_fields(struct verify *v, const struct stat *st,
			   const struct ext2_inode_large *inode)
{
	compare_mode(v, st, inode);
	compare_owner(v, st, inode);
	/* A directory's size depends on the host filesystem: not compared. */
	if ((S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) &&
	    (uint64_t)st->st_size != EXT2_I_SIZE(inode))
		mismatch_u(v, "size", (unsigned long long)st->st_size,
			   EXT2_I_SIZE(inode));
	compare_time(v, "mtime", inode, IR_MTIME, &st->st_mtim);
	compare_time(v, "ctime", inode, IR_CTIME, &st->st_ctim);
}

static errcode_t compare_symlink(struct verify *v, const struct src_entry *se,
				 ext2_ino_t ino, struct ext2_inode_large *inode)
{
	struct strbuf it = { 0 }, a = { 0 }, b = { 0 };
	errcode_t err;

	err = ir_symlink_target(v->fs, ino, inode, &it);
	if (err == ORLOV_ERR_CORRUPT) {
		mismatch(v, "symlink target", "readable", "corrupt");
		err = 0;
	} else if (err) {
		err = errctx_set_path(v->ctx, err,
				      "reading symlink", v->ipath.s);
	} else if (se->link_len != it.len ||
		   memcmp(se->link_target, it.s, it.len)) {
		err = escaped(&a, se->link_target, se->link_len);
		if (!err)
			err = escaped(&b, it.s, it.len);
		if (!err)
			mismatch(v, "symlink target", a.s, b.s);
	}
	sb_free(&it);
	sb_free(&a);
	sb_free(&b);
	return err;
}

static void compare_rdev(struct verify *v, const struct stat *st,
			 const struct ext2_inode_large *inode)
{
	unsigned int ma, mi;
	char e[64], g[64];

	ir_rdev(inode, &ma, &mi);
	if (ma != major(st->st_rdev) || mi != minor(st->st_rdev)) {
		snprintf(e, sizeof(e), "%u:%u", major(st->st_rdev),
			 minor(st->st_rdev));
		snprintf(g, sizeof(g), "%u:%u", ma, mi);
		mismatch(v, "rdev", e, g);
	}
}

/*
 * What the inode maps, read as ext4 reads it: a damaged extent tree
 * stops verify (nothing it maps can be compared).  Its i_blocks must
 * count every block of the map, extent tree or indirect blocks
 * included, and the attribute block.
 */
static errcode_t compare_blocks(struct verify *v, ext2_ino_t ino,
				struct ext2_inode_large *inode)
{
	ext2_filsys fs = v->fs;
	struct ir_map m;
	unsigned long long want, got;
	errcode_t err = ir_block_map(fs, ino, inode, &m);

	if (err) {
		errctx_set_path(v->ctx, err, ir_extent_error(err) ?
				"reading extent tree of" : "reading block map of",
				v->ipath.s);
		if (ir_extent_error(err))
			errctx_add(v->ctx, " (%s)", m.bad);
		return err;
	}
	want = m.all.n;
	ir_map_free(&m);
	/* bigalloc counts clusters: not a layout this tool reads */
	if (ext2fs_has_feature_bigalloc(fs->super))
		return 0;
	want += ext2fs_file_acl_block(fs, (struct ext2_inode *)inode) != 0;
	want *= fs->blocksize / 512;
	got = ext2fs_get_stat_i_blocks(fs, (struct ext2_inode *)inode);
	if (want != got)
		mismatch_u(v, "i_blocks (512-byte units, from the block map)",
			   want, got);
	return 0;
}

/* One source entry against its image namesake (its path pushed).  A
 * directory's own entries are the walk's: *is_dir says whether to go
 * into it, with its inode in *dinode. */
errcode_t verify_entry(struct verify *v, const struct src_entry *se,
		       ext2_ino_t ino, int *is_dir,
		       struct ext2_inode_large *dinode)
{
	struct stat want;
	const struct stat *st = &want;
	struct ext2_inode_large inode;
	const char *stype, *itype;
	errcode_t err = 0;
	int later;

	*is_dir = 0;
	later = expected(v, &se->st, &want);
	err = ir_read_inode(v->fs, ino, &inode);
	if (err)
		return errctx_set_path(v->ctx, err,
				       "reading inode of", v->ipath.s);
	stype = ftype_name_of_mode(st->st_mode);
	itype = ir_type_name(inode.i_mode);
	if (!stype)
		return vfail(v, se, ORLOV_ERR_UNSUPP_FILETYPE, "examining");
	if (!itype || strcmp(stype, itype)) {
		/* Nothing else is comparable across types. */
		mismatch(v, "type", stype, itype ? itype : "invalid");
		return 0;
	}
	compare_fields(v, st, &inode);
	err = compare_blocks(v, ino, &inode);
	if (!err && !S_ISDIR(st->st_mode))
		err = record_link(v, st, ino, &inode);
	/* a later link's attributes are its first path's, compared there:
	 * a label or fs_config line of its own path is not the inode's */
	if (!err && v->opts->xattrs && !later)
		err = compare_xattrs(v, se, ino, &inode);
	if (!err && S_ISREG(st->st_mode))
		err = compare_data(v, se, ino, &inode);
	if (!err && S_ISLNK(st->st_mode))
		err = compare_symlink(v, se, ino, &inode);
	if (!err && (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)))
		compare_rdev(v, st, &inode);
	if (!err && S_ISDIR(st->st_mode)) {
		*is_dir = 1;
		*dinode = inode;
	}
	return err;
}

errcode_t verify_root(struct verify *v, const struct src_entry *se,
		      const struct ext2_inode_large *inode)
{
	const struct layout_opts *o = v->opts;
	struct stat st = se->st;

	if (o->root_owner) {
		st.st_uid = o->root_uid;
		st.st_gid = o->root_gid;
	}
	if (!o->root_attrs) {
		/* a device table line for "/" gives the mode and owners */
		if (se->table_attrs)
			compare_mode(v, &st, inode);
		if (o->root_owner || se->table_attrs)
			compare_owner(v, &st, inode);
		return 0;
	}
	compare_fields(v, &st, inode);
	return o->xattrs ? compare_xattrs(v, se, v->root, inode) : 0;
}
