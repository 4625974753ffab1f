/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The on-disk records of a JBD2 journal that the commit reads and writes,
 * laid out as the kernel's include/linux/jbd2.h defines them.  Every
 * field is big-endian (ext2fs_cpu_to_be32 and back).  The commit writes
 * the journal mke2fs -t ext3 makes: no checksums, 32-bit block numbers,
 * so a tag is JBD2_TAG_SIZE32 bytes; with 64-bit block numbers (as the
 * ext4 driver sets them on a 64bit filesystem's journal at mount) a tag
 * has t_blocknr_high; and that journal after the ext4 driver mounted a
 * metadata_csum image: checksums v3 (crc32c), tags of struct
 * journal_block_tag3_s, a tail on each descriptor.
 */
#ifndef ORLOV_JBD2_H
#define ORLOV_JBD2_H

#include <stddef.h>
#include <ext2fs/ext2_types.h>

#define JBD2_MAGIC_NUMBER	0xc03b3998U

/* h_blocktype */
#define JBD2_DESCRIPTOR_BLOCK	1
#define JBD2_COMMIT_BLOCK	2
#define JBD2_SUPERBLOCK_V1	3
#define JBD2_SUPERBLOCK_V2	4

/* t_flags */
#define JBD2_FLAG_ESCAPE	1	/* the block's first word was the magic:
					   zeroed in the log */
#define JBD2_FLAG_SAME_UUID	2	/* no UUID after this tag */
#define JBD2_FLAG_LAST_TAG	8	/* the descriptor's last tag */

/* s_feature_incompat */
#define JBD2_FEATURE_INCOMPAT_REVOKE	0x00000001
#define JBD2_FEATURE_INCOMPAT_64BIT	0x00000002
#define JBD2_FEATURE_INCOMPAT_CSUM_V3	0x00000010

/* s_checksum_type */
#define JBD2_CRC32C_CHKSUM	4

/* The start of every journal block but data: descriptor, commit, revoke,
 * superblock. */
typedef struct journal_header_s {
	__be32 h_magic;
	__be32 h_blocktype;
	__be32 h_sequence;
} journal_header_t;

/* One tag of a descriptor block: the home of the log block it stands
 * for.  The first tag is followed by the journal's UUID (16 bytes), the
 * others carry JBD2_FLAG_SAME_UUID. */
typedef struct journal_block_tag_s {
	__be32 t_blocknr;
	__be16 t_checksum;	/* csum v2 only */
	__be16 t_flags;
	__be32 t_blocknr_high;	/* 64bit only */
} journal_block_tag_t;

/* A tag without the 64bit feature */
#define JBD2_TAG_SIZE32	(offsetof(journal_block_tag_t, t_blocknr_high))

/* A tag with checksums v3: the whole checksum, t_flags 32 bits wide (its
 * low half where journal_block_tag_t has t_flags) */
typedef struct journal_block_tag3_s {
	__be32 t_blocknr;
	__be32 t_flags;
	__be32 t_blocknr_high;
	__be32 t_checksum;	/* crc32c(seed, sequence, the block as logged) */
} journal_block_tag3_t;

/* The last bytes of a descriptor with checksums v3 */
struct jbd2_journal_block_tail {
	__be32 t_checksum;	/* crc32c(seed, the block, this zero) */
};

/* The commit block */
struct commit_header {
	__be32 h_magic;
	__be32 h_blocktype;
	__be32 h_sequence;
	unsigned char h_chksum_type;
	unsigned char h_chksum_size;
	unsigned char h_padding[2];
	__be32 h_chksum[8];	/* [0]: crc32c(seed, the block, this zero) */
	__be64 h_commit_sec;
	__be32 h_commit_nsec;
};

/* The journal's first block. */
typedef struct journal_superblock_s {
	journal_header_t s_header;

	/* the journal's geometry */
	__be32 s_blocksize;
	__be32 s_maxlen;	/* blocks in the journal */
	__be32 s_first;		/* the first block of the log */

	/* where the log is: s_start 0 when it is empty */
	__be32 s_sequence;	/* the first transaction expected */
	__be32 s_start;		/* the log's first block */
	__be32 s_errno;

	/* version 2 only */
	__be32 s_feature_compat;
	__be32 s_feature_incompat;
	__be32 s_feature_ro_compat;
	__u8 s_uuid[16];
	__be32 s_nr_users;
	__be32 s_dynsuper;
	__be32 s_max_transaction;
	__be32 s_max_trans_data;
	__u8 s_checksum_type;
	__u8 s_padding2[3];
	__be32 s_num_fc_blks;
	__be32 s_head;
	__u32 s_padding[40];
	__be32 s_checksum;
	__u8 s_users[16 * 48];
} journal_superblock_t;

#endif
