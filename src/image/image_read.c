// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/stat.h>

#include "image/image_read.h"
#include "source/walk.h"
#include "lib/util.h"
/* After ext2fs.h, which defines the __u32 its structures use. */
#include <ext2fs/ext2_ext_attr.h>
#include "model/acl.h"
#include "model/xattr.h"
#include "lib/orlov_err.h"

/*
 * The superblock's geometry, read raw and checked before libext2fs sees
 * it: libext2fs 1.47 trusts some of these fields (a wrong
 * s_first_data_block sends ext2fs_read_bitmaps past its buffers), and
 * every field of an image is input.
 */
errcode_t ir_check_super(const char *path, struct ext2_super_block *out)
{
	struct ext2_super_block sb;
	uint64_t blocks, groups, bs;
	uint32_t bpg, ipg, isz;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return (errcode_t)errno;
	n = pread(fd, &sb, sizeof(sb), SUPERBLOCK_OFFSET);
	close(fd);
	if (n < 0)
		return (errcode_t)errno;
	if ((size_t)n < sizeof(sb) || ext2fs_le16_to_cpu(sb.s_magic) != EXT2_SUPER_MAGIC)
		return ORLOV_ERR_NOT_EXT2;
	if (ext2fs_le32_to_cpu(sb.s_log_block_size) > 6)
		return EXT2_ET_CORRUPT_SUPERBLOCK;
	bs = 1024ULL << ext2fs_le32_to_cpu(sb.s_log_block_size);
	bpg = ext2fs_le32_to_cpu(sb.s_blocks_per_group);
	ipg = ext2fs_le32_to_cpu(sb.s_inodes_per_group);
	isz = ext2fs_le32_to_cpu(sb.s_rev_level) == EXT2_GOOD_OLD_REV ?
	      EXT2_GOOD_OLD_INODE_SIZE : ext2fs_le16_to_cpu(sb.s_inode_size);
	blocks = ext2fs_le32_to_cpu(sb.s_blocks_count);
	if (ext2fs_le32_to_cpu(sb.s_feature_incompat) & EXT4_FEATURE_INCOMPAT_64BIT)
		blocks |= (uint64_t)ext2fs_le32_to_cpu(sb.s_blocks_count_hi) << 32;
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
				 "give that partition (losetup -P, or dd skip=%llu "
				 "iflag=skip_bytes)", gpt ? "GPT" : "MBR", part,
				 (unsigned long long)off, (unsigned long long)off);
		else
			snprintf(buf, size, "a partitioned disk image (%s): give "
				 "the partition that holds the filesystem "
				 "(losetup -P)", gpt ? "GPT" : "MBR");
	}
	for (off = 512; !buf[0] && off + SUPERBLOCK_OFFSET + 58 <= n; off += 512)
		if (ext2_at(head, n, off))
			snprintf(buf, size, "an ext2 filesystem at byte %llu, "
				 "not at the start (mke2fs -E offset=): give a "
				 "loop device at that offset (losetup -o %llu)",
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
	errcode_t err = ir_check_super(path, NULL);

	if (err)
		return err;
	/* No EXT2_FLAG_RW: a layout check must never change the image. */
	return ext2fs_open2(path, NULL, EXT2_FLAG_64BITS, 0, 0,
			    unix_io_manager, ret);
}

int ir_path_cmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;

	for (; *p && *p == *q; p++, q++)
		;
	if (*p == *q)
		return 0;
	/* End of string first, then the separator, then any name byte. */
	if (!*p)
		return -1;
	if (!*q)
		return 1;
	if (*p == '/')
		return -1;
	if (*q == '/')
		return 1;
	return *p < *q ? -1 : 1;
}

errcode_t ir_normalize_path(const char *in, char **out)
{
	size_t n = strlen(in), i, o = 0;
	char *p = malloc(n + 2);

	if (!p)
		return ENOMEM;
	p[o++] = '/';
	for (i = 0; i < n; i++) {
		if (in[i] == '/' && p[o - 1] == '/')
			continue;
		p[o++] = in[i];
	}
	if (o > 1 && p[o - 1] == '/')
		o--;
	p[o] = '\0';
	*out = p;
	return 0;
}

errcode_t ir_lookup(ext2_filsys fs, const char *path, ext2_ino_t *ino)
{
	return ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, ino);
}

errcode_t ir_read_inode(ext2_filsys fs, ext2_ino_t ino,
			struct ext2_inode_large *inode)
{
	memset(inode, 0, sizeof(*inode));
	return ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)inode,
				      sizeof(*inode));
}

