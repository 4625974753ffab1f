// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/spill.h"

errcode_t clock_init(struct slot_clock *k, size_t size, size_t budget)
{
	memset(k, 0, sizeof(*k));
	k->size = size;
	k->maxslot = budget / size;
	if (k->maxslot < 4)
		k->maxslot = 4;
	k->slot = calloc(k->maxslot, sizeof(*k->slot));
	k->fd = -1;
	return k->slot ? 0 : ENOMEM;
}

void clock_free(struct slot_clock *k)
{
	size_t i;

	if (!k->slot)
		return;
	for (i = 0; i < k->nslot; i++)
		free(k->slot[i].data);
	if (k->fd >= 0)
		close(k->fd);
	free(k->slot);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}

errcode_t clock_take(struct slot_clock *k, uint64_t key, size_t *s,
		     uint64_t *old, int *written)
{
	struct clock_slot *sl;
	errcode_t err;

	*old = CLOCK_NONE;
	*written = 0;
	if (k->nslot < k->maxslot) {
		sl = &k->slot[k->nslot];
		sl->data = malloc(k->size);
		if (!sl->data)
			return ENOMEM;
		*s = k->nslot++;
	} else {
		for (;; k->hand = (k->hand + 1) % k->nslot) {
			sl = &k->slot[k->hand];
			if (!sl->ref)
				break;
			sl->ref = 0;
		}
		if (sl->dirty) {
			if (k->fd < 0 && (err = spill_open(&k->fd, "spill")))
				return err;
			err = spill_write(k->fd, sl->data, k->size,
					  sl->key * k->size);
			if (err)
				return err;
			*written = 1;
		}
		*old = sl->key;
		*s = k->hand;
		k->hand = (k->hand + 1) % k->nslot;
	}
	sl->key = key;
	sl->ref = 0;
	sl->dirty = 0;
	return 0;
}

errcode_t clock_read(struct slot_clock *k, size_t s)
{
	return spill_read(k->fd, k->slot[s].data, k->size,
			  k->slot[s].key * k->size);
}

errcode_t clock_read_file(const struct slot_clock *k, uint64_t key, size_t n,
			  void *buf)
{
	return spill_read(k->fd, buf, n * k->size, key * k->size);
}
