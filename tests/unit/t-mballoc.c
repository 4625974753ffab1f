// SPDX-License-Identifier: GPL-2.0-or-later
/* The ext4 driver model: mballoc's requests (group and inode
 * preallocations, metadata blocks, the stream goal, discards), ext4's
 * directory hashes against libext2fs's, and htree directories. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/mballoc.h"
#include "model/bmap.h"
#include "model/dir.h"
#include "model/dirhash.h"

#define DIRHASH_DIGEST 0x181c2fbe01dd3ad1ULL
#include "lib/hash.h"
#include "lib/util.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"

/* 4 groups of 8192 blocks of 1 KiB (a full 1 KiB group), blocks 0..299 of
 * each group in use: the free run [300, 8192) is cut into buddy chunks
 * 4@300, 16@304, 64@320, 128@384, 512@512, 1024@1024, 2048@2048, ... */
static void mkstate(struct fs_state *fs, uint32_t ngroups)
{
	if (fs->free_inodes) {
		mb_state_free(fs);
		fs_state_free(fs);
	}
	fixture_state(fs, ngroups, 2048, 8192, 300);
	if (mb_state_init(fs, 1))
		exit(99);
}

static uint32_t gblock(uint32_t group, uint32_t off)
{
	return 1 + group * 8192 + off;
}

static uint32_t data_block(struct fs_state *fs, struct mb_inode *mi,
			   uint32_t logical, uint32_t goal)
{
	uint32_t b = 0;
	errcode_t err = ext4_mb_new_block(fs, mi, 0, logical, goal, &b);

	return err ? 0 : b;
}

