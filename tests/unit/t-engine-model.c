// SPDX-License-Identifier: GPL-2.0-or-later
/* What the engine hands the model: the group a new inode's search starts
 * from (model/ialloc.c), the page cache's write order and ext4's delayed
 * allocation (model/write.c), setxattr and ACL inheritance
 * (model/xattr_set.c). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ext2fs/ext2fs.h>

#include "model/ialloc.h"
#include "model/ext2/ialloc.h"
#include "model/ext4/ialloc.h"
#include "model/write.h"
#include "model/xattr_set.h"
#include "model/ext4/mballoc.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"

/* 8 groups with 10 directories each but group 5, which has 2. */
static void orlov_state(struct fs_state *fs)
{
	uint32_t i;

	fixture_state(fs, 8, 256, 8192, 300);
	for (i = 0; i < 8; i++) {
		fs->free_inodes[i] = 200;
		fs->used_dirs[i] = i == 5 ? 2 : 10;
	}
	fs_state_sum(fs);
}

static void test_ialloc(void)
{
	struct fs_state fs = { .colour = 0 };
	struct ialloc_policy p = { .rng = 0 };
	struct ialloc_parent root = { .group = 0, .ino = EXT2_ROOT_INO,
				      .topdir = 1, .last_alloc_group = -1 };
	struct ialloc_parent sub = { .group = 2, .ino = 600, .topdir = 0,
				     .last_alloc_group = -1 };
	struct orlov_figures f, g;
	uint64_t rng = 0;
	int grp;

	/* splitmix64 from 0: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 */
	is_int(ialloc_random_start(&rng, 8), 3, "seed 0: first start group 3 of 8");
	is_int(rng, 0x9E3779B97F4A7C15ULL, "the stream advanced by one step");
	is_int(ialloc_random_start(&rng, 8), 5, "seed 0: second start group 5 of 8");

	orlov_state(&fs);
	grp = ext2_ialloc_find_group(&fs, &p, &root, 1, "top", 3, &f);
	is_int(f.branch, BR_ORLOV_TOP, "ext2: a top-level directory spreads");
	is_int(f.pgroup, 3, "ext2: its search starts at the random group");
	is_int(grp, 5, "ext2: the group with fewest directories");
	is_int(p.rng, 0x9E3779B97F4A7C15ULL, "ext2: one draw per top-level directory");
	p.topdir_hash = 1;
	ext2_ialloc_find_group(&fs, &p, &root, 1, "top", 3, &f);
	is_int(f.pgroup, (int)(dirhash_half_md4(p.seed, "top", 3) % 8),
	       "ext2 --topdir hash: the start is the name's hash");
	is_int(p.rng, 0x9E3779B97F4A7C15ULL, "--topdir hash draws nothing");
	grp = ext2_ialloc_find_group(&fs, &p, &sub, 0, "file", 4, &f);
	is_int(f.branch, BR_OTHER_PARENT, "a file goes by find_group_other");
	is_int(grp, 2, "into its parent's group");
	p.oldalloc = 1;
	ext2_ialloc_find_group(&fs, &p, &sub, 1, "d", 1, &f);
	is_int(f.branch, BR_DIR, "oldalloc: find_group_dir");
	p.oldalloc = 0;
	grp = ext4_ialloc_find_group(&fs, &p, &root, 1, "top", 3, &f);
	is_int(grp, ext4_find_group_orlov(&fs, 0, -1, 1,
					  dirhash_half_md4(p.seed, "top", 3), &g),
	       "ext4: always the hash, from i_last_alloc_group");
	is_int(p.rng, 0x9E3779B97F4A7C15ULL, "ext4 draws nothing");
	fs_state_free(&fs);
}

struct sink_log {
	uint32_t lb[4], ino[4];
	size_t note[4];
	fsblk_t phys[4];
	uint32_t n[4];
	int calls, done;
};

static errcode_t log_data(void *ctx, const struct delayed *d, uint32_t lb,
			  fsblk_t phys, uint32_t n)
{
	struct sink_log *l = ctx;

	if (l->calls < 4) {
		l->lb[l->calls] = lb;
		l->ino[l->calls] = d->ino;
		l->note[l->calls] = d->note_len == 3 &&
				    !memcmp(d->note, d->ino == 12 ? "abc" : "xyz", 3);
		l->phys[l->calls] = phys;
		l->n[l->calls] = n;
	}
	l->calls++;
	return 0;
}

