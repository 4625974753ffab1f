// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hashes of fs/ext4/hash.c, written from its description: legacy
 * (dx_hack_hash), half-MD4 over 32-byte pieces and TEA over 16-byte
 * pieces, each with the name's bytes taken as signed or unsigned chars.
 */
#include "config.h"

#include <string.h>

#include "dirhash.h"

#define HF(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define HG(x, y, z) (((x) & (y)) + (((x) ^ (y)) & (z)))
#define HH(x, y, z) ((x) ^ (y) ^ (z))
#define ROL(v, s) (((v) << (s)) | ((v) >> (32 - (s))))
#define STEP(fn, a, b, c, d, x, s) ((a) += fn((b), (c), (d)) + (x), (a) = ROL((a), (s)))

/* Half-MD4: three rounds over 8 words. */
static void half_md4(uint32_t h[4], const uint32_t in[8])
{
	static const uint8_t r1x[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t r2x[8] = { 1, 3, 5, 7, 0, 2, 4, 6 };
	static const uint8_t r3x[8] = { 3, 7, 2, 6, 1, 5, 0, 4 };
	static const uint8_t s1[4] = { 3, 7, 11, 19 };
	static const uint8_t s2[4] = { 3, 5, 9, 13 };
	static const uint8_t s3[4] = { 3, 9, 11, 15 };
	const uint32_t k2 = 013240474631U, k3 = 015666365641U;
	uint32_t v[4] = { h[0], h[1], h[2], h[3] };
	int i;

	/* Step i updates word (4 - i) % 4 of (a, b, c, d): a, d, c, b, ... */
	for (i = 0; i < 8; i++) {
		int t = (4 - i % 4) % 4;

		STEP(HF, v[t], v[(t + 1) % 4], v[(t + 2) % 4], v[(t + 3) % 4],
		     in[r1x[i]], s1[i % 4]);
	}
	for (i = 0; i < 8; i++) {
		int t = (4 - i % 4) % 4;

		STEP(HG, v[t], v[(t + 1) % 4], v[(t + 2) % 4], v[(t + 3) % 4],
		     in[r2x[i]] + k2, s2[i % 4]);
	}
	for (i = 0; i < 8; i++) {
		int t = (4 - i % 4) % 4;

		STEP(HH, v[t], v[(t + 1) % 4], v[(t + 2) % 4], v[(t + 3) % 4],
		     in[r3x[i]] + k3, s3[i % 4]);
	}
	for (i = 0; i < 4; i++)
		h[i] += v[i];
}

/* 16 rounds of TEA with the name as the key, on the first two words. */
static void tea(uint32_t h[4], const uint32_t in[4])
{
	uint32_t sum = 0, b0 = h[0], b1 = h[1];
	int n;

	for (n = 0; n < 16; n++) {
		sum += 0x9E3779B9U;
		b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
		b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
	}
	h[0] += b0;
	h[1] += b1;
}

static uint32_t byte_at(const char *msg, int i, int is_unsigned)
{
	return is_unsigned ? (uint32_t)(unsigned char)msg[i] :
			     (uint32_t)(int)(signed char)msg[i];
}

/* Pack up to 4 * @num name bytes into @num words, big end first, padded
 * with the length. */
static void str2hashbuf(const char *msg, int len, uint32_t *buf, int num,
			int is_unsigned)
{
	uint32_t pad = (uint32_t)len | ((uint32_t)len << 8);
	uint32_t val;
	int i;

	pad |= pad << 16;
	val = pad;
	if (len > num * 4)
		len = num * 4;
	for (i = 0; i < len; i++) {
		val = byte_at(msg, i, is_unsigned) + (val << 8);
		if (i % 4 == 3) {
			*buf++ = val;
			val = pad;
			num--;
		}
	}
	if (--num >= 0)
		*buf++ = val;
	while (--num >= 0)
		*buf++ = pad;
}

static uint32_t dx_hack_hash(const char *name, int len, int is_unsigned)
{
	uint32_t hash, hash0 = 0x12a3fe2d, hash1 = 0x37abe8f9;
	int i;

	for (i = 0; i < len; i++) {
		hash = hash1 + (hash0 ^ (byte_at(name, i, is_unsigned) * 7152373U));
		if (hash & 0x80000000U)
			hash -= 0x7fffffff;
		hash1 = hash0;
		hash0 = hash;
	}
	return hash0 << 1;
}

uint32_t ext4fs_dirhash(int version, const uint32_t seed[4], const char *name,
			int len, int *ok)
{
	uint32_t h[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	uint32_t in[8], hash;
	int is_unsigned = version >= DX_HASH_LEGACY_UNSIGNED;

	*ok = 1;
	if (seed && (seed[0] | seed[1] | seed[2] | seed[3]))
		memcpy(h, seed, sizeof(h));
	switch (version) {
	case DX_HASH_LEGACY:
	case DX_HASH_LEGACY_UNSIGNED:
		hash = dx_hack_hash(name, len, is_unsigned);
		break;
	case DX_HASH_HALF_MD4:
	case DX_HASH_HALF_MD4_UNSIGNED:
		for (; len > 0; len -= 32, name += 32) {
			str2hashbuf(name, len, in, 8, is_unsigned);
			half_md4(h, in);
		}
		hash = h[1];
		break;
	case DX_HASH_TEA:
	case DX_HASH_TEA_UNSIGNED:
		for (; len > 0; len -= 16, name += 16) {
			str2hashbuf(name, len, in, 4, is_unsigned);
			tea(h, in);
		}
		hash = h[0];
		break;
	default:
		*ok = 0;
		return 0;
	}
	hash &= ~1U;
	/* the end-of-directory marker stays out of the hash space */
	if (hash == (0x7fffffffU << 1))
		hash = (0x7fffffffU - 1) << 1;
	return hash;
}

uint32_t dirhash_half_md4(const uint32_t seed[4], const char *name, int len)
{
	int ok;

	return ext4fs_dirhash(DX_HASH_HALF_MD4, seed, name, len, &ok);
}
