// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names of a directory the image has, as sorted hashes (dirnames.h).
 */
#include "config.h"

#include <stdlib.h>
#include <errno.h>

#include "populate/dirnames.h"
#include "lib/util.h"
#include "lib/hash.h"
#include "model/casefold.h"

/* In a casefolded directory, names that fold alike hash alike. */
static uint64_t name_hash(const struct dirbuf *d, const char *name, size_t len)
{
	return d->cf ? cf_name_key(d->cf, name, len) :
		       fnv1a64(FNV1A64_INIT, name, len);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct collect {
	const struct dirbuf *d;
	struct dir_names *dn;
	size_t cap;
};

static errcode_t collect_one(void *arg, const char *name, size_t len,
			     uint32_t ino)
{
	struct collect *k = arg;

	(void)ino;
	if (grow_array(&k->dn->h, &k->cap, k->dn->n + 1, sizeof(*k->dn->h), 64))
		return ENOMEM;
	k->dn->h[k->dn->n++] = name_hash(k->d, name, len);
	return 0;
}

errcode_t dir_names_load(struct dir_names *dn, const struct fs_state *fs,
			 const struct dirbuf *d)
{
	struct collect k = { .d = d, .dn = dn };
	errcode_t err;

	dn->h = NULL;
	dn->n = 0;
	err = dir_for_each(fs, d, collect_one, &k);
	if (err) {
		dir_names_free(dn);
		return err;
	}
	if (dn->n)
		qsort(dn->h, dn->n, sizeof(*dn->h), u64_cmp);
	return 0;
}

void dir_names_free(struct dir_names *dn)
{
	free(dn->h);
	dn->h = NULL;
	dn->n = 0;
}

errcode_t dir_names_lookup(const struct dir_names *dn,
			   const struct fs_state *fs, const struct dirbuf *d,
			   const char *name, size_t len, int *found,
			   uint32_t *ino)
{
	uint64_t h = name_hash(d, name, len);

	*found = 0;
	if (!dn->n || !bsearch(&h, dn->h, dn->n, sizeof(h), u64_cmp))
		return 0;
	/* a hash it had: the name itself, or another with its hash */
	return dir_lookup(fs, d, name, len, found, ino);
}
