// SPDX-License-Identifier: GPL-2.0-or-later
/* An archive's tree walked as a source (tar.h): many times, in creation
 * order, file data read back from the spool. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "source/tar.h"
#include "source/reread.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

#ifdef HAVE_LIBARCHIVE
#include "source/tar_tree.h"

static const struct text *ext_at(const struct tinode *in, uint64_t off)
{
	size_t lo = 0, hi = in->next;

	/* the first stretch that ends after @off */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->ext[mid].loff + in->ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->next ? &in->ext[lo] : NULL;
}

static errcode_t tar_next_data(const struct src_entry *e, uint64_t off,
			       uint64_t *start, uint64_t *end)
{
	const struct tinode *in = e->priv;
	uint64_t size = (uint64_t)e->st.st_size;
	const struct text *x = off < size ? ext_at(in, off) : NULL;

	*start = *end = size;
	if (!x || x->loff >= size)
		return 0;
	*start = x->loff > off ? x->loff : off;
	*end = x->loff + x->len < size ? x->loff + x->len : size;
	return 0;
}

static errcode_t tar_read(const struct src_entry *e, void *buf, size_t len,
			  uint64_t off)
{
	const struct tinode *in = e->priv;
	unsigned char *p = buf;

	while (len) {
		const struct text *x = ext_at(in, off);
		size_t n = len;

		if (!x || x->loff > off) {
			/* a hole up to the next stretch */
			if (x && x->loff - off < n)
				n = (size_t)(x->loff - off);
			memset(p, 0, n);
		} else {
			ssize_t r;

			if (x->loff + x->len - off < n)
				n = (size_t)(x->loff + x->len - off);
			r = pread(in->t->spool, p, n,
				  (off_t)(x->soff + (off - x->loff)));
			if (r < 0)
				return (errcode_t)errno;
			if ((size_t)r != n)
				return EIO;
		}
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The member's place in the tree: its data stays in the spool. */
static errcode_t tar_note(const struct src_entry *e, struct strbuf *note)
{
	const struct tinode *in = e->priv;
	struct src_note_id id = {
		.ino = (uint64_t)(in - in->t->in),
		.size = (uint64_t)in->st.st_size,
	};
	errcode_t err = sb_append(note, (const char *)&id, sizeof(id));

	return err ? err : sb_append(note, e->path, strlen(e->path));
}

errcode_t tar_reread(const struct tar_tree *t, uint64_t member, void *buf,
		     size_t len, uint64_t off)
{
	struct src_entry e = { .priv = NULL };

	if (member >= t->ni)
		return ORLOV_ERR_SOURCE_CHANGED;
	e.priv = &t->in[member];
	return tar_read(&e, buf, len, off);
}

static const struct src_data_ops tar_data_ops = {
	.next_data = tar_next_data,
	.read = tar_read,
	.note = tar_note,
};

/* @path: the node's, built by the walk (the tree keeps no paths). */
static void fill_entry(const struct tar_tree *t, uint32_t node,
		       const struct strbuf *path, size_t name_at,
		       const struct walk_opts *wo, struct src_entry *e)
{
	const struct tinode *in = &t->in[t->ino[node]];

	memset(e, 0, sizeof(*e));
	e->path = path->s;
	e->name = path->s + name_at;
	e->name_len = path->len - name_at;
	e->st = in->st;
	e->link_target = in->link;
	e->link_len = in->link ? strlen(in->link) : 0;
	if (wo->want_xattrs) {
		e->xattrs = in->x;
		e->nxattrs = in->nx;
	}
	if (wo->want_data && S_ISREG(in->st.st_mode))
		e->data = &tar_data_ops;
	e->priv = (void *)in;
}

errcode_t tar_walk(const struct tar_tree *t, const struct walk_opts *wo,
		   const struct walk_visitor *v)
{
	/* the directories entered: as deep as the archive, on the heap */
	struct {
		uint32_t node, next;
		size_t name_at;	/* where its name starts in @path */
	} *st = NULL;
	const struct name_tree *nt = &t->names;
	struct strbuf path = { 0 };
	size_t depth = 0, cap = 0;
	struct src_entry e;
	errcode_t err;

	err = sb_append(&path, "", 0);
	if (!err) {
		fill_entry(t, 0, &path, 0, wo, &e);
		err = v->enter_dir(v->ctx, &e);
	}
	if (!err && grow_array(&st, &cap, 1, sizeof(*st), 16))
		err = ENOMEM;
	if (!err) {
		st[0].node = 0;
		st[0].next = 0;
		st[0].name_at = 0;
		depth = 1;
	}
	while (!err && depth) {
		const struct name_node *d = &nt->n[st[depth - 1].node];
		/* this directory's own path: the root's is "" */
		size_t own = depth > 1 ? st[depth - 1].name_at + d->len : 0;
		size_t name_at;
		uint32_t x;

		sb_truncate(&path, own);
		if (st[depth - 1].next == d->nkids) {
			fill_entry(t, st[depth - 1].node, &path,
				   st[depth - 1].name_at, wo, &e);
			err = v->leave_dir(v->ctx, &e);
			depth--;
			continue;
		}
		x = d->kids[st[depth - 1].next++];
		if (own)
			err = sb_append(&path, "/", 1);
		name_at = path.len;
		if (!err)
			err = sb_append(&path, name_of(nt, x), nt->n[x].len);
		if (err)
			break;
		fill_entry(t, x, &path, name_at, wo, &e);
		if (!S_ISDIR(e.st.st_mode)) {
			err = v->leaf(v->ctx, &e);
			continue;
		}
		err = v->enter_dir(v->ctx, &e);
		if (!err && grow_array(&st, &cap, depth + 1, sizeof(*st), 16))
			err = ENOMEM;
		if (!err) {
			st[depth].node = x;
			st[depth].next = 0;
			st[depth].name_at = name_at;
			depth++;
		}
	}
	free(st);
	sb_free(&path);
	return err;
}

#else /* !HAVE_LIBARCHIVE */

errcode_t tar_walk(const struct tar_tree *t, const struct walk_opts *wo,
		   const struct walk_visitor *v)
{
	(void)t;
	(void)wo;
	(void)v;
	return ORLOV_ERR_SOURCE_IS_ARCHIVE;
}

errcode_t tar_reread(const struct tar_tree *t, uint64_t member, void *buf,
		     size_t len, uint64_t off)
{
	(void)t;
	(void)member;
	(void)buf;
	(void)len;
	(void)off;
	return ORLOV_ERR_SOURCE_IS_ARCHIVE;
}

#endif
