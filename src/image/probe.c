// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a file holds before libext2fs is given it: the superblock checked
 * raw (every field of an image is input), what a file without one is
 * (for the message), whether --create may overwrite it; and the
 * read-only open of orlov-layout.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "image/image_read.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

uint64_t ir_blocks_count(const struct ext2_super_block *sb)
{
	uint64_t blocks = ext2fs_le32_to_cpu(sb->s_blocks_count);

	if (ext2fs_le32_to_cpu(sb->s_feature_incompat) & EXT4_FEATURE_INCOMPAT_64BIT)
		blocks |= (uint64_t)ext2fs_le32_to_cpu(sb->s_blocks_count_hi) << 32;
	return blocks;
}

/*
 * The superblock's geometry, read raw and checked before libext2fs sees
 * it: libext2fs 1.47 trusts some of these fields (a wrong
 * s_first_data_block sends ext2fs_read_bitmaps past its buffers), and
 * every field of an image is input.
 */
errcode_t ir_check_super(const char *path, struct ext2_super_block *out)
{
	return ir_check_super_at(path, 0, out);
}

errcode_t ir_check_super_at(const char *path, uint64_t offset,
			    struct ext2_super_block *out)
{
	struct ext2_super_block sb;
	uint64_t blocks, groups, bs;
	uint32_t bpg, ipg, isz;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return (errcode_t)errno;
	n = pread(fd, &sb, sizeof(sb), (off_t)(offset + SUPERBLOCK_OFFSET));
	close(fd);
	if (n < 0)
		return (errcode_t)errno;
	if ((size_t)n < sizeof(sb) || ext2fs_le16_to_cpu(sb.s_magic) != EXT2_SUPER_MAGIC)
		return ORLOV_ERR_NOT_EXT2;
	/* its groups count clusters, not blocks: the geometry below would
	 * call it corrupt, and no driver here allocates by cluster */
	if (ext2fs_le32_to_cpu(sb.s_feature_ro_compat) &
	    EXT4_FEATURE_RO_COMPAT_BIGALLOC)
		return ORLOV_ERR_BIGALLOC;
	if (ext2fs_le32_to_cpu(sb.s_log_block_size) > 6)
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	bs = 1024ULL << ext2fs_le32_to_cpu(sb.s_log_block_size);
	bpg = ext2fs_le32_to_cpu(sb.s_blocks_per_group);
	ipg = ext2fs_le32_to_cpu(sb.s_inodes_per_group);
	isz = ext2fs_le32_to_cpu(sb.s_rev_level) == EXT2_GOOD_OLD_REV ?
	      EXT2_GOOD_OLD_INODE_SIZE : ext2fs_le16_to_cpu(sb.s_inode_size);
	blocks = ir_blocks_count(&sb);
	if (ext2fs_le32_to_cpu(sb.s_first_data_block) != (bs == 1024) ||
	    bpg < 8 || bpg > 8 * bs || ipg < 1 || ipg > 8 * bs ||
	    isz < EXT2_GOOD_OLD_INODE_SIZE || isz > bs || (isz & (isz - 1)) ||
	    (uint64_t)ipg * isz % bs ||
	    blocks <= ext2fs_le32_to_cpu(sb.s_first_data_block))
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	groups = (blocks - ext2fs_le32_to_cpu(sb.s_first_data_block) + bpg - 1) / bpg;
	if (groups * ipg != ext2fs_le32_to_cpu(sb.s_inodes_count) ||
	    ext2fs_le32_to_cpu(sb.s_free_inodes_count) >
	    ext2fs_le32_to_cpu(sb.s_inodes_count) ||
	    ext2fs_le32_to_cpu(sb.s_free_blocks_count) > blocks)
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	if (ext2fs_le32_to_cpu(sb.s_rev_level) != EXT2_GOOD_OLD_REV &&
	    (ext2fs_le32_to_cpu(sb.s_first_ino) < EXT2_GOOD_OLD_FIRST_INO ||
	     ext2fs_le32_to_cpu(sb.s_first_ino) >= ext2fs_le32_to_cpu(sb.s_inodes_count)))
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	if (out)
		*out = sb;
	return 0;
}

