// SPDX-License-Identifier: GPL-2.0-or-later
/* Attribute blocks: layout, hashes (checked against libext2fs, which
 * e2fsck uses), POSIX ACL conversion, limits. */
#include "config.h"

#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/xattr.h"
#include "lib/src_xattr.h"
#include "lib/hash.h"
#include "lib/ftype.h"
#include "lib/owner.h"
#include "lib/orlov_err.h"
#include "tap.h"

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int main(void)
{
	unsigned char block[1024], acl[4 + 5 * 8];
	char v1[] = "bar", v2[] = "\xff\x80 a longer value with high bytes";
	struct src_xattr xs[3] = {
		{ .name = "user.zz", .value = (unsigned char *)v1, .size = 3 },
		{ .name = "user.a\xe9", .value = (unsigned char *)v2, .size = sizeof(v2) - 1 },
		{ .name = "system.posix_acl_access", .value = acl, .size = sizeof(acl) },
	};
	static const uint16_t tags[5] = { 1, 2, 4, 0x10, 0x20 };
	const char *bad = NULL;
	struct ext2_ext_attr_entry *e;
	unsigned char *p;
	int i;

	/* version 2, entries user_obj, user:1000, group_obj, mask, other */
	memset(acl, 0, sizeof(acl));
	acl[0] = 2;
	for (i = 0; i < 5; i++) {
		unsigned char *a = acl + 4 + 8 * i;

		a[0] = (unsigned char)tags[i];
		a[2] = 6;
		if (tags[i] == 2) {
			a[4] = 0xe8;
			a[5] = 0x03;
		} else {
			memset(a + 4, 0xff, 4);	/* ACL_UNDEFINED_ID */
		}
	}

	is_int(xattr_build_block(xs, 3, block, sizeof(block), NAME_HASH_SIGNED, &bad), 0, "block built");
	is_int(le32(block), EXT2_EXT_ATTR_MAGIC, "magic");
	is_int(le32(block + 4), 1, "refcount 1");
	is_int(le32(block + 8), 1, "h_blocks 1");

	/* Entries sorted by index, then name length, then name: the ACL
	 * (index 2) after the user ones (index 1): "zz" before "a\xe9"? Both
	 * length 2: memcmp order puts "a\xe9" first. */
	p = block + 32;
	e = (struct ext2_ext_attr_entry *)p;
	is_int(e->e_name_index, 1, "first entry: user");
	is_int(memcmp(p + 16, "a\xe9", 2), 0, "first entry: a\\xe9");
	is_int(e->e_hash, ext2fs_ext_attr_hash_entry_signed(e, block + e->e_value_offs),
	       "entry hash with signed name bytes, as the kernel and e2fsck compute it");
	p += (16 + e->e_name_len + 3) & ~3;
	e = (struct ext2_ext_attr_entry *)p;
	is_int(memcmp(p + 16, "zz", 2), 0, "second entry: zz");
	is_int(e->e_hash, ext2fs_ext_attr_hash_entry_signed(e, block + e->e_value_offs),
	       "second entry hash");
	is_int(memcmp(block + e->e_value_offs, "bar", 3), 0, "value stored at its offset");
	p += (16 + e->e_name_len + 3) & ~3;
	e = (struct ext2_ext_attr_entry *)p;
	is_int(e->e_name_index, 2, "third entry: posix_acl_access");
	is_int(e->e_name_len, 0, "ACLs have an empty name");
	is_int(e->e_value_size, 4 + 4 + 8 + 4 + 4 + 4, "disk ACL: short entries but for named users");
	is_int(le32(block + e->e_value_offs), 1, "disk ACL version 1");
	is_int(le32(block + e->e_value_offs + 12), 1000, "named user id kept");
	p += (16 + e->e_name_len + 3) & ~3;
	is_int(le32(p), 0, "entry table ends with a zero word");
	tap_ok(xattr_block_hash(block) != 0, "block hash set");
	{
		struct ext2_ext_attr_header *h = (void *)block;
		unsigned char copy[1024];

		is_int(h->h_hash, xattr_block_hash(block), "the hash sits in h_hash");
		is_int(h->h_checksum, 0, "h_checksum left zero (no metadata_csum)");
		memcpy(copy, block, sizeof(copy));
		ext2fs_ext_attr_block_rehash((void *)copy,
			(struct ext2_ext_attr_entry *)(copy + sizeof(copy)));
		is_int(((struct ext2_ext_attr_header *)copy)->h_hash, h->h_hash,
		       "block hash as libext2fs recomputes it");
	}

	/* Linux 6.2+ and arm64: name bytes hashed unsigned, as libext2fs's
	 * plain ext2fs_ext_attr_hash_entry does. */
	is_int(xattr_build_block(xs, 3, block, sizeof(block), NAME_HASH_UNSIGNED, &bad), 0,
	       "block built with unsigned name hashing");
	e = (struct ext2_ext_attr_entry *)(block + 32);
	is_int(e->e_hash, ext2fs_ext_attr_hash_entry(e, block + e->e_value_offs),
	       "entry hash with unsigned name bytes");
	tap_ok(e->e_hash != ext2fs_ext_attr_hash_entry_signed(e, block + e->e_value_offs),
	       "a name byte over 0x7f hashes differently from the signed way");
	e = (struct ext2_ext_attr_entry *)(block + 32 + ((16 + 2 + 3) & ~3));
	is_int(e->e_hash, ext2fs_ext_attr_hash_entry_signed(e, block + e->e_value_offs),
	       "an ASCII name hashes the same either way");

	xs[0].name = "system.nfs4_acl";
	is_int(xattr_build_block(xs, 1, block, sizeof(block), NAME_HASH_SIGNED, &bad),
	       ORLOV_ERR_BAD_XATTR, "names ext2 cannot store are refused");
	tap_ok(bad && !strcmp(bad, "system.nfs4_acl"), "and named");
	{
		static unsigned char big[2000];
		struct src_xattr x = { .name = "user.big", .value = big, .size = sizeof(big) };

		is_int(xattr_build_block(&x, 1, block, sizeof(block), NAME_HASH_SIGNED, &bad),
		       ORLOV_ERR_XATTR_TOO_BIG, "values that overflow the block are refused");
	}
	{
		/* the one index <-> prefix table, both ways */
		const char *rest = NULL;
		int is_acl = -1;

		is_int(xattr_name_index("trusted.x", &rest), 4, "trusted. is index 4");
		tap_ok(rest && !strcmp(rest, "x"), "the entry keeps what follows the prefix");
		is_int(xattr_name_index("system.posix_acl_default", &rest), 3,
		       "the default ACL is index 3");
		tap_ok(rest && !*rest, "with an empty name");
		is_int(xattr_name_index("user.", &rest), 0, "a prefix alone is no name");
		is_int(xattr_name_index("system.data", &rest), 0,
		       "system. names are not ext2's to set");
		tap_ok(!strcmp(xattr_index_prefix(6, &is_acl), "security.") && !is_acl,
		       "index 6 reads as security.");
		tap_ok(!strcmp(xattr_index_prefix(2, &is_acl), "system.posix_acl_access") && is_acl,
		       "index 2 reads as the access ACL");
		tap_ok(!strcmp(xattr_index_prefix(8, &is_acl), "system.richacl") && !is_acl,
		       "index 8 reads as richacl, not a POSIX ACL");
		tap_ok(!xattr_index_prefix(5, &is_acl), "index 5 is unknown");
	}
	{
		/* the other one-of-each helpers of lib/ */
		uint64_t s = 0;
		struct ext2_inode in;

		tap_ok(splitmix64(&s) == 0xe220a8397b1dcdafULL, "splitmix64, seed 0");
		tap_ok(fnv1a64(FNV1A64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL,
		       "FNV-1a 64 of \"a\"");
		is_int(ftype_of_mode(S_IFLNK | 0777), EXT2_FT_SYMLINK, "a symlink's d_type");
		is_int(ftype_of_mode(0), EXT2_FT_UNKNOWN, "no type, EXT2_FT_UNKNOWN");
		tap_ok(!strcmp(ftype_name_of_mode(S_IFCHR | 0600), "chr"), "a character device is chr");
		memset(&in, 0, sizeof(in));
		inode_set_uid(in, 0x12345678u);
		inode_set_gid(in, 70000u);
		tap_ok(in.i_uid == 0x5678 && inode_uid(in) == 0x12345678u,
		       "uid: low half in i_uid, high in l_i_uid_high");
		tap_ok(inode_gid(in) == 70000u, "gid over 16 bits kept");
	}
	return tap_done();
}
