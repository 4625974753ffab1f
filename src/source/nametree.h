/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tree of names read from untrusted input (an archive's members, a
 * device table's lines): built in any order, a name looked up by its
 * parent and its last component in constant time, nothing recursive.  A
 * node holds its component only, never its whole path, so memory stays
 * linear in the input however deep the paths go; walkers rebuild paths
 * in one buffer as they descend.  Nodes are numbered from 0 (the root)
 * in the order they were made; users keep their own data in arrays
 * indexed the same way.
 */
#ifndef ORLOV_NAMETREE_H
#define ORLOV_NAMETREE_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>
#include "lib/keymap.h"

#define NAME_NONE UINT32_MAX

struct name_node {
	size_t name_off;	/* in name_tree.names */
	uint32_t len;
	uint32_t parent;	/* NAME_NONE for the root */
	uint32_t same_key;	/* the next node whose key collides */
	uint32_t nkids;
	uint32_t *kids;
	size_t kcap;
};

struct name_tree {
	struct name_node *n;
	size_t nn, ncap;
	char *names;		/* every component, one after the other */
	size_t names_len, names_cap;
	struct keymap by_key;	/* (parent, name) hashed: the first node */
};

/* A tree with only its root (node 0, no name). */
errcode_t name_tree_init(struct name_tree *t);
void name_tree_free(struct name_tree *t);

static inline const char *name_of(const struct name_tree *t, uint32_t i)
{
	return t->names + t->n[i].name_off;
}

/* The child @name (@len bytes) of @parent, or NAME_NONE. */
uint32_t name_find(const struct name_tree *t, uint32_t parent,
		   const char *name, size_t len);
/* Make the child @name of @parent, not there yet; *out is its number. */
errcode_t name_add(struct name_tree *t, uint32_t parent, const char *name,
		   size_t len, uint32_t *out);
/* Every node's children in creation order (name_bytes_cmp). */
void name_tree_sort(struct name_tree *t);

#endif