/* ---- directories ---- */

struct dir_collect {
	struct ir_dir *d;
	errcode_t err;
};

static int collect_dirent(ext2_ino_t dir, int entry,
			  struct ext2_dir_entry *dirent, int offset,
			  int blocksize, char *buf, void *priv)
{
	struct dir_collect *dc = priv;
	struct ir_dir *d = dc->d;
	size_t len = (size_t)ext2fs_dirent_name_len(dirent);
	struct ir_dirent *e;

	if ((len == 1 && dirent->name[0] == '.') ||
	    (len == 2 && dirent->name[0] == '.' && dirent->name[1] == '.'))
		return 0;
	if (grow_array(&d->e, &d->cap, d->n + 1, sizeof(*d->e), 16)) {
		dc->err = ENOMEM;
		return DIRENT_ABORT;
	}
	e = &d->e[d->n];
	e->name = malloc(len + 1);
	if (!e->name) {
		dc->err = ENOMEM;
		return DIRENT_ABORT;
	}
	memcpy(e->name, dirent->name, len);
	e->name[len] = '\0';
	e->len = len;
	e->ino = dirent->inode;
	d->n++;
	return 0;
}

static int dirent_cmp(const void *a, const void *b)
{
	const struct ir_dirent *x = a, *y = b;

	return walk_name_cmp(x->name, x->len, y->name, y->len);
}

errcode_t ir_read_dir(ext2_filsys fs, ext2_ino_t dir, struct ir_dir *out)
{
	struct dir_collect dc = { out, 0 };
	errcode_t err;

	memset(out, 0, sizeof(*out));
	err = ext2fs_dir_iterate2(fs, dir, 0, NULL, collect_dirent, &dc);
	if (!err)
		err = dc.err;
	if (err) {
		ir_dir_free(out);
		return err;
	}
	if (out->n > 1)
		qsort(out->e, out->n, sizeof(*out->e), dirent_cmp);
	return 0;
}

void ir_dir_free(struct ir_dir *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	memset(d, 0, sizeof(*d));
}

const char *ir_type_name(unsigned int mode)
{
	switch (mode & LINUX_S_IFMT) {
	case LINUX_S_IFDIR:	return "dir";
	case LINUX_S_IFREG:	return "file";
	case LINUX_S_IFLNK:	return "symlink";
	case LINUX_S_IFIFO:	return "fifo";
	case LINUX_S_IFSOCK:	return "sock";
	case LINUX_S_IFCHR:	return "chr";
	case LINUX_S_IFBLK:	return "blk";
	}
	return NULL;
}

/* ---- block lists ---- */

struct block_collect {
	struct ir_blocks *bl;
	errcode_t err;
};

static int collect_block(ext2_filsys fs, blk64_t *blocknr,
			 e2_blkcnt_t blockcnt, blk64_t ref_blk,
			 int ref_offset, void *priv)
{
	struct block_collect *bc = priv;
	struct ir_blocks *bl = bc->bl;

	if (grow_array(&bl->b, &bl->cap, bl->n + 1, sizeof(*bl->b), 64)) {
		bc->err = ENOMEM;
		return BLOCK_ABORT;
	}
	bl->b[bl->n++] = *blocknr;
	return 0;
}

errcode_t ir_block_list(ext2_filsys fs, ext2_ino_t ino,
			struct ext2_inode_large *inode, struct ir_blocks *out)
{
	struct block_collect bc = { out, 0 };
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/*
	 * Devices keep their number and fast symlinks their target in
	 * i_block; iterating those would list garbage "blocks".
	 */
	if (!ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode))
		return 0;
	/*
	 * Without BLOCK_FLAG_DEPTH_TRAVERSE each mapping block comes before
	 * the blocks it maps, which is the order the tool allocates them.
	 */
	err = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
				    collect_block, &bc);
	if (!err)
		err = bc.err;
	if (err)
		ir_blocks_free(out);
	return err;
}

void ir_blocks_free(struct ir_blocks *bl)
{
	free(bl->b);
	memset(bl, 0, sizeof(*bl));
}

