// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Casefolded directories' names (casefold.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>

#include "model/casefold.h"

uint64_t cf_name_key(const struct ext2fs_nls_table *enc, const char *name,
		     size_t len)
{
	ext2_dirhash_t hash = 0, minor = 0;

	/* half-MD4 of the folded name with the default seed: 63 bits, and
	 * the folding done once, by libext2fs (a name it cannot fold by its
	 * bytes); the low bit set keeps 0 for a free slot */
	if (ext2fs_dirhash2(EXT2_HASH_HALF_MD4, name, (int)len, enc,
			    EXT4_CASEFOLD_FL, NULL, &hash, &minor) &&
	    ext2fs_dirhash2(EXT2_HASH_HALF_MD4, name, (int)len, NULL, 0, NULL,
			    &hash, &minor))
		hash = minor = 0;
	return ((uint64_t)hash << 32 | minor) | 1;
}

int cf_name_valid(const struct ext2fs_nls_table *enc, const char *name,
		  size_t len)
{
	char *pos;

	/* ext2fs_check_encoded_name only reads the name */
	return !ext2fs_check_encoded_name(enc, (char *)name, len, &pos);
}

/*
 * ext4_match in a casefolded directory (ext4_ci_compare, and the dcache's
 * generic_ci_d_compare alike): equal when they fold alike; when either
 * cannot be folded, equal only byte for byte (no strict encoding: with
 * it, such a name never gets in).  ext2fs_casefold_cmp's negative result
 * is both "less" and "invalid", so validity is asked first.
 */
static int cf_equal(const struct ext2fs_nls_table *enc, const char *a,
		    size_t alen, const char *b, size_t blen)
{
	if (!cf_name_valid(enc, a, alen) || !cf_name_valid(enc, b, blen))
		return alen == blen && !memcmp(a, b, alen);
	return !ext2fs_casefold_cmp(enc, (const unsigned char *)a, alen,
				    (const unsigned char *)b, blen);
}

struct cf_lookup {
	const struct ext2fs_nls_table *enc;
	const char *name;
	size_t len;
	uint32_t ino;
};

static int cf_lookup_one(void *arg, const char *name, size_t len,
			 uint32_t ino)
{
	struct cf_lookup *l = arg;

	if (!cf_equal(l->enc, l->name, l->len, name, len))
		return 0;
	l->ino = ino;
	return 1;
}

int cf_dir_lookup(const struct dirbuf *d, uint32_t bs, const char *name,
		  size_t len, uint32_t *ino)
{
	struct cf_lookup l = { .enc = d->cf, .name = name, .len = len };

	if (!dir_for_each(d, bs, cf_lookup_one, &l))
		return 0;
	if (ino)
		*ino = l.ino;
	return 1;
}

/* Doubled at half full, so that a probe stays short. */
static errcode_t grow(struct cf_set *s)
{
	struct cf_set t = { .cap = s->cap ? s->cap * 2 : 64 };
	size_t i, j;

	t.slot = calloc(t.cap, sizeof(*t.slot));
	if (!t.slot)
		return ENOMEM;
	for (i = 0; i < s->cap; i++) {
		if (!s->slot[i].key)
			continue;
		j = (size_t)(s->slot[i].key >> 1) & (t.cap - 1);
		while (t.slot[j].key)
			j = (j + 1) & (t.cap - 1);
		t.slot[j] = s->slot[i];
	}
	t.n = s->n;
	free(s->slot);
	*s = t;
	return 0;
}

errcode_t cf_set_add(struct cf_set *s, const struct ext2fs_nls_table *enc,
		     const char *name, size_t len, int *dup)
{
	uint64_t key = cf_name_key(enc, name, len);
	errcode_t err;
	size_t i;

	*dup = 0;
	if ((s->n + 1) * 2 > s->cap && (err = grow(s)))
		return err;
	/* equal keys are folded names with the same hash: the names say */
	for (i = (size_t)(key >> 1) & (s->cap - 1); s->slot[i].key;
	     i = (i + 1) & (s->cap - 1))
		if (s->slot[i].key == key &&
		    cf_equal(enc, name, len, s->slot[i].name, s->slot[i].len)) {
			*dup = 1;
			return 0;
		}
	s->slot[i].name = malloc(len ? len : 1);
	if (!s->slot[i].name)
		return ENOMEM;
	memcpy(s->slot[i].name, name, len);
	s->slot[i].len = len;
	s->slot[i].key = key;
	s->n++;
	return 0;
}

void cf_set_free(struct cf_set *s)
{
	size_t i;

	for (i = 0; i < s->cap; i++)
		if (s->slot[i].key)
			free(s->slot[i].name);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
