/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Several archives read into one tar_tree (tar.h), in order, with the OCI
 * image layer rules: a later member replaces an earlier one of its name
 * (a directory over a directory merges), ".wh.NAME" removes NAME of the
 * lower layers and ".wh..wh..opq" everything the lower layers had in its
 * directory; a whiteout never becomes an entry itself.  A whiteout touches
 * only what lower layers gave: what its own layer names stays, whatever
 * the order of the members (OCI image spec, "Whiteouts").  The tree built
 * is the final one, walked as a single archive's.
 */
#ifndef ORLOV_LAYERS_H
#define ORLOV_LAYERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <et/com_err.h>

#define LAYERS_MAX 0x7fff	/* layer numbers fit 15 bits */

struct tar_tree;

struct tar_layers {
	/* by node: the last layer (1, 2, ...) that named it or a name below
	 * it, LAYER_GONE added when a whiteout removed it; 0: none */
	uint16_t *layer;
	size_t cap;
	uint16_t cur;		/* the layer being read */
};

/* @name (its last component) is a whiteout, not an entry. */
int layer_is_whiteout(const char *name, size_t len);
/* A whiteout's name findable again for what it removed: not there. */
int layer_gone(const struct tar_tree *t, uint32_t node);
/* @node, reached on the way to a member, is named by this layer. */
errcode_t layer_touch(struct tar_tree *t, uint32_t node);
/* @kid of @parent was found on the way to a member: *back = 1 when a
 * whiteout had removed it and it is made a child of @parent again (the
 * caller gives it a new inode).  Refused when this layer's whiteout
 * removed it and it is not the member itself (@last). */
errcode_t layer_back(struct tar_tree *t, uint32_t parent, uint32_t kid,
		     int last, int *back);
/* The whiteout @name (".wh.X" or ".wh..wh..opq") in directory @dir
 * (NAME_NONE: not in the tree, nothing to remove). */
errcode_t layer_whiteout(struct tar_tree *t, uint32_t dir, const char *name,
			 size_t len);
/* The member @st (@hl: a hard link) is about to replace @node: a lower
 * layer's directory is removed with all below it first. */
errcode_t layer_replace(struct tar_tree *t, uint32_t node,
			const struct stat *st, int hl);
/* Removed names out of their parents' children: the final tree. */
void layers_compact(struct tar_tree *t);
void layers_free(struct tar_layers *ly);

#endif