errcode_t ir_format_blocks(const struct ir_blocks *bl, struct strbuf *out)
{
	size_t i = 0, j;
	errcode_t err;

	if (!bl->n)
		return sb_append(out, "-", 1);
	while (i < bl->n) {
		for (j = i; j + 1 < bl->n && bl->b[j + 1] == bl->b[j] + 1; j++)
			;
		if (j > i)
			err = sb_printf(out, "%s%llu-%llu", i ? "," : "",
					(unsigned long long)bl->b[i],
					(unsigned long long)bl->b[j]);
		else
			err = sb_printf(out, "%s%llu", i ? "," : "",
					(unsigned long long)bl->b[i]);
		if (err)
			return err;
		i = j + 1;
	}
	return 0;
}

errcode_t ir_describe(ext2_filsys fs, ext2_ino_t ino,
		      struct ext2_inode_large *inode, struct strbuf *out)
{
	const char *type = ir_type_name(inode->i_mode);
	struct ir_blocks bl;
	blk64_t acl;
	errcode_t err;

	if (!type)
		return ORLOV_ERR_CORRUPT;
	err = ir_block_list(fs, ino, inode, &bl);
	if (err)
		return err;
	err = sb_printf(out, "ino=%lu group=%lu %s blocks=", (unsigned long)ino,
			(unsigned long)((ino - 1) / fs->super->s_inodes_per_group),
			type);
	if (!err)
		err = ir_format_blocks(&bl, out);
	ir_blocks_free(&bl);
	acl = ext2fs_file_acl_block(fs, (struct ext2_inode *)inode);
	if (!err && acl) {
		/* The block's bytes count too: its reference count, and a
		 * CRC32C of the whole block, entries and value placement. */
		unsigned char *buf = NULL;

		err = ext2fs_get_mem(fs->blocksize, &buf);
		if (!err)
			err = io_channel_read_blk64(fs->io, acl, 1, buf);
		if (!err)
			err = sb_printf(out, " xattr=%llu xrefs=%lu xcrc=%08lx",
					(unsigned long long)acl,
					(unsigned long)ext2fs_le32_to_cpu(
				((struct ext2_ext_attr_header *)buf)->h_refcount),
					(unsigned long)ext2fs_crc32c_le(~0U, buf,
							fs->blocksize));
		ext2fs_free_mem(&buf);
	}
	return err;
}

/* ---- the walk ---- */

struct walk {
	ext2_filsys fs;
	ir_walk_fn fn;
	void *priv;
	ext2fs_inode_bitmap seen;	/* directories entered */
	struct strbuf path;
	const char *doing;		/* for the error context */
};

/* A directory being walked: the walk keeps its own stack, so that no
 * depth of tree overflows the C one. */
struct wframe {
	struct ir_dir d;
	size_t next;
	size_t plen;		/* length of its path */
};

/* Report @ino (at w->path) and, if a directory, push its entries. */
static errcode_t visit_ino(struct walk *w, ext2_ino_t ino,
			   struct wframe **stack, size_t *cap, size_t *depth)
{
	struct ext2_inode_large inode;
	struct wframe *f;
	errcode_t err;

	w->doing = "reading inode of";
	err = ir_read_inode(w->fs, ino, &inode);
	if (err)
		return err;
	w->doing = "examining";
	err = w->fn(w->path.s, ino, &inode, w->priv);
	if (err || !LINUX_S_ISDIR(inode.i_mode))
		return err;
	w->doing = "walking directory";
	if (ext2fs_fast_test_inode_bitmap2(w->seen, ino))
		return ORLOV_ERR_CORRUPT;	/* a cycle: never finish */
	ext2fs_fast_mark_inode_bitmap2(w->seen, ino);
	if (grow_array(stack, cap, *depth + 1, sizeof(**stack), 64))
		return ENOMEM;
	f = &(*stack)[*depth];
	memset(f, 0, sizeof(*f));
	f->plen = w->path.len;
	w->doing = "reading directory";
	err = ir_read_dir(w->fs, ino, &f->d);
	if (!err)
		(*depth)++;
	return err;
}

static errcode_t walk_from(struct walk *w, ext2_ino_t root)
{
	struct wframe *stack = NULL;
	size_t cap = 0, depth = 0;
	errcode_t err = visit_ino(w, root, &stack, &cap, &depth);

	while (!err && depth > 0) {
		struct wframe *f = &stack[depth - 1];
		const struct ir_dirent *e;

		sb_truncate(&w->path, f->plen);
		if (f->next == f->d.n) {
			ir_dir_free(&f->d);
			depth--;
			continue;
		}
		e = &f->d.e[f->next++];
		if (f->plen > 1)
			err = sb_append(&w->path, "/", 1);
		if (!err)
			err = sb_append(&w->path, e->name, e->len);
		if (!err)
			err = visit_ino(w, e->ino, &stack, &cap, &depth);
	}
	while (depth > 0)
		ir_dir_free(&stack[--depth].d);
	free(stack);
	return err;
}

