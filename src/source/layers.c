// SPDX-License-Identifier: GPL-2.0-or-later
/* Layers applied into one archive tree (layers.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source/layers.h"
#include "source/tar_tree.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

#define LAYER_GONE 0x8000
/* the parent of a removed node: never a node, so name_find misses it */
#define NAME_DEAD (NAME_NONE - 1)
#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

struct stack {
	uint32_t *v;
	size_t n, cap;
};

static errcode_t push(struct stack *s, uint32_t x)
{
	if (grow_array(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 64))
		return ENOMEM;
	s->v[s->n++] = x;
	return 0;
}

static uint16_t layer_of(const struct tar_tree *t, uint32_t node)
{
	return node < t->ly->cap ? t->ly->layer[node] : 0;
}

static const struct stat *st_of(const struct tar_tree *t, uint32_t node)
{
	return &t->in[t->ino[node]].st;
}

static errcode_t set_layer(struct tar_tree *t, uint32_t node, uint16_t v)
{
	struct tar_layers *ly = t->ly;
	size_t old = ly->cap;

	if (grow_array(&ly->layer, &ly->cap, (size_t)node + 1,
		       sizeof(*ly->layer), 256))
		return ENOMEM;
	if (ly->cap > old)
		memset(ly->layer + old, 0, (ly->cap - old) * sizeof(*ly->layer));
	ly->layer[node] = v;
	return 0;
}

/* Is the node below the layer being read, i.e. a lower layer's alone? */
static int lower(const struct tar_tree *t, uint32_t node)
{
	return (layer_of(t, node) & ~LAYER_GONE) < t->ly->cur;
}

int layer_is_whiteout(const char *name, size_t len)
{
	return len >= sizeof(WH_PREFIX) - 1 &&
	       !memcmp(name, WH_PREFIX, sizeof(WH_PREFIX) - 1);
}

int layer_gone(const struct tar_tree *t, uint32_t node)
{
	return (layer_of(t, node) & LAYER_GONE) != 0;
}

errcode_t layer_touch(struct tar_tree *t, uint32_t node)
{
	return set_layer(t, node, t->ly->cur);
}

/* Removed names stay in their parent's list of children until
 * layers_compact(): a removal costs no search of a large directory. */
static int removed(const struct tar_tree *t, uint32_t node)
{
	return t->names.n[node].parent == NAME_DEAD || layer_gone(t, node);
}

/* @top and all below it leave the tree: its names and the links they held
 * (an inode another name still has keeps its data). */
static errcode_t drop(struct tar_tree *t, uint32_t top)
{
	struct stack s = { 0 };
	errcode_t err = push(&s, top);

	while (!err && s.n) {
		struct name_node *x = &t->names.n[s.v[--s.n]];
		struct stat *st = &t->in[t->ino[x - t->names.n]].st;
		uint32_t k;

		if (!S_ISDIR(st->st_mode) && st->st_nlink)
			st->st_nlink--;
		for (k = 0; !err && k < x->nkids; k++)
			if (!removed(t, x->kids[k]))
				err = push(&s, x->kids[k]);
		if (!err) {
			free(x->kids);
			x->kids = NULL;
			x->nkids = 0;
			x->kcap = 0;
		}
	}
	free(s.v);
	return err;
}

/* What lower layers put below @dir goes; this layer's names stay, and
 * below them too only what lower layers gave goes.  A directory's
 * children are filtered in one pass (an opaque directory of many). */
static errcode_t hide_below(struct tar_tree *t, uint32_t dir)
{
	struct stack s = { 0 };
	errcode_t err = push(&s, dir);

	while (!err && s.n) {
		uint32_t d = s.v[--s.n], k, keep = 0;
		struct name_node *x = &t->names.n[d];

		for (k = 0; !err && k < x->nkids; k++) {
			uint32_t y = x->kids[k];

			/* gone for good; a name this layer's whiteout removed
			 * stays, marked (layer_back) */
			if (t->names.n[y].parent == NAME_DEAD)
				continue;
			if (layer_gone(t, y) && lower(t, y)) {
				t->names.n[y].parent = NAME_DEAD;
				continue;
			}
			if (lower(t, y)) {
				t->names.n[y].parent = NAME_DEAD;
				err = drop(t, y);
				continue;
			}
			x->kids[keep++] = y;
			if (S_ISDIR(st_of(t, y)->st_mode))
				err = push(&s, y);
		}
		/* on an error the tree is thrown away: kids need not add up */
		x->nkids = keep;
	}
	free(s.v);
	return err;
}

errcode_t layer_whiteout(struct tar_tree *t, uint32_t dir, const char *name,
			 size_t len)
{
	const size_t pre = sizeof(WH_PREFIX) - 1;
	uint32_t x;
	errcode_t err;

	/* OCI: a whiteout of what is not there is ignored */
	if (dir == NAME_NONE || layer_gone(t, dir) ||
	    !S_ISDIR(st_of(t, dir)->st_mode))
		return 0;
	if (len == sizeof(WH_OPAQUE) - 1 && !memcmp(name, WH_OPAQUE, len))
		return hide_below(t, dir);
	x = name_find(&t->names, dir, name + pre, len - pre);
	if (x == NAME_NONE || layer_gone(t, x))
		return 0;
	if (!lower(t, x))
		return S_ISDIR(st_of(t, x)->st_mode) ? hide_below(t, x) : 0;
	/* the name stays findable, marked, so that a member below it in
	 * this layer is refused rather than given a directory made up */
	err = drop(t, x);
	return err ? err : set_layer(t, x, t->ly->cur | LAYER_GONE);
}

errcode_t layer_back(struct tar_tree *t, uint32_t parent, uint32_t kid,
		     int last, int *back)
{
	*back = 0;
	if (!layer_gone(t, kid))
		return 0;
	if (!last && !lower(t, kid))
		return ORLOV_ERR_LAYER_GONE;
	if (!S_ISDIR(st_of(t, parent)->st_mode))
		return ORLOV_ERR_NOT_DIR;
	/* still in its parent's children (layers_compact) */
	*back = 1;
	return set_layer(t, kid, t->ly->cur);
}

errcode_t layer_replace(struct tar_tree *t, uint32_t node,
			const struct stat *st, int hl)
{
	if (!node || layer_gone(t, node) || !lower(t, node) ||
	    !S_ISDIR(st_of(t, node)->st_mode) || (!hl && S_ISDIR(st->st_mode)))
		return 0;
	t->names.n[node].parent = NAME_DEAD;
	return drop(t, node);
}

void layers_compact(struct tar_tree *t)
{
	size_t i;

	for (i = 0; i < t->names.nn; i++) {
		struct name_node *x = &t->names.n[i];
		uint32_t k, keep = 0;

		for (k = 0; k < x->nkids; k++)
			if (!removed(t, x->kids[k]))
				x->kids[keep++] = x->kids[k];
		x->nkids = keep;
	}
}

void layers_free(struct tar_layers *ly)
{
	if (!ly)
		return;
	free(ly->layer);
	free(ly);
}
