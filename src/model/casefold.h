/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names in a casefolded directory (EXT4_CASEFOLD_FL, chattr +F) of a
 * filesystem with the casefold feature: ext4 compares them after utf8
 * casefolding by the superblock's encoding, so two names that fold alike
 * are one name (mkdir or creat of the second meets EEXIST).  The folding
 * is libext2fs's (ext2fs_casefold_cmp, ext2fs_dirhash2), the same
 * utf8-12.1 tables as the kernel's.
 */
#ifndef ORLOV_CASEFOLD_H
#define ORLOV_CASEFOLD_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#include "model/dir.h"
#include "lib/keymap.h"

/* A 64-bit key of @name's folded form: names that fold alike have the
 * same key (a name that cannot be folded keys by its bytes, as the kernel
 * then compares them). */
uint64_t cf_name_key(const struct ext2fs_nls_table *enc, const char *name,
		     size_t len);

/* Is @name valid in the encoding (what strict mode asks of a name)? */
int cf_name_valid(const struct ext2fs_nls_table *enc, const char *name,
		  size_t len);

/* ext4_match in a casefolded directory: do @a and @b fold alike (or,
 * either not foldable, are they the same bytes)? */
int cf_equal(const struct ext2fs_nls_table *enc, const char *a, size_t alen,
	     const char *b, size_t blen);

/* The names added to one casefolded directory, by their keys, for a
 * name that folds like one of them to be found: the first name of each
 * key in the program's hash map, the others of that key chained. */
struct cf_set {
	struct cf_name {
		char *name;
		size_t len;
		size_t next;	/* the next name of the same key + 1; 0: none */
	} *v;
	size_t n, cap;
	struct keymap by_key;
};

/* Add @name, unless one that folds alike is there: then *dup is set and
 * nothing is added. */
errcode_t cf_set_add(struct cf_set *s, const struct ext2fs_nls_table *enc,
		     const char *name, size_t len, int *dup);
void cf_set_free(struct cf_set *s);

#endif
