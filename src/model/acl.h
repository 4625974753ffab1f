/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * POSIX ACLs as the kernel handles them when ext2 creates and chmods an
 * inode (fs/posix_acl.c, fs/ext2/acl.c of Linux 6.1): the inheritance of a
 * directory's default ACL by posix_acl_create(), the rewrite of an access
 * ACL by chmod, and the test that an ACL says no more than the mode.  ACLs
 * are held in ext2's on-disk form: version 1, then 4-byte entries for the
 * owner, owning group, mask and others and 8-byte ones (with an id) for
 * named users and groups.
 */
#ifndef ORLOV_ACL_H
#define ORLOV_ACL_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP 0x08
#define ACL_MASK 0x10
#define ACL_OTHER 0x20

struct acl_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

struct acl {
	struct acl_entry *e;
	size_t n;
};

/* ext2_acl_from_disk / ext2_acl_to_disk; ORLOV_ERR_BAD_XATTR when
 * malformed.  acl_to_disk gives a malloc'ed value. */
errcode_t acl_from_disk(const unsigned char *v, size_t size, struct acl *acl);
errcode_t acl_to_disk(const struct acl *acl, unsigned char **v, size_t *size);
/* The xattr form (system.posix_acl_*: version 2, 8-byte entries). */
errcode_t acl_from_xattr(const unsigned char *v, size_t size, struct acl *acl);
void acl_release(struct acl *acl);

/* posix_acl_create_masq: mask the inherited @acl and the create *mode with
 * each other; 1 when the ACL says more than the mode (it is stored), 0
 * when not, -1 for a malformed ACL. */
int posix_acl_create_masq(struct acl *acl, uint32_t *mode);
/* posix_acl_chmod_masq: the owner, mask (or group) and other entries take
 * the permissions of @mode; -1 for a malformed ACL. */
int posix_acl_chmod_masq(struct acl *acl, uint32_t mode);
/* posix_acl_equiv_mode: 0 when the mode says it all, 1 when not, -1 for a
 * malformed ACL. */
int posix_acl_equiv_mode(const struct acl *acl);

#endif
