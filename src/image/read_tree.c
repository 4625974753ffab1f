// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read-only, for orlov-layout: image paths (order, normal form, lookup),
 * inodes, sorted directory listings and the depth-first walk over them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ftype.h"
#include "image/image_read.h"
#include "lib/names.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

int ir_path_cmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;

	for (; *p && *p == *q; p++, q++)
		;
	if (*p == *q)
		return 0;
	/* End of string first, then the separator, then any name byte. */
	if (!*p)
		return -1;
	if (!*q)
		return 1;
	if (*p == '/')
		return -1;
	if (*q == '/')
		return 1;
	return *p < *q ? -1 : 1;
}

errcode_t ir_normalize_path(const char *in, char **out)
{
	size_t n = strlen(in), i, o = 0;
	char *p = malloc(n + 2);

	if (!p)
		return ENOMEM;
	p[o++] = '/';
	for (i = 0; i < n; i++) {
		if (in[i] == '/' && p[o - 1] == '/')
			continue;
		p[o++] = in[i];
	}
	if (o > 1 && p[o - 1] == '/')
		o--;
	p[o] = '\0';
	*out = p;
	return 0;
}

errcode_t ir_lookup(ext2_filsys fs, const char *path, ext2_ino_t *ino)
{
	return ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, ino);
}

errcode_t ir_read_inode(ext2_filsys fs, ext2_ino_t ino,
			struct ext2_inode_large *inode)
{
	memset(inode, 0, sizeof(*inode));
	return ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)inode,
				      sizeof(*inode));
}

struct dir_collect {
	struct ir_dir *d;
	errcode_t err;
};

static int collect_dirent(ext2_ino_t dir, int entry,
			  struct ext2_dir_entry *dirent, int offset,
			  int blocksize, char *buf, void *priv)
{
	struct dir_collect *dc = priv;
	struct ir_dir *d = dc->d;
	size_t len = (size_t)ext2fs_dirent_name_len(dirent);
	struct ir_dirent *e;

	if ((len == 1 && dirent->name[0] == '.') ||
	    (len == 2 && dirent->name[0] == '.' && dirent->name[1] == '.'))
		return 0;
	if (grow_array(&d->e, &d->cap, d->n + 1, sizeof(*d->e), 16)) {
		dc->err = ENOMEM;
		return DIRENT_ABORT;
	}
	e = &d->e[d->n];
	e->name = malloc(len + 1);
	if (!e->name) {
		dc->err = ENOMEM;
		return DIRENT_ABORT;
	}
	memcpy(e->name, dirent->name, len);
	e->name[len] = '\0';
	e->len = len;
	e->ino = dirent->inode;
	d->n++;
	return 0;
}

static int dirent_cmp(const void *a, const void *b)
{
	const struct ir_dirent *x = a, *y = b;

	return name_bytes_cmp(x->name, x->len, y->name, y->len);
}

errcode_t ir_read_dir(ext2_filsys fs, ext2_ino_t dir, struct ir_dir *out)
{
	struct dir_collect dc = { out, 0 };
	struct ext2_inode_large inode;
	struct ir_map m;
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/* An extent tree is checked as ext4 checks it before libext2fs,
	 * which checks less, walks it. */
	err = ir_read_inode(fs, dir, &inode);
	if (!err && (inode.i_flags & EXT4_EXTENTS_FL)) {
		err = ir_block_map(fs, dir, &inode, &m);
		ir_map_free(&m);
	}
	if (err)
		return err;
	err = ext2fs_dir_iterate2(fs, dir, 0, NULL, collect_dirent, &dc);
	if (!err)
		err = dc.err;
	if (err) {
		ir_dir_free(out);
		return err;
	}
	if (out->n > 1)
		qsort(out->e, out->n, sizeof(*out->e), dirent_cmp);
	return 0;
}

void ir_dir_free(struct ir_dir *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	memset(d, 0, sizeof(*d));
}

struct walk {
	ext2_filsys fs;
	ir_walk_fn fn;
	void *priv;
	ext2fs_inode_bitmap seen;	/* directories entered */
	struct strbuf path;
	const char *doing;		/* for the error context */
	ext2_ino_t ino;			/* the inode being visited */
};

