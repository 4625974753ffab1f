// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <string.h>

#include "model/kver.h"

/* A decimal number of at most four digits at *s, moved past. */
static int number(const char **s, unsigned int *n)
{
	const char *p = *s;

	*n = 0;
	while (*p >= '0' && *p <= '9' && p - *s < 4)
		*n = *n * 10 + (unsigned int)(*p++ - '0');
	if (p == *s || (*p >= '0' && *p <= '9'))
		return -1;
	*s = p;
	return 0;
}

int kver_parse(const char *s, uint32_t *v, int *arm64)
{
	unsigned int major, minor, patch = 0;
	int has_patch = 0;

	if (!s || number(&s, &major) || *s++ != '.' || number(&s, &minor))
		return -1;
	if (*s == '.') {
		s++;
		if (number(&s, &patch))
			return -1;
		has_patch = 1;
	}
	*arm64 = !strcmp(s, "-arm64");
	if (*s && !*arm64)
		return -1;
	if (major != 6 || (minor != 1 && minor != 8 && minor != 12))
		return -1;
	/* arm64 differs from x86 only in 6.1's char signedness; 6.12-arm64
	 * is taken as the arm64 oracle's name for the 6.12 model (6.8 has
	 * no arm64 kernel to check it against) */
	if (*arm64 && minor == 8)
		return -1;
	if (minor == 8 && has_patch && KVER(6, 8, patch) > KVER_LAST_6_8)
		return -1;
	if (has_patch)
		*v = KVER(6, minor, patch);
	else
		*v = minor == 1 ? KVER_REF_6_1 :
		     minor == 8 ? KVER_LAST_6_8 : KVER_REF_6_12;
	return 0;
}
