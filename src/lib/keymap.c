// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "lib/keymap.h"

static size_t home(uint64_t key, size_t nslots)
{
	/* Fibonacci hashing: block numbers, offsets and inode numbers
	 * come in runs, which the multiply spreads */
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (nslots - 1);
}

int keymap_get(const struct keymap *m, uint64_t key, size_t *pos)
{
	size_t s;

	if (!m->nslots)
		return 0;
	for (s = home(key, m->nslots); m->pos[s]; s = (s + 1) & (m->nslots - 1))
		if (m->key[s] == key) {
			if (pos)
				*pos = m->pos[s] - 1;
			return 1;
		}
	return 0;
}

static void put(uint64_t *keys, size_t *poss, size_t nslots, uint64_t key,
		size_t pos1)
{
	size_t s = home(key, nslots);

	while (poss[s])
		s = (s + 1) & (nslots - 1);
	keys[s] = key;
	poss[s] = pos1;
}

errcode_t keymap_add(struct keymap *m, uint64_t key, size_t pos)
{
	if (2 * (m->n + 1) > m->nslots) {
		size_t n = m->nslots ? 2 * m->nslots : 1024, i;
		uint64_t *k = malloc(n * sizeof(*k));
		size_t *p = calloc(n, sizeof(*p));

		if (!k || !p) {
			free(k);
			free(p);
			return ENOMEM;
		}
		for (i = 0; i < m->nslots; i++)
			if (m->pos[i])
				put(k, p, n, m->key[i], m->pos[i]);
		free(m->key);
		free(m->pos);
		m->key = k;
		m->pos = p;
		m->nslots = n;
	}
	put(m->key, m->pos, m->nslots, key, pos + 1);
	m->n++;
	return 0;
}

void keymap_free(struct keymap *m)
{
	free(m->key);
	free(m->pos);
	m->key = NULL;
	m->pos = NULL;
	m->n = m->nslots = 0;
}