errcode_t ir_walk(ext2_filsys fs, const char *root, ir_walk_fn fn,
		  void *priv, struct strbuf *ctx)
{
	struct walk w;
	ext2_ino_t ino;
	errcode_t err;

	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.fn = fn;
	w.priv = priv;
	err = sb_append(&w.path, root, strlen(root));
	if (err)
		return err;
	w.doing = "looking up";
	err = ir_lookup(fs, root, &ino);
	if (!err) {
		w.doing = "allocating inode bitmap for";
		err = ext2fs_allocate_inode_bitmap(fs, "directories walked",
						   &w.seen);
	}
	if (!err)
		err = walk_from(&w, ino);
	if (err && ctx) {
		sb_truncate(ctx, 0);
		if (!sb_printf(ctx, "while %s ", w.doing))
			sb_escaped(ctx, w.path.s, w.path.len);
	}
	if (w.seen)
		ext2fs_free_inode_bitmap(w.seen);
	sb_free(&w.path);
	return err;
}

/* ---- extended attributes ---- */

/* posix_acl_xattr, the form getxattr(2) returns: version 2, then 8-byte
 * entries (tag, perm, id) throughout. */
#define POSIX_ACL_XATTR_VERSION	2

/*
 * A POSIX ACL as ext2 and ext4 store it (version 1, 4-byte entries for
 * the tags without an id, 8-byte ones for named users and groups), parsed
 * as ext2_acl_from_disk does (acl_from_disk), in the getxattr(2) form:
 * the id of a short entry is ACL_UNDEFINED_ID (0xffffffff).
 */
static errcode_t acl_to_xattr(const unsigned char *v, size_t len,
			      unsigned char **out, size_t *out_len)
{
	struct acl acl;
	unsigned char *x;
	size_t i;
	errcode_t err;

	err = acl_from_disk(v, len, &acl);
	if (err)
		return err == ORLOV_ERR_BAD_XATTR ? ORLOV_ERR_CORRUPT : err;
	x = malloc(4 + 8 * acl.n);
	if (!x) {
		acl_free(&acl);
		return ENOMEM;
	}
	put_le32(x, POSIX_ACL_XATTR_VERSION);
	for (i = 0; i < acl.n; i++) {
		put_le16(x + 4 + 8 * i, acl.e[i].tag);
		put_le16(x + 6 + 8 * i, acl.e[i].perm);
		put_le32(x + 8 + 8 * i, acl.e[i].id);
	}
	*out = x;
	*out_len = 4 + 8 * acl.n;
	acl_free(&acl);
	return 0;
}

static const char *xattr_prefix(unsigned int index, int *is_acl)
{
	*is_acl = 0;
	switch (index) {
	case 1:	return "user.";
	case 2: *is_acl = 1; return "system.posix_acl_access";
	case 3: *is_acl = 1; return "system.posix_acl_default";
	case 4:	return "trusted.";
	case 6:	return "security.";
	case 7:	return "system.";
	case 8:	return "system.richacl";
	}
	return NULL;
}

/* By name; copies of one name in the order ext4_xattr_get looks for it:
 * the inode's (in table order) before the block's. */
static int xattr_cmp(const void *a, const void *b)
{
	const struct ir_xattr *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->in_inode != y->in_inode)
		return x->in_inode ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The entry table at @off of @buf (@end bytes), values at @vbase + their
 * offsets, within @vlimit bytes of @vbase (the block's start, or in the
 * inode the first entry).  Every offset and length is checked here again,
 * whatever the caller's validity check said.
 */
