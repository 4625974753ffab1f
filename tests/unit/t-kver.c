// SPDX-License-Identifier: GPL-2.0-or-later
/* --kernel's releases: a line alone is its reference release, a point
 * release is itself, anything outside 6.1, 6.8 and 6.12 is refused. */
#include "config.h"

#include "model/kver.h"
#include "tap.h"

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

int main(void)
{
	static const char *const bad[] = {
		"", "6", "6.", "6.1.", "6..1", "5.10", "6.0", "6.2", "6.7",
		"6.11.5", "6.13", "7.0", "6.1x", "6.1.164x", "6.12-arm64",
		"6.8-arm64", "6.1-arm", "6.1.-arm64", "6.8.13", "6.1.12345",
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
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(refused(bad[i]), "\"%s\" refused", bad[i]);
	tap_ok(refused(NULL), "no string refused");
	tap_ok(kver_ext4_modelled(KVER_REF_6_1) &&
	       kver_ext4_modelled(KVER(6, 1, 255)) &&
	       !kver_ext4_modelled(KVER_LAST_6_8) &&
	       !kver_ext4_modelled(KVER(6, 12, 76)) &&
	       kver_ext4_modelled(KVER(6, 12, 77)) &&
	       kver_ext4_modelled(KVER_REF_6_12),
	       "--driver ext4: the 6.1 line, and 6.12 from 6.12.77");
	tap_ok(KVER_REF_6_1 < KVER_UNSIGNED_CHAR &&
	       KVER_LAST_6_8 >= KVER_EXT2_XATTR_NORESERVE,
	       "6.1 signed char, 6.8 no reservation for attribute blocks");
	return tap_done();
}
