// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hashes of fs/ext4/hash.c are libext2fs's ext2fs_dirhash2: the same
 * legacy, half-MD4 and TEA hashes, with the name's bytes signed or
 * unsigned by version, the same default seed and the same end-of-directory
 * guard (tests/unit/t-mballoc.c holds 54 hashes the kernel agrees with).
 * In a casefolded directory both hash the utf8-casefolded name, and a
 * name the encoding cannot fold (invalid UTF-8) as its raw bytes, as the
 * kernel's ext4fs_dirhash falls back to them.
 */
#include "config.h"

#include <ext2fs/ext2fs.h>

#include "model/dirhash.h"

uint32_t ext4fs_dirhash(int version, const uint32_t seed[4], const char *name,
			int len, int *ok)
{
	return ext4fs_dirhash_ci(version, seed, NULL, name, len, ok);
}

uint32_t ext4fs_dirhash_ci(int version, const uint32_t seed[4],
			   const struct ext2fs_nls_table *enc,
			   const char *name, int len, int *ok)
{
	ext2_dirhash_t hash = 0, minor = 0;

	/* libext2fs knows a seventh version (SipHash, casefolded names
	 * with encryption) that ext4fs_dirhash of Linux 6.1 does not reach
	 * here: refused as before */
	*ok = version >= EXT2_HASH_LEGACY && version <= EXT2_HASH_TEA_UNSIGNED;
	/* libext2fs 1.47.0 fails some invalid names with ENAMETOOLONG, not
	 * EINVAL, where the kernel's utf8_casefold only fails them: any
	 * failure to fold falls back to the bytes, as ext4fs_dirhash's
	 * opaque_seq */
	if (*ok && enc &&
	    !ext2fs_dirhash2(version, name, len, enc, EXT4_CASEFOLD_FL, seed,
			     &hash, &minor))
		return hash;
	*ok = *ok && !ext2fs_dirhash2(version, name, len, NULL, 0, seed,
				      &hash, &minor);
	return *ok ? hash : 0;
}

uint32_t dirhash_half_md4(const uint32_t seed[4], const char *name, int len)
{
	int ok;

	return ext4fs_dirhash(EXT2_HASH_HALF_MD4, seed, name, len, &ok);
}
