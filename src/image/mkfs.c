// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <ext2fs/ext2fs.h>

#include "image/mkfs.h"
#include "image/image_read.h"
#include "lib/hash.h"
#include "lib/program.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* A version-4-shaped UUID drawn from the epoch and the seed, and for the
 * filesystem UUID the digest of what goes in: the same inputs give the
 * same filesystem, another tree, label or epoch another UUID (images
 * of one build must not collide in /dev/disk/by-uuid).  The hash seed
 * stays the epoch's and seed's: it places directory entries.
 * which: 0 the filesystem UUID, 1 the directory hash seed. */
void mkfs_uuid(const struct mkfs_opts *m, int which, char out[37])
{
	uint64_t x = ((uint64_t)m->epoch << 1 | (uint64_t)which) ^
		     (m->seed * 0xff51afd7ed558ccdULL);
	unsigned char u[16];
	int i;

	if (!which && m->digest) {
		uint64_t y = m->digest;

		x ^= splitmix64(&y);
	}
	for (i = 0; i < 16; i += 8) {
		uint64_t v = splitmix64(&x);
		int k;

		for (k = 0; k < 8; k++)
			u[i + k] = (unsigned char)(v >> (8 * k));
	}
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

struct argv_buf {
	char **v;
	size_t n, cap;
};

static errcode_t arg_add(struct argv_buf *a, const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		return ENOMEM;
	if (grow_array(&a->v, &a->cap, a->n + 1, sizeof(*a->v), 16)) {
		free(d);
		return ENOMEM;
	}
	a->v[a->n++] = d;
	return 0;
}

static void arg_free(struct argv_buf *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

/* Does the user's own option string already set this? */
static int extra_has(const struct mkfs_opts *m, const char *what)
{
	return m->extra && strstr(m->extra, what);
}

/* mke2fs leaves a file of a tiny filesystem short of its last blocks
 * (64 KiB makes 21 KiB), which the open then refuses: the file takes the
 * size its superblock gives. */
static errcode_t extend_to_fs(const char *image, uint64_t offset)
{
	struct ext2_super_block sb;
	struct stat st;
	uint64_t len;
	int fd = open(image, O_RDWR | O_CLOEXEC);
	errcode_t err = 0;

	if (fd < 0)
		return (errcode_t)errno;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, &sb, sizeof(sb), (off_t)(offset + SUPERBLOCK_OFFSET)) ==
	    (ssize_t)sizeof(sb) &&
	    ext2fs_le16_to_cpu(sb.s_magic) == EXT2_SUPER_MAGIC &&
	    ext2fs_le32_to_cpu(sb.s_log_block_size) <= 6) {
		len = offset + (ir_blocks_count(&sb) <<
				(10 + ext2fs_le32_to_cpu(sb.s_log_block_size)));
		if ((uint64_t)st.st_size < len && ftruncate(fd, (off_t)len))
			err = (errcode_t)errno;
	}
	close(fd);
	return err;
}

/* mke2fs's fs-size in bytes: K, M, G or T (binary), else KiB, or
 * blocks with -b.  -1 when it cannot be read. */
static int64_t size_bytes(const struct mkfs_opts *m)
{
	char *end;
	unsigned long long v = strtoull(m->size, &end, 10);
	const char *units = "kmgt", *u = *end ? strchr(units, end[0] | 0x20) : NULL;

	if (end == m->size || (*end && (!u || end[1])) || v > (1ULL << 40))
		return -1;
	if (u)
		return (int64_t)(v << (10 * (u - units + 1)));
	return (int64_t)v * (m->block_size ? atoi(m->block_size) : 1024);
}

/* @tok (a -E argument) with offset=N after it, into *out; mke2fs keeps
 * only the last -E it is given, so each one carries it. */
static errcode_t with_offset(const char *tok, uint64_t offset, char **out)
{
	size_t n = strlen(tok) + 32;

	*out = malloc(n);
	if (!*out)
		return ENOMEM;
	snprintf(*out, n, "%s%soffset=%llu", tok, *tok ? "," : "",
		 (unsigned long long)offset);
	return 0;
}

/* An argument for -E, with the offset when there is one. */
static errcode_t arg_add_ext(struct argv_buf *a, const char *tok,
			     uint64_t offset)
{
	char *s;
	errcode_t err;

	if (!offset)
		return arg_add(a, tok);
	err = with_offset(tok, offset, &s);
	if (!err)
		err = arg_add(a, s);
	free(s);
	return err;
}

/* The user's own mke2fs options, split at blanks; -E's argument (or
 * -Eopts) given the offset too. */
