// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "populate/hardlinks.h"
#include "lib/util.h"

/* The map holds the first entry of each inode number; the rest of that
 * number (other devices) chain from it. */
struct link_ent *link_find(const struct pop_links *l, dev_t dev, ino_t ino)
{
	size_t pos;
	struct link_ent *e;

	if (!keymap_get(&l->by_ino, (uint64_t)ino, &pos))
		return NULL;
	for (e = &l->v[pos]; ; e = &l->v[e->next - 1]) {
		if (e->dev == dev)
			return e;
		if (!e->next)
			return NULL;
	}
}

errcode_t link_add(struct pop_links *l, dev_t dev, ino_t ino, uint32_t img_ino)
{
	struct link_ent *e;
	size_t pos;

	if (grow_array(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256))
		return ENOMEM;
	e = &l->v[l->n];
	e->dev = dev;
	e->src_ino = ino;
	e->ino = img_ino;
	e->next = 0;
	if (keymap_get(&l->by_ino, (uint64_t)ino, &pos)) {
		while (l->v[pos].next)
			pos = l->v[pos].next - 1;
		l->v[pos].next = l->n + 1;
	} else if (keymap_add(&l->by_ino, (uint64_t)ino, l->n)) {
		return ENOMEM;
	}
	l->n++;
	return 0;
}

void links_free(struct pop_links *l)
{
	free(l->v);
	keymap_free(&l->by_ino);
	l->v = NULL;
	l->n = l->cap = 0;
}
