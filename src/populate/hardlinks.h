/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source's hard links: the image's inode for each source inode with
 * more than one link, found by (device, inode number).
 */
#ifndef ORLOV_POPULATE_HARDLINKS_H
#define ORLOV_POPULATE_HARDLINKS_H

#include <sys/types.h>
#include <stdint.h>
#include <et/com_err.h>

#include "lib/keymap.h"

/* A source inode with more than one link, and the image's inode for it. */
struct link_ent {
	dev_t dev;
	ino_t src_ino;
	uint32_t ino;
	size_t next;		/* the next of the same inode number on
				   another device, index + 1 */
};

struct pop_links {
	struct link_ent *v;
	size_t n, cap;
	struct keymap by_ino;	/* the first of each source inode number */
};

/* The image's inode for source inode @ino of @dev, or NULL. */
struct link_ent *link_find(const struct pop_links *l, dev_t dev, ino_t ino);
/* Remember @img_ino for source inode @ino of @dev (not known yet). */
errcode_t link_add(struct pop_links *l, dev_t dev, ino_t ino, uint32_t img_ino);
/* Forget them all. */
void links_free(struct pop_links *l);

#endif