static errcode_t parse_xattr_entries(const unsigned char *buf, size_t off,
				     size_t end, const unsigned char *vbase,
				     size_t vlimit, int in_inode,
				     struct ir_xattrs *out, size_t *cap)
{
	for (;;) {
		const unsigned char *e = buf + off, *val;
		size_t nlen, voff, vlen, plen;
		const char *prefix;
		struct ir_xattr *x;
		int is_acl;
		errcode_t err;

		if (off > end || end - off < 4)
			return ORLOV_ERR_CORRUPT;
		if (get_le32(e) == 0)
			return 0;
		if (end - off < sizeof(struct ext2_ext_attr_entry))
			return ORLOV_ERR_CORRUPT;
		nlen = e[0];
		voff = get_le16(e + 2);
		vlen = get_le32(e + 8);
		/* No value in another inode (ea_inode); an empty value's
		 * offset is not looked at (ext4's check_xattrs). */
		if (EXT2_EXT_ATTR_LEN(nlen) > end - off || get_le32(e + 4) ||
		    (vlen && (voff > vlimit || vlen > vlimit - voff)))
			return ORLOV_ERR_CORRUPT;
		prefix = xattr_prefix(e[1], &is_acl);
		if (!prefix)
			return ORLOV_ERR_CORRUPT;
		if (grow_array(&out->a, cap, out->n + 1, sizeof(*out->a), 8))
			return ENOMEM;
		x = &out->a[out->n];
		memset(x, 0, sizeof(*x));
		plen = strlen(prefix);
		x->name = malloc(plen + nlen + 1);
		if (!x->name)
			return ENOMEM;
		x->in_inode = in_inode;
		x->seq = out->n;
		out->n++;
		memcpy(x->name, prefix, plen);
		memcpy(x->name + plen, e + sizeof(struct ext2_ext_attr_entry),
		       nlen);
		x->name[plen + nlen] = '\0';
		val = vlen ? vbase + voff : vbase;
		if (is_acl) {
			err = acl_to_xattr(val, vlen, &x->value, &x->len);
			if (err)
				return err;
		} else {
			x->value = malloc(vlen ? vlen : 1);
			if (!x->value)
				return ENOMEM;
			memcpy(x->value, val, vlen);
			x->len = vlen;
		}
		off += EXT2_EXT_ATTR_LEN(nlen);
	}
}

/*
 * ext4's attributes in a large inode: an ibody header (the magic) at
 * 128 + i_extra_isize, then an unsorted entry table ending in 4 zero
 * bytes, the values at the end of the inode, their offsets counted from
 * the first entry.  ext2 never writes any (and does not read them).
 */
static errcode_t read_ibody_xattrs(ext2_filsys fs, ext2_ino_t ino,
				   struct ir_xattrs *out, size_t *cap)
{
	size_t isz = EXT2_INODE_SIZE(fs->super), extra, start;
	unsigned char *raw;
	errcode_t err;

	if (isz <= EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	/* The whole inode, as it lies in the table: struct
	 * ext2_inode_large stops short of the attributes. */
	raw = calloc(1, isz);
	if (!raw)
		return ENOMEM;
	err = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)raw,
				     (int)isz);
	if (err)
		goto out;
	extra = get_le16(raw + EXT2_GOOD_OLD_INODE_SIZE);
	/* ext4_iget: nothing after a zero i_extra_isize is read; one past
	 * the inode or not a multiple of 4 makes the inode corrupt. */
	if (!extra)
		goto out;
	if (extra & 3 || extra > isz - EXT2_GOOD_OLD_INODE_SIZE) {
		err = ORLOV_ERR_CORRUPT;
		goto out;
	}
	start = EXT2_GOOD_OLD_INODE_SIZE + extra;
	/* No room for the magic, or no magic: no attributes. */
	if (isz - start < 4 || get_le32(raw + start) != EXT2_EXT_ATTR_MAGIC)
		goto out;
	if (!xattr_ibody_valid(raw + start, isz - start))
		err = ORLOV_ERR_CORRUPT;
	else
		err = parse_xattr_entries(raw, start + 4, isz, raw + start + 4,
					  isz - start - 4, 1, out, cap);
out:
	free(raw);
	return err;
}

/* The external attribute block (i_file_acl), the only place ext2 reads. */
static errcode_t read_block_xattrs(ext2_filsys fs,
				   const struct ext2_inode_large *inode,
				   struct ir_xattrs *out, size_t *cap)
{
	blk64_t blk = ext2fs_file_acl_block(fs, (const struct ext2_inode *)inode);
	unsigned char *buf;
	errcode_t err;

	if (!blk)
		return 0;
	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return ORLOV_ERR_CORRUPT;
	err = ext2fs_get_mem(fs->blocksize, &buf);
	if (err)
		return err;
	err = io_channel_read_blk64(fs->io, blk, 1, buf);
	/* The header (magic, h_blocks 1) and entries as ext2 checks them */
	if (!err && !xattr_block_valid(buf, fs->blocksize))
		err = ORLOV_ERR_CORRUPT;
	if (!err)
		err = parse_xattr_entries(buf, sizeof(struct ext2_ext_attr_header),
					  fs->blocksize, buf, fs->blocksize, 0,
					  out, cap);
	ext2fs_free_mem(&buf);
	return err;
}