/* An ext2 superblock's magic at @off of @head (@n bytes read)? */
static int ext2_at(const unsigned char *head, size_t n, uint64_t off)
{
	size_t at = SUPERBLOCK_OFFSET + offsetof(struct ext2_super_block, s_magic);

	return off + at + 2 <= n && get_le16(head + off + at) == EXT2_SUPER_MAGIC;
}

/* The byte offset of a partition of the MBR or GPT in @head that holds
 * an ext2 superblock, its number in *part; 0 if none. */
static uint64_t ext2_partition(const unsigned char *head, size_t n,
			       unsigned int *part)
{
	uint64_t lba, off;
	unsigned int i, entries, esize;

	if (n >= 1024 && !memcmp(head + 512, "EFI PART", 8)) {
		lba = get_le32(head + 512 + 72) |
		      (uint64_t)get_le32(head + 512 + 76) << 32;
		entries = get_le32(head + 512 + 80);
		esize = get_le32(head + 512 + 84);
		for (i = 0; esize >= 128 && i < entries && i < 128; i++) {
			uint64_t e = lba * 512 + (uint64_t)i * esize;

			if (e + 40 > n)
				break;
			off = (get_le32(head + e + 32) |
			       (uint64_t)get_le32(head + e + 36) << 32) * 512;
			if (off && ext2_at(head, n, off)) {
				*part = i + 1;
				return off;
			}
		}
		return 0;
	}
	for (i = 0; i < 4; i++) {
		off = (uint64_t)get_le32(head + 446 + 16 * i + 8) * 512;
		if (off && ext2_at(head, n, off)) {
			*part = i + 1;
			return off;
		}
	}
	return 0;
}

const char *ir_probe(const char *path, char *buf, size_t size)
{
	/* The first 2 MiB hold the superblock of a partition at the usual
	 * 1 MiB alignment, and btrfs's at 64 KiB. */
	static const struct { size_t off; const char *magic; size_t len;
			      const char *what; } sig[] = {
		{ 0, "\xfd" "7zXZ\0", 6, "an xz-compressed file: decompress it first (unxz)" },
		{ 0, "\x1f\x8b", 2, "a gzip-compressed file: decompress it first (gunzip)" },
		{ 0, "\x28\xb5\x2f\xfd", 4, "a zstd-compressed file: decompress it first (unzstd)" },
		{ 0, "BZh", 3, "a bzip2-compressed file: decompress it first (bunzip2)" },
		{ 0, "\x04\x22\x4d\x18", 4, "an lz4-compressed file: decompress it first (unlz4)" },
		{ 0, "QFI\xfb", 4, "a qcow2 disk image: convert it to a raw one first (qemu-img convert -O raw)" },
		{ 0, "KDMV", 4, "a VMDK disk image: convert it to a raw one first (qemu-img convert -O raw)" },
		{ 0, "LUKS\xba\xbe", 6, "a LUKS encrypted volume: give the opened mapping (cryptsetup open)" },
		{ 0, "hsqs", 4, "a squashfs image, which is read-only: give an ext2/ext3 image" },
		{ 0, "XFSB", 4, "an XFS filesystem: give an ext2/ext3 image" },
		{ 257, "ustar", 5, "a tar archive: IMAGE comes first, SOURCE second (arguments swapped?)" },
		{ 4086, "SWAPSPACE2", 10, "a swap area: give an ext2/ext3 image" },
		{ 32769, "CD001", 5, "an ISO 9660 image, which is read-only: give an ext2/ext3 image" },
		{ 65600, "_BHRfS_M", 8, "a btrfs filesystem: give an ext2/ext3 image" },
	};
	unsigned char *head;
	struct stat st;
	size_t i, n = 0;
	uint64_t off;
	unsigned int part = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	head = malloc(2 << 20);
	while (head && n < (size_t)(2 << 20) &&
	       (r = pread(fd, head + n, (2 << 20) - n, (off_t)n)) > 0)
		n += (size_t)r;
	close(fd);
	if (!head)
		return NULL;
	buf[0] = 0;
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		snprintf(buf, size, "an empty file, no filesystem (--create SIZE makes one)");
	for (i = 0; !buf[0] && i < sizeof(sig) / sizeof(sig[0]); i++)
		if (n >= sig[i].off + sig[i].len &&
		    !memcmp(head + sig[i].off, sig[i].magic, sig[i].len))
			snprintf(buf, size, "%s", sig[i].what);
	if (!buf[0] && n >= 512 && get_le16(head + 510) == 0xaa55 &&
	    head[0x15] >= 0xf0 && (!memcmp(head + 54, "FAT", 3) ||
				   !memcmp(head + 82, "FAT32", 5)))
		snprintf(buf, size, "a FAT (vfat) filesystem: give an ext2/ext3 image");
	if (!buf[0] && n >= 512 && (get_le16(head + 510) == 0xaa55 ||
				    (n >= 520 && !memcmp(head + 512, "EFI PART", 8)))) {
		int gpt = n >= 520 && !memcmp(head + 512, "EFI PART", 8);

		off = ext2_partition(head, n, &part);
		if (off)
			snprintf(buf, size, "a partitioned disk image (%s) with "
				 "an ext2 filesystem in partition %u at byte %llu: "
				 "give --partition %u", gpt ? "GPT" : "MBR", part,
				 (unsigned long long)off, part);
		else
			snprintf(buf, size, "a partitioned disk image (%s): give "
				 "the partition that holds the filesystem "
				 "(--partition N)", gpt ? "GPT" : "MBR");
	}
	for (off = 512; !buf[0] && off + SUPERBLOCK_OFFSET + 58 <= n; off += 512)
		if (ext2_at(head, n, off))
			snprintf(buf, size, "an ext2 filesystem at byte %llu, "
				 "not at the start (mke2fs -E offset=): give "
				 "--offset %llu",
				 (unsigned long long)off, (unsigned long long)off);
	if (!buf[0]) {
		for (i = 0; i < n && !head[i]; i++)
			;
		if (n && i == n)
			snprintf(buf, size, "zeros, no filesystem (--create SIZE "
				 "makes one)");
	}
	free(head);
	return buf[0] ? buf : NULL;
}

