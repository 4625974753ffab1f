/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Extended attribute names as ext2 and ext4 store them: a name index for
 * the prefix (fs/ext2/xattr.h, fs/ext4/xattr.h; ext2_ext_attr.h has none)
 * and the rest of the name.  The one table of index <-> prefix.
 */
#ifndef ORLOV_XATTR_NAME_H
#define ORLOV_XATTR_NAME_H

#define EXT2_XATTR_INDEX_USER 1
#define EXT2_XATTR_INDEX_POSIX_ACL_ACCESS 2
#define EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT 3
#define EXT2_XATTR_INDEX_TRUSTED 4
#define EXT2_XATTR_INDEX_SECURITY 6
#define EXT4_XATTR_INDEX_SYSTEM 7	/* system.data of inline data */
#define EXT4_XATTR_INDEX_RICHACL 8

/*
 * The index ext2_xattr_set files @full under (user., trusted., security.
 * with a non-empty rest, or one of the two POSIX ACL names), *rest the
 * part the entry keeps ("" for an ACL); 0 for a name ext2 cannot store.
 */
int xattr_name_index(const char *full, const char **rest);

/* The prefix an entry of @index is read with (the whole name for the
 * ACLs and richacl, whose entries keep an empty name), *is_acl set for the
 * two POSIX ACLs; NULL for an index neither driver knows. */
const char *xattr_index_prefix(unsigned int index, int *is_acl);

#endif
