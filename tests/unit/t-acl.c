// SPDX-License-Identifier: GPL-2.0-or-later
/* POSIX ACL inheritance and chmod (the kernel's rules), and the in-block
 * edits of ext2_xattr_set: replace, grow, remove, with the value offsets
 * they leave behind. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/acl.h"
#include "model/xattr.h"
#include "lib/orlov_err.h"
#include "tap.h"

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static void test_acl(void)
{
	struct acl_entry e[5] = {
		{ ACL_USER_OBJ, 7, 0xffffffffU }, { ACL_USER, 6, 1000 },
		{ ACL_GROUP_OBJ, 5, 0xffffffffU }, { ACL_MASK, 7, 0xffffffffU },
		{ ACL_OTHER, 5, 0xffffffffU },
	};
	struct acl acl = { e, 5 }, back;
	struct acl_entry base[3] = {
		{ ACL_USER_OBJ, 7, 0xffffffffU }, { ACL_GROUP_OBJ, 5, 0xffffffffU },
		{ ACL_OTHER, 0, 0xffffffffU },
	};
	struct acl min = { base, 3 };
	unsigned char *v;
	size_t size;
	uint32_t mode = 0100640;

	/* create(0640) under u::rwx,u:1000:rw-,g::r-x,m::rwx,o::r-x */
	is_int(posix_acl_create_masq(&acl, &mode), 1, "named user: ACL kept");
	is_int(e[0].perm, 6, "owner masked by the create mode");
	is_int(e[3].perm, 4, "mask masked by the group bits");
	is_int(e[4].perm, 0, "others masked");
	is_int(e[2].perm, 5, "owning group untouched when there is a mask");
	is_int(mode, 0100640, "mode: type kept, bits within the ACL");

	is_int(posix_acl_chmod_masq(&acl, 04755), 0, "chmod");
	is_int(e[0].perm, 7, "chmod: owner from the mode");
	is_int(e[3].perm, 5, "chmod: the mask takes the group bits");
	is_int(e[1].perm, 6, "chmod: named user kept");
	is_int(posix_acl_equiv_mode(&acl), 1, "a mask says more than a mode");

	mode = 0777;
	is_int(posix_acl_create_masq(&min, &mode), 0, "three base entries: no ACL");
	is_int(mode, 0750, "but the mode is masked by them");
	is_int(posix_acl_equiv_mode(&min), 0, "equivalent to the mode");

	is_int(acl_to_disk(&acl, &v, &size), 0, "to disk");
	is_int(size, 4 + 4 + 8 + 4 + 4 + 4, "short entries, a long one for u:1000");
	is_int(acl_from_disk(v, size, &back), 0, "from disk");
	tap_ok(back.n == 5 && !memcmp(back.e, e, sizeof(e)), "round trip");
	acl_release(&back);
	is_int(acl_from_disk(v, size - 2, &back), ORLOV_ERR_BAD_XATTR,
	       "a truncated ACL is refused");
	free(v);
}

static struct xattr_disk attr(int index, const char *name, const char *value)
{
	struct xattr_disk d = { .index = index, .name = name,
				.name_len = strlen(name),
				.value = (unsigned char *)value,
				.size = strlen(value) };
	return d;
}

/* offset of the value of the @nth entry */
static uint32_t voff(const unsigned char *b, int nth)
{
	const unsigned char *e = b + 32;

	while (nth--)
		e += (16 + e[0] + 3) & ~3U;
	return le16(e + 2);
}

static void test_block_edits(void)
{
	unsigned char b[1024], c[1024];
	struct xattr_disk a = attr(1, "a", "1234"), bb = attr(1, "bb", ""),
			  z = attr(1, "zz", "xy");
	const unsigned char *v;
	size_t size;

	xattr_block_init(b, sizeof(b));
	is_int(xattr_block_set(b, sizeof(b), &z, 0, NAME_HASH_SIGNED), 0, "set zz");
	is_int(xattr_block_set(b, sizeof(b), &a, 0, NAME_HASH_SIGNED), 0, "set a");
	is_int(xattr_block_set(b, sizeof(b), &bb, 0, NAME_HASH_SIGNED), 0, "set bb (empty)");
	/* table order a, bb, zz; values placed downwards as set: zz then a */
	is_int(voff(b, 2), 1020, "first value set at the end");
	is_int(voff(b, 0), 1016, "the next one below it");
	is_int(voff(b, 1), 0, "empty value: offset 0");

	/* the same padded size: replaced where it stands */
	a = attr(1, "a", "567");
	is_int(xattr_block_set(b, sizeof(b), &a, 0, NAME_HASH_SIGNED), 0, "replace a, same size");
	is_int(voff(b, 0), 1016, "in place");
	v = xattr_block_get(b, 1, "a", 1, &size);
	tap_ok(v && size == 3 && !memcmp(v, "567", 3), "new value read back");

	/* a longer value: the old one goes, the values below move up, and so
	 * does every offset below it, the empty value's 0 too */
	z = attr(1, "zz", "a longer value");
	memcpy(c, b, sizeof(c));
	is_int(xattr_block_set(b, sizeof(b), &z, 0, NAME_HASH_SIGNED), 0, "grow zz");
	is_int(voff(b, 0), 1020, "a moved up into zz's old place");
	is_int(voff(b, 1), 4, "the empty value's offset moved too, as ext2 does");
	is_int(voff(b, 2), 1004, "zz's new value below the others");
	is_int(xattr_block_cmp(b, c), 1, "different contents");

	is_int(xattr_block_set(b, sizeof(b), &a, 1, NAME_HASH_SIGNED), 0, "remove a");
	tap_ok(!xattr_block_get(b, 1, "a", 1, &size), "a is gone");
	v = xattr_block_get(b, 1, "zz", 2, &size);
	tap_ok(v && size == 14 && !memcmp(v, "a longer value", 14),
	       "zz intact after the removal");
	tap_ok(!xattr_block_is_empty(b), "not empty yet");
	is_int(xattr_block_set(b, sizeof(b), &bb, 1, NAME_HASH_SIGNED), 0, "remove bb");
	is_int(xattr_block_set(b, sizeof(b), &z, 1, NAME_HASH_SIGNED), 0, "remove zz");
	tap_ok(xattr_block_is_empty(b), "empty");

	/* equal entries, different placement: ext2_xattr_cmp calls them equal */
	xattr_block_init(b, sizeof(b));
	xattr_block_init(c, sizeof(c));
	a = attr(1, "a", "1");
	z = attr(1, "zz", "2");
	xattr_block_set(b, sizeof(b), &a, 0, NAME_HASH_SIGNED);
	xattr_block_set(b, sizeof(b), &z, 0, NAME_HASH_SIGNED);
	xattr_block_set(c, sizeof(c), &z, 0, NAME_HASH_SIGNED);
	xattr_block_set(c, sizeof(c), &a, 0, NAME_HASH_SIGNED);
	tap_ok(memcmp(b, c, sizeof(b)) != 0, "values placed differently");
	is_int(xattr_block_cmp(b, c), 0, "yet the same to the mbcache");
	is_int(le32(b + 12), le32(c + 12), "and the same hash");
}

int main(void)
{
	test_acl();
	test_block_edits();
	return tap_done();
}
