// SPDX-License-Identifier: GPL-2.0-or-later
/* ext4's inline data in a 256-byte inode's attribute space (96 bytes
 * past i_extra_isize 32): the sizes fs/ext4/inline.c computes, the value
 * system.data gets and keeps, an inline directory's entries in i_block
 * and then in the value, grown once. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/inline.h"
#include "model/xattr.h"
#include "lib/util.h"
#include "tap.h"

#define TAIL 96

struct names {
	int n;
	char seen[16][16];
};

static errcode_t collect(void *arg, const char *name, size_t len,
			 uint32_t ino)
{
	struct names *s = arg;

	(void)ino;
	if (s->n < 16 && len < 16)
		memcpy(s->seen[s->n], name, len);
	s->n++;
	return 0;
}

int main(void)
{
	unsigned char tail[TAIL], *v;
	char name[16];
	struct xattr_disk user = { .index = 1, .name = "k", .name_len = 1,
				   .value = (unsigned char *)"0123456789abcdef0123",
				   .size = 20 };
	struct dirbuf d;
	struct names s = { 0 };
	size_t vsize = 0;
	int fits, added, i;

	memset(tail, 0, sizeof(tail));
	/* 92 bytes after the magic: the entry (20), its terminator (4),
	 * rounding (3): a value of 68 */
	is_int(get_max_inline_xattr_value_size(tail, TAIL), 68,
	       "empty inode: a value of 68 bytes");
	is_int(ext4_get_max_inline_size(tail, TAIL), 128,
	       "empty inode: 128 bytes inline");
	is_int(ext4_get_max_inline_size(tail, 4), 0, "no attribute space");

	/* a file of 100 bytes: 60 in i_block, 40 in the value */
	tap_ok(!ext4_prepare_inline_data(tail, TAIL, 100, &fits) && fits,
	       "100 bytes fit");
	v = ext4_inline_value(tail, TAIL, &vsize);
	tap_ok(v != NULL, "system.data made");
	is_int(vsize, 40, "its value: 40 bytes");
	memset(v, 'x', vsize);
	tap_ok(!ext4_prepare_inline_data(tail, TAIL, 90, &fits) && fits,
	       "a shorter write keeps it");
	v = ext4_inline_value(tail, TAIL, &vsize);
	is_int(vsize, 40, "still 40 bytes");
	tap_ok(!ext4_prepare_inline_data(tail, TAIL, 128, &fits) && fits,
	       "grown to the most");
	v = ext4_inline_value(tail, TAIL, &vsize);
	tap_ok(vsize == 68 && v[0] == 'x' && v[39] == 'x' && v[40] == 0,
	       "grown: the old bytes kept, the rest zeros");
	tap_ok(!ext4_prepare_inline_data(tail, TAIL, 129, &fits) && !fits,
	       "129 bytes do not fit");

	/* an attribute first: less room */
	memset(tail, 0, sizeof(tail));
	tap_ok(!xattr_ibody_set(tail, TAIL, &user, 0), "user.k in the inode");
	/* 92 - 20 (value) - 20 (entry) - 4 - 20 (system.data's entry) - 3 */
	is_int(get_max_inline_xattr_value_size(tail, TAIL), 28,
	       "beside a 20-byte attribute: a value of 28 bytes");

	/* a directory: ".." and one empty entry in i_block, then names */
	memset(&d, 0, sizeof(d));
	d.filetype = 1;
	d.map.ibody = calloc(1, TAIL);
	d.map.ibody_size = TAIL;
	tap_ok(d.map.ibody && !ext4_try_create_inline_dir(&d, 2, &fits) &&
	       fits && d.inline_dir, "inline directory made");
	is_int(ext4_inline_dir_size(&d), 60, "i_size 60");
	is_int(get_le32(d.inl), 2, "\"..\" is the parent");
	/* names of 4 bytes take 12: 4 in i_block's 56, 5 in the 68 more */
	for (i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		tap_ok(!ext4_try_add_inline_entry(NULL, &d, name, 4,
						  (uint32_t)(20 + i),
						  EXT2_FT_REG_FILE, &added) &&
		       added, "%s inline", name);
		if (i == 3)
			is_int(ext4_inline_dir_size(&d), 60,
			       "four names in i_block");
	}
	is_int(ext4_inline_dir_size(&d), 128, "grown to 128 once");
	tap_ok(!ext4_inline_for_each(&d, collect, &s), "walked");
	is_int(s.n, 9, "nine names");
	tap_ok(!strcmp(s.seen[0], "n000") && !strcmp(s.seen[8], "n008"),
	       "in order");
	free(d.map.ibody);
	return tap_done();
}
