// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-layout verify: the image subtree at PATH against SOURCE as
 * orlov-populate sees it (source/source.h: a host directory or an
 * archive, owners and times rewritten by the same rules, a device table
 * merged in).  A visitor over that same walk: each entry it yields is
 * compared with its namesake in the image directory on top of our own
 * stack, whose entries are taken in the walk's name order, so that an
 * entry on one side only is found in passing.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "layout/verify.h"
#include "lib/orlov_err.h"
#include "lib/spill.h"
#include "lib/util.h"
#include "source/source.h"
#include "source/fsconfig.h"
#include "source/tar.h"

/* Append "/name" to the image path; *ilen is the old length to restore. */
static errcode_t push_name(struct verify *v, const char *name, size_t len,
			   size_t *ilen)
{
	errcode_t err = 0;

	*ilen = v->ipath.len;
	if (v->ipath.len > 1)
		err = sb_append(&v->ipath, "/", 1);
	if (!err)
		err = sb_append(&v->ipath, name, len);
	return err;
}

static void pop_name(struct verify *v, size_t ilen)
{
	sb_truncate(&v->ipath, ilen);
}

/* Enter the image directory @ino, the namesake of the source's. */
static errcode_t push_vdir(struct verify *v, ext2_ino_t ino,
			   const struct ext2_inode_large *inode, int is_root,
			   size_t il)
{
	struct vdir *d;
	errcode_t err;

	if (grow_array(&v->dirs, &v->dcap, v->depth + 1, sizeof(*v->dirs), 64))
		return ENOMEM;
	d = &v->dirs[v->depth];
	memset(d, 0, sizeof(*d));
	d->links = inode->i_links_count;
	d->want_links = 2;
	d->is_root = is_root;
	d->il = il;
	err = ir_read_dir(v->fs, ino, &d->d);
	if (err) {
		ir_dir_free(&d->d);
		return errctx_set_path(v->ctx, err, "reading image directory",
				       v->ipath.s);
	}
	v->depth++;
	return 0;
}

/*
 * mke2fs made lost+found at the image's root: no copy of anything, but
 * a subdirectory all the same.
 */
static int lost_found(struct verify *v, struct vdir *d,
		      const struct ir_dirent *x)
{
	struct ext2_inode_large lf;

	if (!d->is_root || !v->path_is_root || x->len != 10 ||
	    memcmp(x->name, "lost+found", 10))
		return 0;
	if (!ir_read_inode(v->fs, x->ino, &lf) && LINUX_S_ISDIR(lf.i_mode))
		d->want_links++;
	return 1;
}

/* The image entries that sort before @name (all that are left when
 * NULL): SOURCE has none of them.  *match: the inode of @name, 0 if the
 * image has none. */
static errcode_t image_only(struct verify *v, const char *name, size_t len,
			    ext2_ino_t *match)
{
	struct vdir *d = &v->dirs[v->depth - 1];
	errcode_t err;

	*match = 0;
	while (d->j < d->d.n) {
		const struct ir_dirent *x = &d->d.e[d->j];
		int c = name ? name_bytes_cmp(name, len, x->name, x->len) : 1;
		size_t il;

		if (c < 0)
			break;
		d->j++;
		if (c == 0) {
			*match = x->ino;
			break;
		}
		if (lost_found(v, d, x))
			continue;
		err = push_name(v, x->name, x->len, &il);
		if (err)
			return err;
		mismatch(v, "entry", "absent", "present");
		pop_name(v, il);
	}
	return 0;
}

/* The source entry @se against its image namesake, its name left on the
 * image path (*il to go back).  *ino: the namesake when it is a directory
 * as @se is (*dinode its inode), to be entered; else 0. */
static errcode_t visit(struct verify *v, const struct src_entry *se,
		       ext2_ino_t *ino, struct ext2_inode_large *dinode,
		       size_t *il)
{
	errcode_t err = image_only(v, se->name, se->name_len, ino);
	int is_dir = 0;

	if (!err)
		err = push_name(v, se->name, se->name_len, il);
	if (err)
		return err;
	v->verified++;
	if (!*ino) {
		mismatch(v, "entry", "present", "missing");
		return 0;
	}
	err = verify_entry(v, se, *ino, &is_dir, dinode);
	if (!is_dir)
		*ino = 0;
	return err;
}

/*
 * SOURCE itself: the root's own mode, owner and times are the image's
 * (as with mke2fs -d) unless --root-owner or --root-attrs say otherwise;
 * its entries and link count are checked.
 */
