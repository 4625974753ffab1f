// SPDX-License-Identifier: GPL-2.0-or-later
/* model/casefold and dirhash's casefolded hash: a +F directory hashes
 * the folded name (so "File-1.TXT" as "file-1.txt", "Straße" as
 * "strasse"), a name that cannot be folded as its bytes; names that fold
 * alike (case, full folding, canonical equivalence) are one name, an
 * invalid one only equal to itself. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/casefold.h"
#include "model/dirhash.h"
#include "tap.h"

static uint32_t h(const struct ext2fs_nls_table *enc, const char *name)
{
	/* the seed of tests/lib.sh's T_SEED, as s_hash_seed holds it */
	static const unsigned char uuid[16] = {
		0x6f, 0x72, 0x6c, 0x6f, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 2 };
	uint32_t seed[4];
	int ok;
	uint32_t v;

	memcpy(seed, uuid, sizeof(seed));
	v = ext4fs_dirhash_ci(EXT2_HASH_HALF_MD4, seed, enc, name,
			      (int)strlen(name), &ok);
	return ok ? v : 1;	/* the low bit is never set in a hash */
}

static int dup_of(struct cf_set *s, const struct ext2fs_nls_table *enc,
		  const char *name)
{
	int dup = -1;

	if (cf_set_add(s, enc, name, strlen(name), &dup))
		return -1;
	return dup;
}

int main(void)
{
	const struct ext2fs_nls_table *enc =
		ext2fs_load_nls_table(EXT4_ENC_UTF8_12_1);
	struct cf_set s = { 0 };
	char name[32];
	int i, dups = 0;

	if (!tap_ok(enc != NULL, "utf8-12.1 loaded"))
		return tap_done();
	tap_ok(h(enc, "File-1.TXT") == h(NULL, "file-1.txt") &&
	       h(NULL, "File-1.TXT") != h(NULL, "file-1.txt"),
	       "casefolded: the hash of the lower-case name");
	tap_ok(h(enc, "Stra\303\237e") == h(NULL, "strasse"),
	       "full folding: sharp s as ss");
	tap_ok(h(enc, "caf\303\251") == h(enc, "cafe\314\201") &&
	       h(enc, "caf\303\251") != h(NULL, "caf\303\251"),
	       "canonical equivalence: precomposed and decomposed alike");
	tap_ok(h(enc, "bad-\377") == h(NULL, "bad-\377"),
	       "invalid UTF-8: hashed as its bytes");
	tap_ok(cf_name_valid(enc, "caf\303\251", 5) &&
	       !cf_name_valid(enc, "bad-\377", 5), "valid and invalid names");

	is_int(dup_of(&s, enc, "README"), 0, "README added");
	is_int(dup_of(&s, enc, "readme"), 1, "readme folds like README");
	is_int(dup_of(&s, enc, "Stra\303\237e"), 0, "Stra\303\237e added");
	is_int(dup_of(&s, enc, "STRASSE"), 1, "STRASSE folds like it");
	is_int(dup_of(&s, enc, "caf\303\251"), 0, "caf\303\251 added");
	is_int(dup_of(&s, enc, "CAFE\314\201"), 1, "CAFE and a combining acute");
	is_int(dup_of(&s, enc, "bad-\377"), 0, "an invalid name added");
	is_int(dup_of(&s, enc, "BAD-\377"), 0, "not folded: another name");
	is_int(dup_of(&s, enc, "bad-\377"), 1, "but itself again");
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), i % 2 ? "Name-%d" : "nAME-%d", i);
		dups += dup_of(&s, enc, name) != 0;
	}
	is_int(dups, 0, "5,000 distinct names through the set's growth");
	snprintf(name, sizeof(name), "NAME-%d", 4321);
	is_int(dup_of(&s, enc, name), 1, "and one of them found after it");
	cf_set_free(&s);
	return tap_done();
}
