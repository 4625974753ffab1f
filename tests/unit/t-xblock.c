// SPDX-License-Identifier: GPL-2.0-or-later
/* Attribute blocks as ext2_xattr_set/ext2_xattr_set2 manage them: sharing
 * up to refcount 1025, in-place edits, copies of shared blocks, frees, and
 * the mbcache's newest-first search across index growth. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "model/xblock.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"

static struct xattr_disk attr(const char *name, const char *value)
{
	struct xattr_disk d = { .index = 1, .name = name,
				.name_len = strlen(name),
				.value = (unsigned char *)value,
				.size = strlen(value) };
	return d;
}

static uint32_t refs(struct xattr_blocks *xb, fsblk_t blk)
{
	const unsigned char *b = xattr_blocks_data(xb, blk);

	return b ? xattr_block_refcount(b) : 0;
}

int main(void)
{
	struct fs_state fs = { .colour = 0 };
	struct xattr_blocks xb;
	struct xattr_disk a = attr("a", "same"), b = attr("b", "x");
	fsblk_t acl[1100], first, one, two;
	uint64_t other;
	uint64_t free0;
	int i, ok;

	/* 2 groups of 8192 blocks of 1 KiB, blocks 1..99 of each in use */
	fixture_state(&fs, 2, 4096, 8192, 99);
	is_int(xattr_blocks_init(&xb, 1024), 0, "init");
	free0 = percpu_counter_sum(&fs.freeb);

	/* 1100 inodes set the same attribute: one block up to 1025 users */
	memset(acl, 0, sizeof(acl));
	for (i = 0, ok = 1; i < 1100; i++)
		ok &= !ext2_xattr_set(&fs, &xb, 12 + i, 0, 0, NULL, &acl[i], &a, 0);
	tap_ok(ok, "1100 sets");
	first = acl[0];
	is_int(first, 100, "first block from the group start");
	is_int(refs(&xb, first), 1025, "shared until over 1024 (kernel: > max)");
	is_int(acl[1024], first, "the 1025th user still shares it");
	tap_ok(acl[1025] != first, "the 1026th gets a block of its own");
	is_int(refs(&xb, acl[1025]), 75, "which the other 75 share");
	is_int(percpu_counter_sum(&fs.freeb), free0 - 2, "two blocks in all");

	/* a second attribute on a shared block: a copy, the share drops */
	is_int(ext2_xattr_set(&fs, &xb, 12, 0, 0, NULL, &acl[0], &b, 0), 0,
	       "set b on a sharer");
	one = acl[0];
	tap_ok(one != first, "it moved to a new block");
	is_int(refs(&xb, first), 1024, "the shared block lost one user");
	/* the same on another: the newest identical block is shared */
	is_int(ext2_xattr_set(&fs, &xb, 13, 0, 0, NULL, &acl[1], &b, 0), 0,
	       "set b on another sharer");
	is_int(acl[1], one, "shares the {a, b} block");
	is_int(refs(&xb, one), 2, "two users");

	/* remove b from one of them: back to {a}, shared again */
	is_int(ext2_xattr_set(&fs, &xb, 13, 0, 0, NULL, &acl[1], &b, 1), 0,
	       "remove b");
	is_int(acl[1], acl[1025], "shares an {a} block again: the newest one");
	is_int(refs(&xb, one), 1, "{a, b} has one user left");

	/* a lone user edits in place: same block; removing it all frees it */
	two = acl[0];
	b = attr("b", "y");
	is_int(ext2_xattr_set(&fs, &xb, 12, 0, 0, NULL, &acl[0], &b, 0), 0,
	       "replace b, sole user");
	is_int(acl[0], two, "edited in place");
	other = (uint64_t)percpu_counter_sum(&fs.freeb);
	a = attr("a", "same");
	is_int(ext2_xattr_set(&fs, &xb, 12, 0, 0, NULL, &acl[0], &a, 1), 0,
	       "remove a");
	is_int(ext2_xattr_set(&fs, &xb, 12, 0, 0, NULL, &acl[0], &b, 1), 0,
	       "remove b");
	is_int(acl[0], 0, "no attribute block left");
	is_int(percpu_counter_sum(&fs.freeb), other + 1, "the block was freed");
	tap_ok(!xattr_blocks_data(&xb, two), "and is forgotten");
	is_int(ext2_xattr_set(&fs, &xb, 12, 0, 0, NULL, &acl[0], &b, 1), 0,
	       "removing what is not there changes nothing");

	/* 300 distinct blocks make the indexes grow; the cache keeps its
	 * newest-first order through that */
	for (i = 0, ok = 1; i < 300; i++) {
		char name[16];
		struct xattr_disk u;
		fsblk_t blk = 0;

		snprintf(name, sizeof(name), "u%d", i);
		u = attr(name, "v");
		ok &= !ext2_xattr_set(&fs, &xb, 5000 + i, 1, 0, NULL, &blk, &u, 0);
		ok &= blk != 0 && refs(&xb, blk) == 1;
	}
	tap_ok(ok, "300 distinct blocks");
	b = attr("c", "z");
	is_int(ext2_xattr_set(&fs, &xb, 14, 0, 0, NULL, &acl[2], &b, 0), 0,
	       "an {a} sharer adds c");
	is_int(ext2_xattr_set(&fs, &xb, 14, 0, 0, NULL, &acl[2], &b, 1), 0,
	       "and removes it");
	is_int(acl[2], acl[1025], "the newest {a} block, after the growth too");

	xattr_blocks_free(&xb);
	fs_state_free(&fs);
	return tap_done();
}
