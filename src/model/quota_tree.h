/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A quota file of the vfsv1 format (QFMT_VFS_V1, v2r1 entries), as
 * fs/quota/quota_tree.c and quota_v2.c of Linux 6.1 and 6.12 keep it:
 * 1 KiB quota blocks, block 0 the header (magic, version, then the info:
 * grace times, dqi_blocks, the free-block and free-entry lists), a radix
 * tree of four levels from block 1 (QT_TREEOFF) indexed by the id's
 * bytes, most significant first, and data blocks of 14 entries of 72
 * bytes.  Pure: the file is held whole in memory; where the kernel writes
 * a block, the model writes the buffer, so the bytes end as the kernel's.
 */
#ifndef ORLOV_QUOTA_TREE_H
#define ORLOV_QUOTA_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#define QT_BLKSIZE_BITS 10
#define QT_BLKSIZE (1u << QT_BLKSIZE_BITS)

/* The quota types of the superblock's s_*_quota_inum (USRQUOTA, GRPQUOTA,
 * PRJQUOTA). */
enum { QT_USR, QT_GRP, QT_PRJ, QT_NTYPES };

struct qtree {
	unsigned char *buf;	/* the file, QT_BLKSIZE * nalloc bytes */
	uint32_t nalloc;	/* quota blocks @buf holds */
};

/* The quota file's bytes @data (@len of them, its i_size) into @q: the
 * header must say v2r1 of type @type's magic, its dqi_blocks within the
 * file (ORLOV_ERR_QUOTA_FILE otherwise). */
errcode_t qtree_load(struct qtree *q, int type, const void *data, size_t len);
void qtree_free(struct qtree *q);

/* dqi_blocks: the file's size in quota blocks. */
uint32_t qtree_blocks(const struct qtree *q);

/* qtree_read_dquot's find_tree_dqentry: the byte offset of @id's entry
 * in the file, 0 when the tree has none. */
errcode_t qtree_find(const struct qtree *q, uint32_t id, uint32_t *off);

/* dq_insert_tree: a new entry for @id (not in the tree), as the kernel
 * makes it when the id first gets a dquot (dquot_acquire writes it at
 * once); *off its offset.  The file may grow (dqi_blocks). */
errcode_t qtree_insert(struct qtree *q, uint32_t id, uint32_t *off);

/* The usage an entry records (dqb_curinodes, dqb_curspace in bytes). */
void qtree_usage(const struct qtree *q, uint32_t off, uint64_t *inodes,
		 uint64_t *space);

/* Has the entry a limit (DQ_FAKE_B clear)?  One without, left with no
 * usage, the kernel deletes when its dquot is released
 * (qtree_release_dquot). */
int qtree_has_limits(const struct qtree *q, uint32_t off);

/* v2r1_mem2diskdqb for an entry whose usage is now @inodes and @space:
 * its limits and grace times stay. */
void qtree_set_usage(struct qtree *q, uint32_t off, uint32_t id,
		     uint64_t inodes, uint64_t space);

#endif
