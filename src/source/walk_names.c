// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A directory's names as the walk holds them (walk.h, struct walk_names):
 * one buffer of names and a word per name, sorted as entries are created;
 * past a budget, sorted runs in a scratch file, merged as they are taken.
 * A run's record: the name's length, its d_type, the name.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/walk.h"
#include "lib/names.h"
#include "lib/spill.h"
#include "lib/util.h"

/* A run is written through a buffer of RUN_BUF bytes, and read through
 * one of RUN_BUF or less: MERGE_BUF for all of them together. */
#define RUN_BUF (64u << 10)
#define MERGE_BUF (4u << 20)
#define REC_MAX (2 + 255)

struct walk_names_run {
	uint64_t off, end;	/* what is left of it in the scratch file */
	unsigned char *b;
	size_t pos, len;	/* the next record at b + pos, len read */
};

static errcode_t scratch(struct walk_names *ns, errcode_t err)
{
	ns->scratch = err != 0 && err != ENOMEM;
	return err;
}

static int name_at_cmp(const void *a, const void *b, void *arg)
{
	const char *buf = arg;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return name_bytes_cmp(buf + (x >> 16), (x >> 8) & 0xff,
			      buf + (y >> 16), (y >> 8) & 0xff);
}

static void sort_memory(struct walk_names *ns)
{
	if (ns->n)
		qsort_r(ns->at, ns->n, sizeof(*ns->at), name_at_cmp, ns->buf);
}

/* The names in memory, sorted, appended to the scratch file as a run. */
static errcode_t spill_run(struct walk_names *ns)
{
	unsigned char *out = malloc(RUN_BUF);
	struct walk_names_run *r;
	size_t i, o = 0;
	errcode_t err = 0;

	if (!out || grow_array(&ns->runs, &ns->runs_cap, ns->nruns + 1,
			       sizeof(*ns->runs), 8)) {
		free(out);
		return ENOMEM;
	}
	if (!ns->nruns && (err = spill_open(&ns->spill_fd, "spill"))) {
		free(out);
		return scratch(ns, err);
	}
	r = &ns->runs[ns->nruns++];
	memset(r, 0, sizeof(*r));
	r->off = ns->spill_len;
	sort_memory(ns);
	for (i = 0; !err && i < ns->n; i++) {
		size_t len = walk_name_len(ns, i);

		if (o + 2 + len > RUN_BUF) {
			err = spill_write(ns->spill_fd, out, o, ns->spill_len);
			ns->spill_len += o;
			o = 0;
		}
		out[o] = (unsigned char)len;
		out[o + 1] = walk_name_type(ns, i);
		memcpy(out + o + 2, walk_name(ns, i), len);
		o += 2 + len;
	}
	if (!err && o)
		err = spill_write(ns->spill_fd, out, o, ns->spill_len);
	ns->spill_len += o;
	r->end = ns->spill_len;
	free(out);
	ns->n = ns->len = 0;
	return scratch(ns, err);
}

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
	ns->count++;
	if (ns->budget && ns->len + ns->n * sizeof(*ns->at) >= ns->budget)
		return spill_run(ns);
	return 0;
}

/* At least one whole record of @r at r->b + r->pos, unless it is done. */
static errcode_t run_fill(struct walk_names *ns, struct walk_names_run *r)
{
	size_t left = r->len - r->pos, want;
	errcode_t err;

	if ((left >= 2 && left >= 2 + (size_t)r->b[r->pos]) || r->off == r->end)
		return 0;
	memmove(r->b, r->b + r->pos, left);
	want = ns->run_buf - left;
	if (want > r->end - r->off)
		want = (size_t)(r->end - r->off);
	err = spill_read(ns->spill_fd, r->b + left, want, r->off);
	if (err)
		return scratch(ns, err);
	r->off += want;
	r->pos = 0;
	r->len = left + want;
	return 0;
}

errcode_t walk_names_sort(struct walk_names *ns)
{
	errcode_t err = 0;
	size_t i;

	if (!ns->nruns) {
		sort_memory(ns);
		return 0;
	}
	if (ns->n)
		err = spill_run(ns);
	/* the runs' buffers instead of the names' */
	free(ns->buf);
	free(ns->at);
	ns->buf = NULL;
	ns->at = NULL;
	ns->buf_cap = ns->cap = 0;
	ns->run_buf = MERGE_BUF / ns->nruns;
	if (ns->run_buf > RUN_BUF)
		ns->run_buf = RUN_BUF;
	if (ns->run_buf < 4 * REC_MAX)
		ns->run_buf = 4 * REC_MAX;
	for (i = 0; !err && i < ns->nruns; i++) {
		ns->runs[i].b = malloc(ns->run_buf);
		if (!ns->runs[i].b)
			return ENOMEM;
		err = run_fill(ns, &ns->runs[i]);
	}
	return err;
}

/* The spilled names' next: the least of the runs' next records. */
static errcode_t take_next(struct walk_names *ns, const char **s,
			   size_t *len, unsigned char *type)
{
	struct walk_names_run *best = NULL, *r;
	size_t i, bl = 0;

	for (i = 0; i < ns->nruns; i++) {
		r = &ns->runs[i];
		if (r->pos == r->len)
			continue;
		if (!best || name_bytes_cmp((const char *)r->b + r->pos + 2,
					    r->b[r->pos],
					    (const char *)best->b + best->pos + 2,
					    bl) < 0) {
			best = r;
			bl = r->b[r->pos];
		}
	}
	if (!best)
		return scratch(ns, EIO);	/* fewer than it counted */
	memcpy(ns->name, best->b + best->pos + 2, bl);
	ns->name[bl] = '\0';
	*s = ns->name;
	*len = bl;
	*type = best->b[best->pos + 1];
	best->pos += 2 + bl;
	ns->taken++;
	return run_fill(ns, best);
}

errcode_t walk_names_get(struct walk_names *ns, size_t i, const char **s,
			 size_t *len, unsigned char *type)
{
	if (!ns->nruns) {
		*s = walk_name(ns, i);
		*len = walk_name_len(ns, i);
		*type = walk_name_type(ns, i);
		return 0;
	}
	if (i != ns->taken)
		return EINVAL;	/* a run is read in order only */
	return take_next(ns, s, len, type);
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
	size_t i;

	for (i = 0; i < ns->nruns; i++)
		free(ns->runs[i].b);
	if (ns->nruns)
		close(ns->spill_fd);
	free(ns->runs);
	free(ns->buf);
	free(ns->at);
	memset(ns, 0, sizeof(*ns));
}