errcode_t ir_open(const char *path, ext2_filsys *ret)
{
	return ir_open_at(path, 0, ret);
}

errcode_t ir_open_at(const char *path, uint64_t offset, ext2_filsys *ret)
{
	errcode_t err = ir_check_super_at(path, offset, NULL);
	char opt[32];

	if (err)
		return err;
	snprintf(opt, sizeof(opt), "offset=%llu", (unsigned long long)offset);
	/* No EXT2_FLAG_RW: a layout check must never change the image. */
	return ext2fs_open2(path, offset ? opt : NULL, EXT2_FLAG_64BITS, 0, 0,
			    unix_io_manager, ret);
}

/* Are the @len bytes at @p all zero? */
static int zeros(const unsigned char *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

errcode_t image_probe(const char *path, enum image_probe *kind)
{
	size_t cap = 1 << 16;
	unsigned char *buf;
	struct stat st;
	off_t off = 0, end;
	errcode_t err = 0;
	int fd;

	*kind = PROBE_MISSING;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : (errcode_t)errno;
	buf = malloc(cap);
	if (!buf || fstat(fd, &st)) {
		err = buf ? (errcode_t)errno : ENOMEM;
		goto out;
	}
	*kind = PROBE_OTHER;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		goto out;
	/* the superblock's magic, where a filesystem made by mke2fs has it */
	if (pread(fd, buf, 1082, 0) == 1082 &&
	    get_le16(buf + 1024 + offsetof(struct ext2_super_block, s_magic)) ==
	    EXT2_SUPER_MAGIC) {
		*kind = PROBE_EXT;
		goto out;
	}
	/* Only zeros: nothing to lose (a file made with truncate or
	 * fallocate).  Of a device, its first MiB. */
	end = S_ISREG(st.st_mode) ? st.st_size : 1 << 20;
	while (off < end) {
		off_t data = S_ISREG(st.st_mode) ? lseek(fd, off, SEEK_DATA) : off;
		ssize_t n;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			data = off;
		if (data >= end)
			break;
		n = pread(fd, buf, (size_t)(end - data) < cap ?
			  (size_t)(end - data) : cap, data);
		if (n <= 0 || !zeros(buf, (size_t)n))
			goto out;
		off = data + n;
	}
	*kind = PROBE_EMPTY;
out:
	free(buf);
	close(fd);
	return err;
}
