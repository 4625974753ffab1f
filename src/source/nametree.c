// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "source/nametree.h"
#include "lib/util.h"
#include "source/walk.h"

static uint64_t name_key(uint32_t parent, const char *s, size_t n)
{
	uint64_t h = FNV1A64_INIT;
	int i;

	for (i = 0; i < 4; i++)
		h = fnv1a64_byte(h, (parent >> (8 * i)) & 0xff);
	return fnv1a64(h, s, n);
}

errcode_t name_tree_init(struct name_tree *t)
{
	memset(t, 0, sizeof(*t));
	if (grow_array(&t->n, &t->ncap, 1, sizeof(*t->n), 256) ||
	    grow_array(&t->names, &t->names_cap, 1, 1, 4096))
		return ENOMEM;
	memset(&t->n[0], 0, sizeof(t->n[0]));
	t->n[0].parent = NAME_NONE;
	t->n[0].same_key = NAME_NONE;
	t->names[0] = '\0';
	t->names_len = 1;
	t->nn = 1;
	return 0;
}

void name_tree_free(struct name_tree *t)
{
	size_t i;

	for (i = 0; i < t->nn; i++)
		free(t->n[i].kids);
	free(t->n);
	free(t->names);
	keymap_free(&t->by_key);
	memset(t, 0, sizeof(*t));
}

uint32_t name_find(const struct name_tree *t, uint32_t parent,
		   const char *name, size_t len)
{
	size_t pos;
	uint32_t i;

	if (!keymap_get(&t->by_key, name_key(parent, name, len), &pos))
		return NAME_NONE;
	/* a key the hash shares with other names: they are chained */
	for (i = (uint32_t)pos; i != NAME_NONE; i = t->n[i].same_key)
		if (t->n[i].parent == parent && t->n[i].len == len &&
		    !memcmp(name_of(t, i), name, len))
			return i;
	return NAME_NONE;
}

errcode_t name_add(struct name_tree *t, uint32_t parent, const char *name,
		   size_t len, uint32_t *out)
{
	uint64_t key = name_key(parent, name, len);
	struct name_node *x, *p;
	size_t first;
	uint32_t idx = (uint32_t)t->nn;
	errcode_t err;

	if (t->nn >= NAME_NONE - 1 || len > UINT32_MAX)
		return EOVERFLOW;
	if (grow_array(&t->n, &t->ncap, t->nn + 1, sizeof(*t->n), 256) ||
	    grow_array(&t->names, &t->names_cap, t->names_len + len + 1, 1,
		       4096))
		return ENOMEM;
	p = &t->n[parent];
	if (grow_array(&p->kids, &p->kcap, (size_t)p->nkids + 1,
		       sizeof(*p->kids), 4))
		return ENOMEM;
	x = memset(&t->n[idx], 0, sizeof(*x));
	x->name_off = t->names_len;
	x->len = (uint32_t)len;
	x->parent = parent;
	x->same_key = NAME_NONE;
	if (keymap_get(&t->by_key, key, &first)) {
		x->same_key = t->n[first].same_key;
		t->n[first].same_key = idx;
	} else {
		err = keymap_add(&t->by_key, key, idx);
		if (err)
			return err;
	}
	memcpy(t->names + t->names_len, name, len);
	t->names[t->names_len + len] = '\0';
	t->names_len += len + 1;
	p->kids[p->nkids++] = idx;
	t->nn++;
	*out = idx;
	return 0;
}

static int kid_cmp(const void *a, const void *b, void *arg)
{
	const struct name_tree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return name_bytes_cmp(name_of(t, x), t->n[x].len,
			     name_of(t, y), t->n[y].len);
}

void name_tree_sort(struct name_tree *t)
{
	size_t i;

	for (i = 0; i < t->nn; i++)
		if (t->n[i].nkids > 1)
			qsort_r(t->n[i].kids, t->n[i].nkids,
				sizeof(*t->n[i].kids), kid_cmp, t);
}
