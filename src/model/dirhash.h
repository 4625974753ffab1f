/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ext4's directory name hashes (fs/ext4/hash.c of Linux 6.1): what an
 * indexed directory sorts its names by, and what ext4's Orlov uses to
 * start a top-level directory's search.
 */
#ifndef ORLOV_DIRHASH_H
#define ORLOV_DIRHASH_H

#include <stdint.h>
#include <ext2fs/ext2_fs.h>

/* The hash versions are ext2_fs.h's EXT2_HASH_* (s_def_hash_version and
 * dx_root_info.hash_version); the _UNSIGNED ones are what a filesystem
 * with EXT2_FLAGS_UNSIGNED_HASH uses instead. */

/*
 * ext4fs_dirhash(): the major hash of @name (low bit clear, never the
 * end-of-directory value), or -1 in *ok for a version this code does not
 * know.  @seed: the superblock's s_hash_seed as four little-endian words;
 * all zero or NULL means the default seed.
 */
uint32_t ext4fs_dirhash(int version, const uint32_t seed[4], const char *name,
			int len, int *ok);
/* The same in a directory with EXT4_CASEFOLD_FL: @enc is the
 * superblock's encoding (ext2fs_load_nls_table); NULL hashes the name as
 * it is. */
struct ext2fs_nls_table;
uint32_t ext4fs_dirhash_ci(int version, const uint32_t seed[4],
			   const struct ext2fs_nls_table *enc,
			   const char *name, int len, int *ok);

/* ext4's rule for the start group of a top-level directory: signed
 * half-MD4 of the name with the superblock hash seed, modulo the group
 * count (always EXT2_HASH_HALF_MD4, whatever the filesystem's default). */
uint32_t dirhash_half_md4(const uint32_t seed[4], const char *name, int len);

#endif
