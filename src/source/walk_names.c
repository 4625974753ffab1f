// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A directory's names as the walk holds them (walk.h, struct walk_names):
 * one buffer of names and a word per name, sorted as entries are created.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source/walk.h"
#include "lib/names.h"
#include "lib/util.h"

errcode_t walk_names_add(struct walk_names *ns, const char *s, size_t len,
			 unsigned char type)
{
	if (len > 255)
		return ENAMETOOLONG;
	if (grow_array(&ns->at, &ns->cap, ns->n + 1, sizeof(*ns->at), 256) ||
	    grow_array(&ns->buf, &ns->buf_cap, ns->len + len + 1, 1, 4096))
		return ENOMEM;
	memcpy(ns->buf + ns->len, s, len);
	ns->buf[ns->len + len] = '\0';
	ns->at[ns->n++] = (uint64_t)ns->len << 16 | (uint64_t)len << 8 | type;
	ns->len += len + 1;
	return 0;
}

static int name_at_cmp(const void *a, const void *b, void *arg)
{
	const char *buf = arg;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return name_bytes_cmp(buf + (x >> 16), (x >> 8) & 0xff,
			      buf + (y >> 16), (y >> 8) & 0xff);
}

void walk_names_sort(struct walk_names *ns)
{
	if (ns->n)
		qsort_r(ns->at, ns->n, sizeof(*ns->at), name_at_cmp, ns->buf);
}

int walk_names_find(const struct walk_names *ns, const char *s, size_t len)
{
	size_t lo = 0, hi = ns->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = name_bytes_cmp(s, len, walk_name(ns, mid),
				       walk_name_len(ns, mid));

		if (!c)
			return 1;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

void walk_names_free(struct walk_names *ns)
{
	free(ns->buf);
	free(ns->at);
	memset(ns, 0, sizeof(*ns));
}
