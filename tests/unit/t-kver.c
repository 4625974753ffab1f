// SPDX-License-Identifier: GPL-2.0-or-later
/* --kernel's releases: a line alone is its reference release, a point
 * release is itself, anything outside 6.1, 6.8 and 6.12 is refused; and
 * the model's gates on them. */
#include "config.h"

#include <stdlib.h>

#include "model/kver.h"
#include "model/ext4/mballoc.h"
#include "tap.h"
#include "fixture.h"

/* @s parses to @want (and arm64 @arm): 1 when it does. */
static int parses(const char *s, uint32_t want, int arm)
{
	uint32_t v = 0;
	int a = -1;

	if (kver_parse(s, &v, &a) || v != want || a != arm) {
		printf("#   %s: got %u.%u.%u arm64 %d\n", s, KVER_MAJOR(v),
		       KVER_MINOR(v), KVER_PATCH(v), a);
		return 0;
	}
	return 1;
}

static int refused(const char *s)
{
	uint32_t v = 12345;
	int a = 0;

	return kver_parse(s, &v, &a) == -1;
}

/*
 * The block one metadata block from group 0 gets on 20 groups (16 or
 * more: mb_optimize_scan on) where groups 0-9 are full, 15 is free
 * every other block (average fragment 1, first on criterion 1's lists)
 * and the rest have one free run: the linear scan reaches group 10
 * first, the optimized one (after 4 groups in turn) takes group 15.
 */
static uint32_t scan_pick(uint32_t kver, int extents)
{
	struct fs_state fs;
	uint32_t g, b, blk = 0;

	fixture_state(&fs, 20, 64, 8192, 300);
	fs.kver = kver;
	fs.g.extents = extents;
	for (g = 0; g < 10; g++)
		for (b = 0; b < 8192; b++)
			bit_set(group_bbitmap(&fs, g), b);
	for (b = 300; b < 8192; b += 2)
		bit_set(group_bbitmap(&fs, 15), b);
	for (g = 0; g < 10; g++)
		fs.free_blocks[g] = 0;
	fs.free_blocks[15] = (8192 - 300) / 2;
	fs_state_sum(&fs);
	if (mb_state_init(&fs, 1))
		exit(99);
	if (extents)
		blk = ext_new_blocks(&fs, NULL, 1, 1);
	else if (ext4_mb_new_block(&fs, NULL, 0, 0, 1, &blk))
		blk = 0;
	if (!blk)
		exit(99);
	mb_state_free(&fs);
	fs_state_free(&fs);
	return (blk - 1) / 8192;
}

static void test_scan_gate(void)
{
	is_int(scan_pick(KVER(6, 1, 164), 0), 10,
	       "6.1.164: an indirect-mapped inode scans groups in turn");
	is_int(scan_pick(KVER(6, 1, 165), 0), 15,
	       "6.1.165: an indirect-mapped inode uses mb_optimize_scan");
	is_int(scan_pick(KVER_REF_6_1, 0), 15, "so does 6.1.192");
	is_int(scan_pick(KVER(6, 1, 164), 1), 15,
	       "6.1.164: an extent-mapped inode uses mb_optimize_scan");
	tap_ok(!kver_mb_optimize_indirect(KVER_LAST_6_8) &&
	       !kver_mb_optimize_indirect(KVER(6, 12, 74)) &&
	       kver_mb_optimize_indirect(KVER(6, 12, 75)) &&
	       kver_mb_optimize_indirect(KVER_REF_6_12),
	       "6.8 and 6.12 before 6.12.75 scan indirect files in turn");
	is_int(scan_pick(KVER_LAST_6_8, 0), 10,
	       "6.8: an indirect-mapped inode scans groups in turn");
	is_int(scan_pick(KVER_LAST_6_8, 1), 15,
	       "6.8: an extent-mapped inode uses mb_optimize_scan");
	is_int(scan_pick(KVER(6, 12, 74), 0), 10,
	       "6.12.74: an indirect-mapped inode scans groups in turn");
	is_int(scan_pick(KVER(6, 12, 75), 0), 15,
	       "6.12.75: an indirect-mapped inode uses mb_optimize_scan");
}