static errcode_t add_extra(struct argv_buf *a, const struct mkfs_opts *m)
{
	char *extra = strdup(m->extra), *tok, *save = NULL;
	errcode_t err = extra ? 0 : ENOMEM;
	int ext_next = 0;

	for (tok = extra ? strtok_r(extra, " \t\n", &save) : NULL;
	     !err && tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (ext_next)
			err = arg_add_ext(a, tok, m->offset);
		else if (m->offset && !strncmp(tok, "-E", 2) && tok[2]) {
			err = arg_add(a, "-E");
			if (!err)
				err = arg_add_ext(a, tok + 2, m->offset);
		} else
			err = arg_add(a, tok);
		ext_next = !strcmp(tok, "-E") && !ext_next;
	}
	free(extra);
	return err;
}

errcode_t mkfs_create(const char *image, const struct mkfs_opts *m)
{
	static const char *const progs[] = { "mke2fs", "/usr/sbin/mke2fs",
					      "/sbin/mke2fs" };
	extern char **environ;
	struct argv_buf a = { 0 }, env = { 0 };
	char uuid[37], seed[37], buf[64];
	errcode_t err = 0;
	struct stat st;
	size_t i;
	int status;

	/* A partition: never a byte past its end, whatever mke2fs would do
	 * with the size. */
	if (m->limit && (size_bytes(m) < 0 || (uint64_t)size_bytes(m) > m->limit))
		return ORLOV_ERR_FS_PAST_PARTITION;
	/* -F: IMAGE is overwritten as asked, even if it holds a
	 * filesystem (mke2fs still refuses a mounted one). */
	err = arg_add(&a, "mke2fs");
	if (!err)
		err = arg_add(&a, "-F");
	if (!err)
		err = arg_add(&a, "-q");
	if (!err)
		err = arg_add(&a, "-t");
	if (!err)
		err = arg_add(&a, mkfs_fs_type(m));
	/* first: a later -E (mke2fs keeps the last) carries it too */
	if (!err && m->offset && !(err = arg_add(&a, "-E")))
		err = arg_add_ext(&a, "", m->offset);
	if (!err && m->block_size && !(err = arg_add(&a, "-b")))
		err = arg_add(&a, m->block_size);
	if (!err && m->inodes && !(err = arg_add(&a, "-N")))
		err = arg_add(&a, m->inodes);
	if (!err && m->has_epoch) {
		/* mke2fs draws these from /dev/urandom otherwise */
		mkfs_uuid(m, 0, uuid);
		mkfs_uuid(m, 1, seed);
		if (!extra_has(m, "-U") && !m->uuid &&
		    !(err = arg_add(&a, "-U")))
			err = arg_add(&a, uuid);
		snprintf(buf, sizeof(buf), "hash_seed=%s", seed);
		if (!err && !extra_has(m, "hash_seed=") &&
		    !(err = arg_add(&a, "-E")))
			err = arg_add_ext(&a, buf, m->offset);
	}
	if (!err && m->label && !(err = arg_add(&a, "-L")))
		err = arg_add(&a, m->label);
	if (!err && m->uuid && !(err = arg_add(&a, "-U")))
		err = arg_add(&a, m->uuid);
	if (!err && m->extra)
		err = add_extra(&a, m);
	if (!err)
		err = arg_add(&a, image);
	if (!err)
		err = arg_add(&a, m->size);
	if (!err)
		err = arg_add(&a, NULL);
	/* The environment, with mke2fs's own clock fixed to the epoch:
	 * the superblock's times and those of / and lost+found. */
	for (i = 0; !err && environ[i]; i++)
		if (strncmp(environ[i], "E2FSPROGS_FAKE_TIME=", 20))
			err = arg_add(&env, environ[i]);
	if (!err && m->has_epoch) {
		snprintf(buf, sizeof(buf), "E2FSPROGS_FAKE_TIME=%lu",
			 (unsigned long)m->epoch);
		err = arg_add(&env, buf);
	}
	if (!err)
		err = arg_add(&env, NULL);
	/* An image file starts empty: mke2fs never shrinks one, and what a
	 * larger earlier image left past the end would differ between runs. */
	if (!err && !m->offset && stat(image, &st) == 0 && S_ISREG(st.st_mode) &&
	    truncate(image, 0))
		err = (errcode_t)errno;
	if (!err) {
		if (m->msgs)
			sb_truncate(m->msgs, 0);
		err = run_program(progs, 3, a.v, env.v, m->quiet, m->msgs,
				  &status);
		if (err == ENOENT)
			err = ORLOV_ERR_NO_MKFS;
		else if (!err && status)
			err = ORLOV_ERR_MKFS_FAILED;
		if (!err)
			err = extend_to_fs(image, m->offset);
	}
	arg_free(&a);
	arg_free(&env);
	return err;
}

int mkfs_size_word(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!strncmp(s, "auto", 4))
		return 1;
	return n && (!s[n] || (strchr("kKmMgGtTs", s[n]) && !s[n + 1]));
}