static errcode_t log_done(void *ctx, const struct delayed *d)
{
	struct sink_log *l = ctx;

	l->done += (int)d->ino;
	return 0;
}

static void test_write(void)
{
	struct fs_state fs = { .colour = 0 };
	struct delalloc da;
	struct sink_log log;
	struct writeback_sink sink = { log_data, log_done, &log };
	struct ifile f, g;
	int racy;
	uint32_t lb[] = { 0, 1, 2, 5 };
	fsblk_t phys;
	size_t i, used;

	is_int(write_isize_at(0, 0, 5000), 4096,
	       "a block mapped mid-range: i_size at its page");
	is_int(write_isize_at(8192, 100, 8192), 100,
	       "at a range's first page: i_size where the last range ended");
	is_int(write_isize_at(8192, 100, 12288), 12288, "past it: its page");

	memset(&da, 0, sizeof(da));
	memset(&log, 0, sizeof(log));
	fixture_state(&fs, 4, 2048, 8192, 300);
	if (mb_state_init(&fs, 1))
		exit(99);
	fs.mb->delalloc = 1;
	is_int(delalloc_start(&da, 12, "abc", 3), 0, "a file's note");
	is_int(ext4_nonda_switch(&fs, &da, 0, 2, &racy), 0,
	       "plenty free: write_begin delays");
	is_int(racy, 0, "and no writeback starts early");
	for (i = 0; i < 4; i++)
		ext4_da_reserve_block(&fs, &da, lb[i]);
	is_int(percpu_counter_sum(&fs.mb->dirty), 4, "four reserved");
	ifile_init(&f, 12, 2048);
	delalloc_cur(&da)->size = 6 * 1024;
	tap_ok(ifile_is_new(&fs, &f), "nothing mapped: a new inode's allocation");
	is_int(delalloc_keep(&fs, &da, &f), 0, "the file closed");
	tap_ok(da.rec_len > 0 && da.rec_len < 10 + 1 + 3 + 2 && !da.nkept,
	       "kept in a record of a few bytes and its note, rebuilt at writeback");
	/* a second file with a block the page cache mapped: kept whole */
	delalloc_start(&da, 13, "xyz", 3);
	ext4_da_reserve_block(&fs, &da, 3);
	ifile_init(&g, 13, 2048);
	is_int(write_begin_block(&fs, &g, 0, 0, &phys), 0, "a block mapped");
	tap_ok(!ifile_is_new(&fs, &g), "then not a new inode's");
	is_int(delalloc_keep(&fs, &da, &g), 0, "the second file closed");
	is_int(da.nkept, 1, "its allocation kept whole");
	/* a reader ahead finds each record's note without writing it back */
	{
		const unsigned char *note = NULL;
		size_t nlen = 0, k = 0, k2 = 0;
		uint64_t size = 0;

		is_int(delalloc_record_note(da.rec, da.rec_len, &k, &note,
					    &nlen, &size), 0, "a record peeked");
		tap_ok(k && nlen == 3 && !memcmp(note, "abc", 3) &&
		       size == 6 * 1024, "its note and size");
		is_int(delalloc_record_note(da.rec + k, da.rec_len - k, &k2,
					    &note, &nlen, &size), 0,
		       "the next record");
		tap_ok(k + k2 == da.rec_len && nlen == 3 &&
		       !memcmp(note, "xyz", 3), "the second file's note, the last");
		delalloc_record_note(da.rec, k - 1, &k2, &note, &nlen, &size);
		is_int(k2, 0, "a record cut short in its note: not yet");
	}
	/* the records read back in pieces, as from a scratch file */
	ext4_writeback_begin(&fs);
	is_int(ext4_writeback_records(&fs, &da, da.rec, 2, &used, &sink), 0,
	       "a record cut short");
	is_int(used, 0, "waits for the rest");
	is_int(ext4_writeback_records(&fs, &da, da.rec, da.rec_len, &used,
				      &sink), 0, "writeback");
	is_int(used, da.rec_len, "every record read");
	ext4_writeback_end(&fs, &da);
	is_int(log.calls, 3, "two runs: blocks 0-2, then 5; then the second's");
	is_int(log.n[0], 3, "the first run maps three blocks at once");
	is_int(log.lb[1], 5, "the second is the fourth block, logical block 5");
	is_int(log.n[1], 1, "of one block");
	tap_ok(log.phys[1] > log.phys[0] + 2, "logical order, front to back");
	tap_ok(log.ino[2] == 13 && log.lb[2] == 3, "then the next file's block");
	tap_ok(log.note[0] && log.note[1] && log.note[2],
	       "each with its own file's note, read back from the records");
	tap_ok(log.phys[2] != phys, "a block of its own");
	is_int(log.done, 12 + 13, "the files' block maps then final");
	is_int(da.rec_len + da.nkept + da.queued, 0, "nothing left recorded");
	ifile_release(&fs, &g);
	delalloc_free(&fs, &da);
	mb_state_free(&fs);
	fs_state_free(&fs);
}

