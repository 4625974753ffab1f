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
#include "lib/util.h"

uint64_t cf_name_key(const struct ext2fs_nls_table *enc, const char *name,
		     size_t len)
{
	ext2_dirhash_t hash = 0, minor = 0;

	/* half-MD4 of the folded name with the default seed: 63 bits, and
	 * the folding done once, by libext2fs (a name it cannot fold by its
	 * bytes) */
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
int cf_equal(const struct ext2fs_nls_table *enc, const char *a, size_t alen,
	     const char *b, size_t blen)
{
	if (!cf_name_valid(enc, a, alen) || !cf_name_valid(enc, b, blen))
		return alen == blen && !memcmp(a, b, alen);
	return !ext2fs_casefold_cmp(enc, (const unsigned char *)a, alen,
				    (const unsigned char *)b, blen);
}

errcode_t cf_set_add(struct cf_set *s, const struct ext2fs_nls_table *enc,
		     const char *name, size_t len, int *dup)
{
	uint64_t key = cf_name_key(enc, name, len);
	size_t at, last = 0;
	int chained = keymap_get(&s->by_key, key, &at);
	errcode_t err;

	*dup = 0;
	/* equal keys are folded names with the same hash: the names say */
	for (; chained; at = s->v[at].next - 1) {
		if (cf_equal(enc, name, len, s->v[at].name, s->v[at].len)) {
			*dup = 1;
			return 0;
		}
		last = at;
		if (!s->v[at].next)
			break;
	}
	err = grow_array(&s->v, &s->cap, s->n + 1, sizeof(*s->v), 64);
	if (err)
		return err;
	s->v[s->n].name = malloc(len ? len : 1);
	if (!s->v[s->n].name)
		return ENOMEM;
	memcpy(s->v[s->n].name, name, len);
	s->v[s->n].len = len;
	s->v[s->n].next = 0;
	if (chained)
		s->v[last].next = s->n + 1;
	else if ((err = keymap_add(&s->by_key, key, s->n))) {
		free(s->v[s->n].name);
		return err;
	}
	s->n++;
	return 0;
}

void cf_set_free(struct cf_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	keymap_free(&s->by_key);
	memset(s, 0, sizeof(*s));
}