static errcode_t enter_root(struct verify *v, const struct src_entry *se)
{
	struct ext2_inode_large inode;
	errcode_t err;

	v->verified++;
	err = ir_read_inode(v->fs, v->root, &inode);
	if (err)
		return errctx_set_path(v->ctx, err,
				       "reading inode of", v->ipath.s);
	err = verify_root(v, se, &inode);
	return err ? err : push_vdir(v, v->root, &inode, 1, v->ipath.len);
}

static errcode_t v_enter(void *ctx, const struct src_entry *se)
{
	struct verify *v = ctx;
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	size_t il;
	errcode_t err;

	if (v->dead) {
		v->dead++;
		return 0;
	}
	if (!v->depth)
		return enter_root(v, se);
	v->dirs[v->depth - 1].want_links++;
	err = visit(v, se, &ino, &inode, &il);
	if (err)
		return err;
	if (ino)
		return push_vdir(v, ino, &inode, 0, il);
	/* nothing to compare its entries with */
	pop_name(v, il);
	v->dead = 1;
	return 0;
}

static errcode_t v_leave(void *ctx, const struct src_entry *se)
{
	struct verify *v = ctx;
	struct vdir *d;
	ext2_ino_t none;
	errcode_t err;

	(void)se;
	if (v->dead) {
		v->dead--;
		return 0;
	}
	err = image_only(v, NULL, 0, &none);
	if (err)
		return err;
	d = &v->dirs[v->depth - 1];
	if (d->want_links != d->links)
		mismatch_u(v, "links", d->want_links, d->links);
	pop_name(v, d->il);
	ir_dir_free(&d->d);
	v->depth--;
	return 0;
}

static errcode_t v_leaf(void *ctx, const struct src_entry *se)
{
	struct verify *v = ctx;
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	size_t il;
	errcode_t err;

	if (v->dead)
		return 0;
	err = visit(v, se, &ino, &inode, &il);
	if (!err)
		pop_name(v, il);
	return err;
}

static void v_error(void *ctx, errcode_t err, const char *what,
		    const char *path)
{
	verify_src_error(ctx, err, what, path);
}

static int vlink_cmp(const void *a, const void *b)
{
	const struct vlink *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->alone != y->alone)
		return x->alone < y->alone ? -1 : 1;
	return ir_path_cmp(x->path, y->path);
}

/*
 * Paths sharing a source inode must share one image inode whose link
 * count is the number of such paths under SOURCE (links from outside
 * SOURCE were never copied).
 */
static errcode_t check_links(struct verify *v)
{
	size_t i, j, k;

	if (v->nlinks > 1)
		qsort(v->links, v->nlinks, sizeof(*v->links), vlink_cmp);
	for (i = 0; i < v->nlinks; i = j) {
		for (j = i + 1; j < v->nlinks &&
		     v->links[j].dev == v->links[i].dev &&
		     v->links[j].ino == v->links[i].ino &&
		     v->links[j].alone == v->links[i].alone; j++)
			;
		for (k = i; k < j; k++) {
			sb_truncate(&v->ipath, 0);
			if (sb_append(&v->ipath, v->links[k].path,
				      strlen(v->links[k].path)))
				return ENOMEM;
			if (v->links[k].img != v->links[i].img)
				mismatch_u(v, "inode shared with hard links",
					   v->links[i].img, v->links[k].img);
			else if (v->links[k].img_links != j - i)
				mismatch_u(v, "links", j - i,
					   v->links[k].img_links);
		}
	}
	return 0;
}

/* SOURCE as orlov-populate takes it: a directory (through a symlink to
 * one too), else an archive ("-": standard input), read once. */
static errcode_t open_source(const struct layout_opts *o, struct source *src,
			     struct errctx *ctx)
{
	struct tar_tree *t;
	char *msg = NULL, *member = NULL;
	const char *scratch = NULL;
	struct stat st;
	errcode_t err;

	memset(src, 0, sizeof(*src));
	src->dir = o->source;
	if (strcmp(o->source, "-")) {
		if (stat(o->source, &st))
			return errctx_set_path(ctx, errno,
					       "opening", o->source);
		if (S_ISDIR(st.st_mode))
			return 0;
		/* libarchive reads an image's zeros as an empty archive */
		if (!ir_check_super(o->source, NULL))
			return errctx_set_path(ctx, ORLOV_ERR_SOURCE_IS_FS,
					       "reading",
					       o->source);
	}
	err = tar_load(o->source, &t, &msg, &member, &scratch);
	if (!err) {
		src->tar = t;
		return 0;
	}
	if (scratch)	/* TMPDIR's, not the archive's */
		spill_error(ctx, err, scratch);
	if (!errctx_isset(ctx)) {
		errctx_set_path(ctx, err, "reading archive", o->source);
		if (member) {
			errctx_add(ctx, " member ");
			errctx_add_escaped(ctx, member);
		}
		if (msg)
			errctx_add(ctx, " (%s)", msg);
	}
	free(msg);
	free(member);
	return err;
}