static int perm_of(const struct acl *a, uint16_t tag)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->e[i].tag == tag)
			return a->e[i].perm;
	return -1;
}

static void test_xattr_set(void)
{
	struct fs_state fs = { .colour = 0 };
	struct xattr_blocks xb;
	struct acl_entry de[] = {
		{ ACL_USER_OBJ, 7, 0 }, { ACL_USER, 7, 1000 },
		{ ACL_GROUP_OBJ, 5, 0 }, { ACL_MASK, 7, 0 }, { ACL_OTHER, 5, 0 },
	};
	struct acl def = { de, 5 }, got;
	struct xattr_set xs = { &fs, &xb, ext2_xattr_setxattr, 1 };
	struct ifile dir, file, sub, ino4;
	fsblk_t dir_acl = 0, file_acl = 0, sub_acl = 0, acl4 = 0;

	fixture_state(&fs, 2, 4096, 8192, 99);
	xattr_blocks_init(&xb, 1024);
	ifile_init(&dir, 2, 4096);
	ifile_init(&file, 12, 4096);
	ifile_init(&sub, 13, 4096);
	is_int(xattr_set_acl(&xs, &dir, &dir_acl,
			     EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT, &def), 0,
	       "a default ACL on the directory");
	tap_ok(dir_acl != 0, "ext2: in an attribute block");

	is_int(ext2_init_acl(&xs, &dir, dir_acl, &file, &file_acl,
			     S_IFREG | 0640), 0, "a file created in it");
	xattr_get_acl(&xs, &file, file_acl, EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
		      &got);
	is_int(got.n, 5, "inherits an access ACL");
	is_int(perm_of(&got, ACL_USER_OBJ), 6, "owner masked by the mode");
	is_int(perm_of(&got, ACL_MASK), 4, "mask by the group bits");
	is_int(perm_of(&got, ACL_OTHER), 0, "other by the other bits");
	acl_release(&got);
	xattr_get_acl(&xs, &file, file_acl, EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT,
		      &got);
	is_int(got.n, 0, "a file gets no default ACL");
	is_int(xattr_chmod_acl(&xs, &file, &file_acl, S_IFREG | 0600), 0, "chmod 0600");
	xattr_get_acl(&xs, &file, file_acl, EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
		      &got);
	is_int(perm_of(&got, ACL_MASK), 0, "chmod rewrites the mask");
	acl_release(&got);

	ext2_init_acl(&xs, &dir, dir_acl, &sub, &sub_acl, S_IFDIR | 0755);
	xattr_get_acl(&xs, &sub, sub_acl, EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT,
		      &got);
	is_int(got.n, 5, "a directory inherits the default ACL itself");
	acl_release(&got);
	is_int(xattr_drop_acls(&xs, &sub, &sub_acl, S_IFDIR | 0755, 0, 1), 0,
	       "the source has only the default ACL");
	tap_ok(!xattr_get(&xs, &sub, sub_acl, EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
			  "", 0, &(size_t){ 0 }), "the inherited access ACL removed");

	/* ext4 with room in the inode: the attribute goes there */
	xs.set = ext4_xattr_set_handle;
	ifile_init(&ino4, 14, 4096);
	ino4.ibody_size = 96;
	ino4.ibody = calloc(1, 96);
	is_int(ext2_init_acl(&xs, &dir, dir_acl, &ino4, &acl4, S_IFREG | 0640),
	       0, "ext4: a file created in it");
	is_int(acl4, 0, "ext4: the access ACL in the inode, no block");
	tap_ok(xattr_get(&xs, &ino4, acl4, EXT2_XATTR_INDEX_POSIX_ACL_ACCESS,
			 "", 0, &(size_t){ 0 }) != NULL, "and read back from there");
	ifile_release(&fs, &ino4);
	ifile_release(&fs, &dir);
	ifile_release(&fs, &file);
	ifile_release(&fs, &sub);
	xattr_blocks_free(&xb);
	fs_state_free(&fs);
}

int main(void)
{
	test_ialloc();
	test_write();
	test_xattr_set();
	return tap_done();
}