static void test_group_prealloc(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode a = { 0 }, b = { 0 };

	mkstate(&fs, 4);
	is_int(data_block(&fs, &a, 0, gblock(1, 0)), gblock(1, 512),
	       "a small file's first block starts a 512-block group preallocation "
	       "at the goal group's first buddy chunk of that order");
	is_int(fs.free_blocks[1], 8192 - 300 - 1,
	       "only the block used leaves the on-disk free count");
	is_int(data_block(&fs, &b, 0, gblock(3, 0)), gblock(1, 513),
	       "another small file continues the preallocation, whatever its goal");
	is_int(data_block(&fs, &a, 1, gblock(1, 512)), gblock(1, 514),
	       "and so does the first file's next block");
	mb_inode_release(&a);
	mb_inode_release(&b);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static void test_metadata(void)
{
	struct fs_state fs = { 0 };
	uint32_t blk = 0;

	mkstate(&fs, 4);
	ext4_mb_new_block(&fs, NULL, 0, 0, gblock(2, 4000), &blk);
	is_int(blk, gblock(2, 300),
	       "a metadata block: the smallest chunk of the goal's group, not "
	       "the goal block (no TRY_GOAL for indirect-mapped files)");
	ext4_mb_new_block(&fs, NULL, 0, 0, gblock(2, 4000), &blk);
	is_int(blk, gblock(2, 301),
	       "then a one-block chunk, taken at once");
	ext4_mb_new_block(&fs, NULL, 0, 0, gblock(2, 4000), &blk);
	is_int(blk, gblock(2, 302),
	       "then the two-block chunk, the smallest left");
	mb_state_free(&fs);
	fs_state_free(&fs);
}

/* ext4_free_blocks with a journal: the bitmap and the counts at once,
 * the buddy only when the transaction commits (after the run). */
static void test_free_journal(void)
{
	struct fs_state fs = { 0 };
	uint32_t blk = 0, again = 0;
	int journal;

	for (journal = 0; journal < 2; journal++) {
		mkstate(&fs, 4);
		fs.mb->journal = journal;
		ext4_mb_new_block(&fs, NULL, 0, 0, gblock(2, 4000), &blk);
		ext4_free_blocks(&fs, 0, blk, 1);
		is_int(fs.free_blocks[2], 8192 - 300,
		       journal ? "with a journal a freed block is free on disk at once"
			       : "without a journal a freed block is free on disk at once");
		ext4_mb_new_block(&fs, NULL, 0, 0, gblock(2, 4000), &again);
		if (journal)
			is_int(again, gblock(2, 301),
			       "with a journal it is not taken again before the commit");
		else
			is_int(again, blk, "without a journal it is taken again at once");
	}
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static void test_stream(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode f = { 0 };
	uint32_t i, free0;

	mkstate(&fs, 4);
	free0 = fs.free_blocks[0];
	f.i_size = 16 * 1024;
	is_int(data_block(&fs, &f, 16, gblock(3, 0)), gblock(0, 320 + 16),
	       "block 16 of a growing file: an inode preallocation of 32 KiB at "
	       "the stream goal (group 0 after mount), at its offset 16");
	for (i = 17; i < 32; i++)
		data_block(&fs, &f, i, gblock(3, 0));
	f.i_size = 32 * 1024;
	is_int(f.pas.n, 1, "the preallocation stays: its first 16 blocks were "
	       "never used");
	is_int(data_block(&fs, &f, 32, gblock(3, 0)), gblock(0, 352),
	       "block 32: another 32 blocks (the file is 33 KiB, rounded to "
	       "64, less the 32 preallocated), the stream goal's first chunk "
	       "of order 5");
	ext4_discard_preallocations(&fs, &f);
	is_int(f.pas.n, 0, "closing the file discards its preallocations");
	is_int(fs.free_blocks[0], free0 - 17,
	       "the on-disk counts saw only the 17 blocks used");
	is_int(data_block(&fs, NULL, 0, gblock(0, 0)), gblock(0, 353),
	       "the buddy has the discarded space back: a metadata block takes "
	       "the first one-block chunk, right after the file's last block");
	mb_inode_release(&f);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static void test_full(void)
{
	struct fs_state fs = { 0 };
	struct mb_inode a = { 0 };
	uint32_t g, b, n = 0;

	mkstate(&fs, 1);
	/* leave 10 blocks free: the last ones of the group */
	for (b = 300; b < 8192 - 10; b++)
		bit_set(group_bbitmap(&fs, 0), b);
	fs.free_blocks[0] = 10;
	fs_state_sum(&fs);
	mb_state_free(&fs);
	mb_state_init(&fs, 1);
	for (g = 0; g < 12; g++)
		if (ext4_mb_new_block(&fs, &a, 0, g, gblock(0, 0), &b) == 0)
			n++;
	is_int(n, 10, "a nearly full group: 10 blocks, then ENOSPC");
	is_int(fs.free_blocks[0], 0, "every block used");
	mb_inode_release(&a);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static void test_dirhash(void)
{
	static const char *names[] = {
		"", "a", "README", "lost+found", "x.y.z0", "r\xc3\xa9sum\xc3\xa9",
		"\xff\x80 high bytes \xfe", "0123456789abcdef0123456789abcdef0",
		"a name longer than thirty-two bytes, to take a second round",
	};
	const uint32_t seed[4] = { 0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d };
	uint64_t digest = FNV1A64_INIT;
	int v, ok, checked = 0;
	size_t i;

	/* ext4fs_dirhash is libext2fs's ext2fs_dirhash2; these 54 hashes
	 * (6 versions, signed and unsigned bytes, default and given seed)
	 * are the ones an earlier hand-written copy of fs/ext4/hash.c gave,
	 * which the QEMU cross-checks matched against the kernel's htrees. */
	for (v = EXT2_HASH_LEGACY; v <= EXT2_HASH_TEA_UNSIGNED; v++)
		for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
			int len = (int)strlen(names[i]);
			uint32_t h = ext4fs_dirhash(v, seed, names[i], len, &ok);

			if (!ok)
				continue;
			checked++;
			/* FNV-1a over whole hashes, not bytes */
			digest = (digest ^ h) * FNV1A64_PRIME;
		}
	is_int(checked, 54, "54 names hashed");
	is_int(digest == DIRHASH_DIGEST, 1, "the hashes are the kernel's "
	       "(digest %016llx)", (unsigned long long)digest);
	ext4fs_dirhash(6, seed, "a", 1, &ok);
	is_int(ok, 0, "an unknown hash version is refused");
}

/* Every name of leaf @lb hashes into [lo, hi). */
static int leaf_in_range(const struct fs_state *fs, const struct dirbuf *d,
			 uint32_t lb, uint32_t lo, uint32_t hi, int *names)
{
	uint32_t bs = fs->g.block_size, off = 0;
	const unsigned char *blk = d->b.blk[lb];	/* all in memory */
	int ok;

	while (off < bs) {
		const unsigned char *de = blk + off;

		if (get_le32(de) && de[6]) {
			uint32_t h = ext4fs_dirhash(EXT2_HASH_HALF_MD4, fs->dx.seed,
						    (const char *)de + 8, de[6], &ok);

			(*names)++;
			if (h < (lo & ~1U) || h >= hi)
				return 0;
		}
		off += get_le16(de + 4);
	}
	return 1;
}

/* Check the tree below index entries @e (@count of them, @levels more
 * levels): leaves in hash order, every name once. */
static int check_index(const struct fs_state *fs, const struct dirbuf *d,
		       const unsigned char *e, uint32_t count, int levels,
		       uint32_t lo0, uint32_t hi0, int *names)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		uint32_t lo = i ? get_le32(e + 8 * i) : lo0;
		uint32_t hi = i + 1 < count ? (get_le32(e + 8 * (i + 1)) & ~1U) + 1 : hi0;
		uint32_t blk = get_le32(e + 8 * i + 4);

		if (blk >= dir_nblocks(d))
			return 0;
		if (levels) {
			const unsigned char *n = d->b.blk[blk] + 8;

			if (!check_index(fs, d, n, get_le16(n + 2), levels - 1,
					 lo, hi, names))
				return 0;
		} else if (!leaf_in_range(fs, d, blk, lo, hi, names)) {
			return 0;
		}
	}
	return 1;
}

static void add_names(struct fs_state *fs, struct dirbuf *d, uint32_t from,
		      uint32_t to, uint32_t *added)
{
	char name[64];

	for (*added = from; *added < to; (*added)++) {
		snprintf(name, sizeof(name), "entry-number-%05u", *added);
		if (dir_add_link(fs, d, name, strlen(name), 100 + *added, 1))
			break;
	}
}

static void test_htree(void)
{
	struct fs_state fs = { 0 };
	struct dirbuf d;
	char name[64];
	const unsigned char *e;
	uint32_t i, found = 0;
	int names = 0;

	mkstate(&fs, 4);
	fs.dx.enabled = 1;
	fs.dx.def_version = EXT2_HASH_HALF_MD4;
	fs.dx.seed[0] = 42;
	dirbuf_init(&d, 12, 2048, 1);
	dir_make_empty(&fs, &d, 2);
	add_names(&fs, &d, 0, 35, &i);
	is_int(d.indexed, 0, "35 names of 18 bytes fit in one block (35 x 28 + 24): no index yet");
	add_names(&fs, &d, 35, 36, &i);
	is_int(d.indexed && dir_nblocks(&d) == 3, 1, "the 36th makes it a hash tree: "
	       "the root and two leaves split by hash");
	add_names(&fs, &d, 36, 2000, &i);
	is_int(i, 2000, "2000 names added");
	is_int(d.indexed, 1, "the directory became a hash tree");
	e = d.b.blk[0] + 24 + 8;
	is_int(get_le16(e), (1024 - 32) / 8, "root limit: (block - 32) / 8");
	is_int(d.b.blk[0][24 + 6], 0, "one level of leaves");
	tap_ok(check_index(&fs, &d, e, get_le16(e + 2), 0, 0, 0xffffffffU,
			   &names), "every leaf holds only names in its hash range");
	is_int(names, 2000, "and together they hold every name once");

	add_names(&fs, &d, 2000, 12000, &i);
	is_int(i, 12000, "12000 names added");
	is_int(d.b.blk[0][24 + 6], 1, "the root grew a level of index nodes");
	e = d.b.blk[0] + 24 + 8;
	names = 0;
	tap_ok(check_index(&fs, &d, e, get_le16(e + 2), 1, 0, 0xffffffffU,
			   &names), "two levels: every leaf in its hash range");
	is_int(names, 12000, "every name once");
	for (i = 0; i < 12000; i += 97) {
		int f = 0;

		snprintf(name, sizeof(name), "entry-number-%05u", i);
		if (!dir_lookup(&fs, &d, name, strlen(name), &f, NULL))
			found += (uint32_t)f;
	}
	is_int(found, 124, "names are found again");
	dirbuf_release(&fs, &d);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

/* The model's scratch file, in memory: slots of 1 KiB, the traffic
 * counted. */
struct fake_spill {
	unsigned char *slots;
	uint32_t nslots, puts, gets;
};

static errcode_t fake_put(void *ctx, uint32_t *slot, const void *blk)
{
	struct fake_spill *f = ctx;

	if (*slot == DIRB_NOSLOT) {
		unsigned char *p = realloc(f->slots, (size_t)(f->nslots + 1) * 1024);

		if (!p)
			return ENOMEM;
		f->slots = p;
		*slot = f->nslots++;
	}
	memcpy(f->slots + (size_t)*slot * 1024, blk, 1024);
	f->puts++;
	return 0;
}

static errcode_t fake_get(void *ctx, uint32_t slot, void *blk)
{
	struct fake_spill *f = ctx;

	if (slot >= f->nslots)
		return EIO;
	memcpy(blk, f->slots + (size_t)slot * 1024, 1024);
	f->gets++;
	return 0;
}

static void fake_drop(void *ctx, uint32_t slot)
{
	(void)ctx;
	(void)slot;
}

/* 6000 names into an htree of two levels, once in memory and once with
 * 8 blocks of it in memory: the same blocks, byte for byte, at the same
 * places; the names found in spilled blocks. */
static void test_htree_spilled(void)
{
	struct fake_spill f = { 0 };
	struct dir_spill sp = { 8, 8, fake_put, fake_get, fake_drop, &f };
	struct fs_state fs[2];
	struct dirbuf d[2];
	unsigned char a[1024], b[1024];
	uint32_t i, n[2], same = 0, resident = 0;
	int k, found = 0;

	memset(fs, 0, sizeof(fs));
	for (k = 0; k < 2; k++) {
		mkstate(&fs[k], 4);
		fs[k].dx.enabled = 1;
		fs[k].dx.def_version = EXT2_HASH_HALF_MD4;
		fs[k].dx.seed[0] = 42;
		fs[k].dspill = k ? &sp : NULL;
		dirbuf_init(&d[k], 12, 2048, 1);
		dir_make_empty(&fs[k], &d[k], 2);
		add_names(&fs[k], &d[k], 0, 6000, &n[k]);
	}
	is_int(n[0] == 6000 && n[1] == 6000, 1, "6000 names, spilled or not");
	is_int(dir_nblocks(&d[0]), dir_nblocks(&d[1]), "as many blocks");
	for (i = 0; i < dir_nblocks(&d[0]) && i < dir_nblocks(&d[1]); i++) {
		if (!dirb_copy(&fs[0], &d[0].b, i, a) &&
		    !dirb_copy(&fs[1], &d[1].b, i, b) && !memcmp(a, b, 1024) &&
		    d[0].phys[i] == d[1].phys[i])
			same++;
		resident += d[1].b.blk[i] != NULL;
	}
	is_int(same, dir_nblocks(&d[0]), "every block the same, at the same place");
	tap_ok(f.puts > 1000 && f.gets > 1000 && resident <= 8 + 12,
	       "the spilled directory went through its scratch file "
	       "(%u out, %u in; %u of %u blocks in memory)", f.puts, f.gets,
	       resident, dir_nblocks(&d[1]));
	for (i = 0; i < 6000; i += 7) {
		char name[64];
		int got = 0;

		snprintf(name, sizeof(name), "entry-number-%05u", i);
		if (!dir_lookup(&fs[1], &d[1], name, strlen(name), &got, NULL))
			found += got;
	}
	is_int(found, 858, "names are found in spilled blocks");
	for (k = 0; k < 2; k++) {
		dirbuf_release(&fs[k], &d[k]);
		mb_state_free(&fs[k]);
		fs_state_free(&fs[k]);
	}
	free(f.slots);
}

int main(void)
{
	test_group_prealloc();
	test_metadata();
	test_free_journal();
	test_stream();
	test_full();
	test_dirhash();
	test_htree();
	test_htree_spilled();
	return tap_done();
}