static errcode_t open_devtable(const char *path, struct devtable *dt,
			       struct errctx *ctx)
{
	unsigned int line;
	errcode_t err = devtable_read(path, dt, &line);

	if (err && !errctx_isset(ctx)) {
		errctx_set_path(ctx, err, "reading device table", path);
		if (line)
			errctx_add(ctx, " line %u", line);
	}
	return err;
}

/* --fs-config's table; a malformed line is named. */
static errcode_t open_fs_config(const char *path, struct fsconfig *fc,
				struct errctx *ctx)
{
	unsigned int line;
	errcode_t err = fsconfig_read(path, fc, &line);

	if (err && !errctx_isset(ctx)) {
		errctx_set_path(ctx, err, "reading fs_config", path);
		if (line)
			errctx_add(ctx, " line %u", line);
	}
	return err;
}

/* The image side: PATH, a directory. */
static errcode_t open_target(struct verify *v, const struct layout_opts *o)
{
	struct ext2_inode_large inode;
	errcode_t err;

	err = open_image(o, o->image, &v->fs, v->ctx);
	if (!err)
		err = errctx_set_path(v->ctx, ir_lookup(v->fs,
				      o->path, &v->root),
				      "looking up", o->path);
	if (!err)
		err = errctx_set_path(v->ctx, ir_read_inode(v->fs,
				      v->root, &inode),
				      "reading inode of", o->path);
	if (!err && !LINUX_S_ISDIR(inode.i_mode))
		err = errctx_set_path(v->ctx, ORLOV_ERR_NOT_DIR,
				      "verifying", o->path);
	if (!err) {
		v->sbuf = malloc(VBUF_SIZE);
		v->ibuf = malloc(VBUF_SIZE);
		if (!v->sbuf || !v->ibuf)
			err = ENOMEM;
	}
	if (!err)
		err = sb_append(&v->ipath, o->path, strlen(o->path));
	return err;
}

static void verify_free(struct verify *v)
{
	size_t i;

	while (v->depth)
		ir_dir_free(&v->dirs[--v->depth].d);
	free(v->dirs);
	for (i = 0; i < v->nlinks; i++)
		free(v->links[i].path);
	free(v->links);
	keymap_free(&v->by_ino);
	free(v->sbuf);
	free(v->ibuf);
	sb_free(&v->ipath);
	if (v->fs)
		ext2fs_close_free(&v->fs);
}

errcode_t layout_verify(const struct layout_opts *o, struct errctx *ctx)
{
	struct verify v;
	struct source src = { 0 };
	struct devtable dt, *dtp = NULL;
	struct fsconfig fc = { 0 };
	/* labels and fs_config lines are looked up by the path in the image */
	struct meta_rules meta = o->meta;
	struct walk_opts wo = { .want_xattrs = o->xattrs, .want_data = 1 };
	struct walk_visitor vis = {
		.enter_dir = v_enter, .leave_dir = v_leave, .leaf = v_leaf,
		.error = v_error, .ctx = &v,
	};
	errcode_t err;

	memset(&v, 0, sizeof(v));
	v.ctx = ctx;
	v.opts = o;
	v.path_is_root = !strcmp(o->path, "/");
	err = open_target(&v, o);
	if (!err)
		err = open_source(o, &src, ctx);
	if (!err && o->devtable) {
		err = open_devtable(o->devtable, &dt, ctx);
		dtp = err ? NULL : &dt;
	}
	meta.label_root = o->path;
	if (!err && o->fs_config) {
		err = open_fs_config(o->fs_config, &fc, ctx);
		meta.fs_config = &fc;
	}
	if (!err)
		err = source_walk(&src, &wo, &meta, dtp, &vis);
	if (!err)
		err = check_links(&v);
	if (!err) {
		printf("verified=%llu mismatches=%llu\n", v.verified,
		       v.mismatches);
		err = check_output(ctx);
	}
	if (!err && v.mismatches)
		err = ORLOV_ERR_MISMATCH;
	if (dtp)
		devtable_free(dtp);
	fsconfig_free(&fc);
	tar_free((struct tar_tree *)src.tar);
	verify_free(&v);
	return err;
}