int main(void)
{
	static const char *const bad[] = {
		"", "6", "6.", "6.1.", "6..1", "5.10", "6.0", "6.2", "6.7",
		"6.11.5", "6.13", "7.0", "6.1x", "6.1.164x", "6.12-arm",
		"6.8-arm64", "6.8.12-arm64", "6.1-arm", "6.1.-arm64", "6.8.13", "6.1.12345",
		" 6.1", "6.1 ", "+6.1", "6.-1", "6.1.+2",
	};
	size_t i;

	tap_ok(KVER(6, 1, 192) == 0x0601c0, "KVER is KERNEL_VERSION");
	tap_ok(KVER(4, 9, 337) == KVER(4, 9, 255), "patch levels clamp to 255");
	tap_ok(KVER(6, 1, 999) < KVER(6, 2, 0), "a clamped patch stays below the next minor");
	tap_ok(parses("6.1", KVER_REF_6_1, 0), "6.1 is 6.1.192");
	tap_ok(parses("6.12", KVER_REF_6_12, 0), "6.12 is 6.12.118");
	tap_ok(parses("6.8", KVER(6, 8, 12), 0), "6.8 is its last release, 6.8.12");
	tap_ok(parses("6.1.164", KVER(6, 1, 164), 0), "6.1.164");
	tap_ok(parses("6.12.74", KVER(6, 12, 74), 0), "6.12.74");
	tap_ok(parses("6.12.0", KVER(6, 12, 0), 0), "6.12.0");
	tap_ok(parses("6.8.1", KVER(6, 8, 1), 0), "6.8.1");
	tap_ok(parses("6.1.300", KVER(6, 1, 255), 0), "6.1.300 clamps");
	tap_ok(parses("6.1-arm64", KVER_REF_6_1, 1), "6.1-arm64");
	tap_ok(parses("6.1.100-arm64", KVER(6, 1, 100), 1), "6.1.100-arm64");
	tap_ok(parses("6.12-arm64", KVER_REF_6_12, 1), "6.12-arm64 is 6.12.118");
	tap_ok(parses("6.12.100-arm64", KVER(6, 12, 100), 1), "6.12.100-arm64");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(refused(bad[i]), "\"%s\" refused", bad[i]);
	tap_ok(refused(NULL), "no string refused");
	tap_ok(kver_ext4_modelled(KVER_REF_6_1) &&
	       kver_ext4_modelled(KVER(6, 1, 0)) &&
	       kver_ext4_modelled(KVER(6, 1, 255)) &&
	       kver_ext4_modelled(KVER(6, 8, 0)) &&
	       kver_ext4_modelled(KVER_LAST_6_8) &&
	       kver_ext4_modelled(KVER(6, 12, 0)) &&
	       kver_ext4_modelled(KVER(6, 12, 76)) &&
	       kver_ext4_modelled(KVER(6, 12, 255)) &&
	       !kver_ext4_modelled(KVER(6, 13, 0)) &&
	       !kver_ext4_modelled(KVER(6, 0, 255)),
	       "--driver ext4: every release --kernel takes");
	tap_ok(KVER_REF_6_1 < KVER_MB_65 && KVER_LAST_6_8 >= KVER_MB_65 &&
	       KVER(6, 12, 76) < KVER_MB_612 && KVER_REF_6_12 >= KVER_MB_612,
	       "6.5's criteria in 6.8 and 6.12, 6.12.77's lists from 6.12.77");
	tap_ok(KVER_REF_6_1 < KVER_UNSIGNED_CHAR &&
	       KVER_LAST_6_8 >= KVER_EXT2_XATTR_NORESERVE,
	       "6.1 signed char, 6.8 no reservation for attribute blocks");
	test_scan_gate();
	return tap_done();
}
