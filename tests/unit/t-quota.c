// SPDX-License-Identifier: GPL-2.0-or-later
/* model/quota_tree: a user quota file as mke2fs makes it (the header, the
 * root's path to id 0 in blocks 1-4, its entry in data block 5) takes new
 * ids as the kernel's dq_insert_tree does: a tree block for each level a
 * path lacks, numbered top down at the file's end; entries in the data
 * block heading the free-entry list until it is full, then a new one. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "model/quota_tree.h"
#include "lib/orlov_err.h"
#include "tap.h"

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* (x86 and arm64: little endian) */
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* mke2fs's file: dqi_blocks 6, free_entry 5, id 0 with 2 inodes */
static void mke2fs_file(unsigned char *f)
{
	int b;

	memset(f, 0, 6 * QT_BLKSIZE);
	put32(f, 0xd9c01f11);
	put32(f + 4, 1);
	put32(f + 8, 604800);
	put32(f + 12, 604800);
	put32(f + 20, 6);
	put32(f + 28, 5);
	for (b = 1; b <= 4; b++)
		put32(f + b * QT_BLKSIZE, (uint32_t)b + 1);
	f[5 * QT_BLKSIZE + 8] = 1;			/* dqdh_entries */
	f[5 * QT_BLKSIZE + 16 + 24] = 2;		/* dqb_curinodes */
	put32(f + 5 * QT_BLKSIZE + 16 + 48, 8192);	/* dqb_curspace */
}

int main(void)
{
	static unsigned char f[6 * QT_BLKSIZE];
	struct qtree q;
	uint32_t off, off2, id, slot = 16 + 72;
	uint64_t ino, space;

	mke2fs_file(f);
	is_int(qtree_load(&q, QT_GRP, f, sizeof(f)), ORLOV_ERR_QUOTA_FILE,
	       "a user quota file is no group one (magic)");
	is_int(qtree_load(&q, QT_PRJ, f, sizeof(f)), ORLOV_ERR_QUOTA_FILE,
	       "nor a project one");
	put32(f, 0xd9c03f14);	/* the project file's magic (mke2fs -O project) */
	is_int(qtree_load(&q, QT_PRJ, f, sizeof(f)), 0, "a project file loads");
	qtree_free(&q);
	put32(f, 0xd9c01f11);
	is_int(qtree_load(&q, QT_USR, f, 5 * QT_BLKSIZE), ORLOV_ERR_QUOTA_FILE,
	       "dqi_blocks past the file's end refused");
	is_int(qtree_load(&q, QT_USR, f, sizeof(f)), 0, "mke2fs's file loads");
	is_int(qtree_find(&q, 0, &off), 0, "id 0 looked up");
	is_int(off, 5 * QT_BLKSIZE + 16, "id 0: data block 5, slot 0");
	qtree_usage(&q, off, &ino, &space);
	is_int(ino * 100000 + space, 2 * 100000 + 8192, "id 0: 2 inodes, 8 KiB");
	is_int(qtree_find(&q, 1000, &off), 0, "id 1000 looked up");
	is_int(off, 0, "id 1000: none yet");

	/* 1000 = 0x3e8: index 3 at depth 2 is new, a tree block (6) */
	is_int(qtree_insert(&q, 1000, &off), 0, "id 1000 inserted");
	is_int(off, 5 * QT_BLKSIZE + slot, "id 1000: block 5, slot 1");
	is_int(qtree_blocks(&q), 7, "one tree block more");
	is_int(get32(q.buf + 3 * QT_BLKSIZE + 4 * 3), 6, "depth 2 -> block 6");
	is_int(get32(q.buf + 6 * QT_BLKSIZE + 4 * 0xe8), 5, "block 6 -> data 5");
	/* 0x11170: new at depth 1, so two tree blocks, top down */
	is_int(qtree_insert(&q, 0x11170, &off), 0, "id 0x11170 inserted");
	is_int(qtree_blocks(&q), 9, "two tree blocks more");
	is_int(get32(q.buf + 2 * QT_BLKSIZE + 4 * 1), 7, "depth 1 -> block 7");
	is_int(get32(q.buf + 7 * QT_BLKSIZE + 4 * 0x11), 8, "block 7 -> 8");
	is_int(get32(q.buf + 8 * QT_BLKSIZE + 4 * 0x70), 5, "block 8 -> data 5");
	is_int(off, 5 * QT_BLKSIZE + 16 + 2 * 72, "id 0x11170: block 5, slot 2");
	is_int(qtree_insert(&q, 1000, &off), ORLOV_ERR_QUOTA_FILE,
	       "an id the tree has is not inserted again");

	/* ids 1001..1011 fill block 5's 14 slots: off the free list */
	for (id = 1001; id <= 1011; id++)
		qtree_insert(&q, id, &off);
	is_int(off, 5 * QT_BLKSIZE + 16 + 13 * 72, "id 1011: block 5's last slot");
	is_int(get32(q.buf + 28), 0, "a full data block leaves the free list");
	is_int(qtree_insert(&q, 1012, &off), 0, "id 1012 inserted");
	is_int(off, 9 * QT_BLKSIZE + 16, "id 1012: a new data block at the end");
	is_int(get32(q.buf + 28), 9, "... which heads the free-entry list");
	is_int(get32(q.buf + 9 * QT_BLKSIZE + 8), 1, "... one entry in it");
	is_int(qtree_blocks(&q), 10, "dqi_blocks 10");

	for (id = 1000; id <= 1012; id++) {
		qtree_find(&q, id, &off2);
		if (!off2)
			break;
	}
	is_int(id, 1013, "every id found again");
	qtree_find(&q, 0x11170, &off);
	qtree_set_usage(&q, off, 0x11170, 3, 12288);
	qtree_usage(&q, off, &ino, &space);
	is_int(ino * 100000 + space, 3 * 100000 + 12288, "usage written and read");
	is_int(qtree_has_limits(&q, off), 0, "no limit");
	q.buf[off + 40] = 1;	/* dqb_bsoftlimit */
	is_int(qtree_has_limits(&q, off), 1, "a block soft limit");
	qtree_find(&q, 0, &off);
	qtree_set_usage(&q, off, 0, 0, 0);
	is_int(q.buf[off + 64], 1, "id 0 with nothing charged: itime 1");
	qtree_find(&q, 0, &off2);
	is_int(off2, off, "... and still found");
	qtree_free(&q);
	return tap_done();
}