/* A directory being walked: the walk keeps its own stack, so that no
 * depth of tree overflows the C one. */
struct wframe {
	struct ir_dir d;
	size_t next;
	size_t plen;		/* length of its path */
};

/* Report @ino (at w->path) and, if a directory, push its entries. */
static errcode_t visit_ino(struct walk *w, ext2_ino_t ino,
			   struct wframe **stack, size_t *cap, size_t *depth)
{
	struct ext2_inode_large inode;
	struct wframe *f;
	errcode_t err;

	w->doing = "reading inode of";
	w->ino = ino;
	err = ir_read_inode(w->fs, ino, &inode);
	if (err)
		return err;
	w->doing = "examining";
	err = w->fn(w->path.s, ino, &inode, w->priv);
	if (err || !LINUX_S_ISDIR(inode.i_mode))
		return err;
	w->doing = "walking directory";
	if (ext2fs_fast_test_inode_bitmap2(w->seen, ino))
		return ORLOV_ERR_CORRUPT;	/* a cycle: never finish */
	ext2fs_fast_mark_inode_bitmap2(w->seen, ino);
	if (grow_array(stack, cap, *depth + 1, sizeof(**stack), 64))
		return ENOMEM;
	f = &(*stack)[*depth];
	memset(f, 0, sizeof(*f));
	f->plen = w->path.len;
	w->doing = "reading directory";
	err = ir_read_dir(w->fs, ino, &f->d);
	if (!err)
		(*depth)++;
	return err;
}

static errcode_t walk_from(struct walk *w, ext2_ino_t root)
{
	struct wframe *stack = NULL;
	size_t cap = 0, depth = 0;
	errcode_t err = visit_ino(w, root, &stack, &cap, &depth);

	while (!err && depth > 0) {
		struct wframe *f = &stack[depth - 1];
		const struct ir_dirent *e;

		sb_truncate(&w->path, f->plen);
		if (f->next == f->d.n) {
			ir_dir_free(&f->d);
			depth--;
			continue;
		}
		e = &f->d.e[f->next++];
		if (f->plen > 1)
			err = sb_append(&w->path, "/", 1);
		if (!err)
			err = sb_append(&w->path, e->name, e->len);
		if (!err)
			err = visit_ino(w, e->ino, &stack, &cap, &depth);
	}
	while (depth > 0)
		ir_dir_free(&stack[--depth].d);
	free(stack);
	return err;
}

/* What is wrong with @ino's extent tree, after the path in @ec: the
 * walk's callback got only the error code. */
static void extent_detail(ext2_filsys fs, ext2_ino_t ino, struct errctx *ec)
{
	struct ext2_inode_large inode;
	struct ir_map m;

	if (ir_read_inode(fs, ino, &inode))
		return;
	if (ir_extent_error(ir_block_map(fs, ino, &inode, &m)))
		errctx_add(ec, " (%s)", m.bad);
	ir_map_free(&m);
}

errcode_t ir_walk(ext2_filsys fs, const char *root, ir_walk_fn fn,
		  void *priv, struct errctx *ec)
{
	struct walk w;
	ext2_ino_t ino;
	errcode_t err;

	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.fn = fn;
	w.priv = priv;
	err = sb_append(&w.path, root, strlen(root));
	if (err)
		return err;
	w.doing = "looking up";
	err = ir_lookup(fs, root, &ino);
	if (!err) {
		w.doing = "allocating inode bitmap for";
		err = ext2fs_allocate_inode_bitmap(fs, "directories walked",
						   &w.seen);
	}
	if (!err)
		err = walk_from(&w, ino);
	if (err && ec) {
		errctx_clear(ec);
		if (ir_extent_error(err))
			w.doing = "reading extent tree of";
		errctx_set_path(ec, err, w.doing, w.path.s);
		if (ir_extent_error(err))
			extent_detail(fs, w.ino, ec);
	}
	if (w.seen)
		ext2fs_free_inode_bitmap(w.seen);
	sb_free(&w.path);
	return err;
}