errcode_t ir_read_xattrs(ext2_filsys fs, ext2_ino_t ino,
			 const struct ext2_inode_large *inode,
			 struct ir_xattrs *out)
{
	unsigned int corrupt = 0;
	size_t cap = 0;
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/* Both places are looked at even when the first is corrupt, so that
	 * the caller can tell which one is. */
	err = read_ibody_xattrs(fs, ino, out, &cap);
	if (err == ORLOV_ERR_CORRUPT) {
		corrupt |= IR_XATTR_BAD_INODE;
		err = 0;
	}
	if (!err) {
		err = read_block_xattrs(fs, inode, out, &cap);
		if (err == ORLOV_ERR_CORRUPT) {
			corrupt |= IR_XATTR_BAD_BLOCK;
			err = 0;
		}
	}
	if (!err && corrupt)
		err = ORLOV_ERR_CORRUPT;
	if (err) {
		ir_xattrs_free(out);
		out->corrupt = corrupt;
		return err;
	}
	if (out->n > 1)
		qsort(out->a, out->n, sizeof(*out->a), xattr_cmp);
	return 0;
}

void ir_xattrs_free(struct ir_xattrs *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		free(x->a[i].name);
		free(x->a[i].value);
	}
	free(x->a);
	memset(x, 0, sizeof(*x));
}

/* ---- symlinks, devices, times ---- */

errcode_t ir_symlink_target(ext2_filsys fs, ext2_ino_t ino,
			    struct ext2_inode_large *inode, struct strbuf *out)
{
	size_t size = EXT2_I_SIZE(inode);
	ext2_file_t f;
	unsigned int got;
	errcode_t err, err2;
	char *buf;

	sb_truncate(out, 0);
	if (ext2fs_is_fast_symlink((struct ext2_inode *)inode)) {
		if (size >= sizeof(inode->i_block))
			return ORLOV_ERR_CORRUPT;
		return sb_append(out, (const char *)inode->i_block, size);
	}
	if (size >= fs->blocksize)
		return ORLOV_ERR_CORRUPT;
	buf = malloc(size + 1);
	if (!buf)
		return ENOMEM;
	err = ext2fs_file_open2(fs, ino, (struct ext2_inode *)inode, 0, &f);
	if (!err) {
		err = ext2fs_file_read(f, buf, (unsigned int)size, &got);
		if (!err && got != size)
			err = ORLOV_ERR_CORRUPT;
		err2 = ext2fs_file_close(f);
		if (!err)
			err = err2;
	}
	if (!err)
		err = sb_append(out, buf, size);
	free(buf);
	return err;
}

void ir_rdev(const struct ext2_inode_large *inode, unsigned int *major,
	     unsigned int *minor)
{
	uint32_t old = ext2fs_le32_to_cpu(inode->i_block[0]);
	uint32_t nw = ext2fs_le32_to_cpu(inode->i_block[1]);

	/* Old 8:8 encoding in i_block[0]; else the 12:20 one in [1]. */
	if (old) {
		*major = (old >> 8) & 0xff;
		*minor = old & 0xff;
	} else {
		*major = (nw & 0xfff00) >> 8;
		*minor = (nw & 0xff) | ((nw >> 12) & 0xfff00);
	}
}

void ir_inode_time(ext2_filsys fs, const struct ext2_inode_large *inode,
		   enum ir_time which, int64_t *sec, uint32_t *nsec,
		   int *has_nsec)
{
	size_t end, room = 0;
	uint32_t base, extra;

	if (which == IR_MTIME) {
		base = inode->i_mtime;
		extra = inode->i_mtime_extra;
		end = offsetof(struct ext2_inode_large, i_mtime_extra);
	} else {
		base = inode->i_ctime;
		extra = inode->i_ctime_extra;
		end = offsetof(struct ext2_inode_large, i_ctime_extra);
	}
	end += sizeof(uint32_t);
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE)
		room = EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
	*sec = (int32_t)base;
	*nsec = 0;
	*has_nsec = room >= end &&
		    room <= (size_t)EXT2_INODE_SIZE(fs->super);
	if (*has_nsec) {
		*sec += (int64_t)(extra & EXT4_EPOCH_MASK) << 32;
		*nsec = extra >> EXT4_EPOCH_BITS;
	}
}
