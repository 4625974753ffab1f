// SPDX-License-Identifier: GPL-2.0-or-later
/* source/walk_names: a directory's names come out sorted bytewise, each
 * with its d_type, whether they stay in memory or go to the scratch file
 * in sorted runs (a budget of a few hundred bytes: many runs, names
 * straddling the runs' read buffers); a spilled one is taken in order
 * only. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/walk.h"
#include "lib/names.h"
#include "tap.h"

#define N 20000

struct want {
	char s[256];
	size_t len;
	unsigned char type;
};

static int want_cmp(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	return name_bytes_cmp(x->s, x->len, y->s, y->len);
}

/* N distinct names of 3 to 255 bytes, any byte but '/' and NUL (the
 * hex number and '.' in front keep them distinct), in no order. */
static void make_names(struct want *w)
{
	uint64_t x = 88172645463325252ULL;
	size_t i, k;

	for (i = 0; i < N; i++) {
		int n = snprintf(w[i].s, sizeof(w[i].s), "%zx.",
				 i * 7919 % N);

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i].len = i % 50 == 0 ? 255 : (size_t)n + x % 40;
		for (k = (size_t)n; k < w[i].len; k++) {
			unsigned char c = 1 + (x >> (k % 56)) % 253;

			w[i].s[k] = (char)(c >= '/' ? c + 1 : c);
		}
		w[i].type = (unsigned char)(x % 15);
	}
}

/* @in's names added with @budget, sorted: 1 when each comes out as
 * @sorted has it. */
static int round_trip(const struct want *in, const struct want *sorted,
		      size_t budget, int *spilled)
{
	struct walk_names ns;
	const char *s;
	size_t i, len;
	unsigned char t;
	int same = 1;

	memset(&ns, 0, sizeof(ns));
	ns.budget = budget;
	for (i = 0; i < N; i++)
		if (walk_names_add(&ns, in[i].s, in[i].len, in[i].type))
			return 0;
	if (walk_names_sort(&ns) || ns.count != N)
		return 0;
	*spilled = walk_names_spilled(&ns);
	/* a spilled one out of order: refused */
	if (*spilled)
		same = walk_names_get(&ns, 1, &s, &len, &t) == EINVAL;
	for (i = 0; same && i < N; i++)
		same = !walk_names_get(&ns, i, &s, &len, &t) &&
		       len == sorted[i].len && !memcmp(s, sorted[i].s, len) &&
		       s[len] == '\0' && t == sorted[i].type;
	walk_names_free(&ns);
	return same;
}

int main(void)
{
	struct want *w = calloc(N, sizeof(*w)), *sorted = calloc(N, sizeof(*w));
	int spilled = 0;

	if (!w || !sorted)
		return 99;
	make_names(w);
	memcpy(sorted, w, N * sizeof(*w));
	qsort(sorted, N, sizeof(*sorted), want_cmp);
	tap_ok(round_trip(w, sorted, 0, &spilled) && !spilled,
	       "in memory: %d names sorted bytewise, with their types", N);
	tap_ok(round_trip(w, sorted, 1u << 30, &spilled) && !spilled,
	       "within the budget: in memory, the same");
	tap_ok(round_trip(w, sorted, 700, &spilled) && spilled,
	       "a budget of 700 bytes: spilled runs merged, the same order and types");
	tap_ok(round_trip(w, sorted, WALK_NAMES_BUDGET / 16, &spilled) && spilled,
	       "a sixteenth of the walk's budget: spilled, the same");
	free(sorted);
	free(w);
	return tap_done();
}
