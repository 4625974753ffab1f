// SPDX-License-Identifier: GPL-2.0-or-later
/* The UUID of --create: a digest of the tree and of the options that
 * shape the image. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "populate/digest.h"
#include "populate/report.h"
#include "populate/hardlinks.h"
#include "model/kver.h"
#include "lib/digest.h"
#include "lib/util.h"

struct digest_walk {
	struct digest d;
	const struct populate_opts *o;
	struct populate_result *res;
	unsigned char *buf;
	struct pop_links links;	/* each multiply linked inode's first entry */
	uint32_t entries;	/* entries digested so far */
};

static void digest_str(struct digest *d, const char *s, size_t n)
{
	digest_u64(d, n);
	digest_update(d, s, n);
}

/*
 * A time's seconds alone: a 128-byte inode keeps no nanoseconds, and the
 * inode size mke2fs picks is known only after the UUID, made from this
 * digest, is given to it.  Trees that differ only below the second get one
 * UUID, as their images on 128-byte inodes are one image.
 */
static void digest_time(struct digest *d, const struct timespec *ts)
{
	digest_u64(d, (uint64_t)ts->tv_sec);
}

/* A later name of an inode the image links to the first (namei.c): the
 * link is kept, not the attributes read again.  1: @e is such a name. */
static errcode_t digest_link(struct digest_walk *w, const struct src_entry *e,
			     int *linked)
{
	struct link_ent *l;

	*linked = 0;
	if (S_ISDIR(e->st.st_mode) || e->st.st_nlink < 2)
		return 0;
	l = link_find(&w->links, e->st.st_dev, e->st.st_ino);
	if (!l)
		return link_add(&w->links, e->st.st_dev, e->st.st_ino,
				w->entries);
	digest_u64(&w->d, 4);
	digest_u64(&w->d, l->ino);
	*linked = 1;
	return 0;
}

/*
 * What of an entry the image keeps (as the walk gives it: owners mapped,
 * times clamped), so that copies of one tree made at other times give
 * the same digest: never what the host keeps alone (allocated blocks,
 * inode numbers, ctime's or flags the image does not take), and an atime
 * as it is after the tree was read (the image's walk comes after this one,
 * and reading may move it: see settle_atime in source/walk.c).
 */
static errcode_t digest_entry(void *ctx, const struct src_entry *e, int tag)
{
	struct digest_walk *w = ctx;
	struct digest *d = &w->d;
	const struct stat *st = &e->st;
	struct timespec at = st->st_atim;
	uint64_t off = 0, s, t;
	size_t i, k;
	errcode_t err;
	int linked;

	digest_u64(d, (uint64_t)tag);
	digest_str(d, e->path, strlen(e->path));
	if (!*e->path && !w->o->root_attrs) {
		/* mke2fs's root, not SOURCE's: but a device table line for
		 * "/" gives its mode and owners (and only then is a word
		 * added: the other images keep their UUIDs) */
		if (e->table_attrs) {
			digest_u64(d, st->st_mode & 07777);
			digest_u64(d, st->st_uid);
			digest_u64(d, st->st_gid);
		}
		return 0;
	}
	err = digest_link(w, e, &linked);
	if (err)
		return errctx_setf(&w->res->ec, err, "reading", "%s/%s",
				   w->o->source, e->path);
	w->entries++;
	if (linked)
		return 0;
	digest_u64(d, st->st_mode);
	digest_u64(d, st->st_uid);
	digest_u64(d, st->st_gid);
	digest_time(d, &st->st_mtim);
	digest_time(d, &st->st_ctim);
	/* of a directory's flags the image takes this one alone (namei.c) */
	digest_u64(d, e->fsflags & FS_TOPDIR_FL);
	if (!S_ISREG(st->st_mode))
		digest_time(d, &at);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		digest_u64(d, st->st_rdev);
	if (S_ISLNK(st->st_mode))
		digest_str(d, e->link_target, e->link_len);
	digest_u64(d, e->nxattrs);
	for (i = 0; i < e->nxattrs; i++) {
		digest_str(d, e->xattrs[i].name, strlen(e->xattrs[i].name));
		digest_str(d, (const char *)e->xattrs[i].value,
			   e->xattrs[i].size);
	}
	if (!S_ISREG(st->st_mode))
		return 0;
	digest_u64(d, (uint64_t)st->st_size);
	while (off < (uint64_t)st->st_size) {
		err = e->data->next_data(e, off, &s, &t);
		if (err)
			goto fail;
		if (s >= t)
			break;
		digest_u64(d, s);
		digest_u64(d, t);
		for (off = s; off < t; off += k) {
			k = t - off < 65536 ? (size_t)(t - off) : 65536;
			err = e->data->read(e, w->buf, k, off);
			if (err)
				goto fail;
			digest_update(d, w->buf, k);
		}
	}
	if (e->data->atime) {
		err = e->data->atime(e, &at);
		if (err)
			goto fail;
		meta_clamp_time(&w->o->meta, &at);
	}
	digest_time(d, &at);
	return 0;
fail:
	return errctx_setf(&w->res->ec, err, "reading", "%s/%s", w->o->source,
			   e->path);
}

static errcode_t digest_enter(void *ctx, const struct src_entry *e)
{
	return digest_entry(ctx, e, 1);
}

static errcode_t digest_leave(void *ctx, const struct src_entry *e)
{
	struct digest_walk *w = ctx;

	(void)e;
	digest_u64(&w->d, 2);
	return 0;
}

static errcode_t digest_leaf(void *ctx, const struct src_entry *e)
{
	return digest_entry(ctx, e, 3);
}

static void digest_error(void *ctx, errcode_t err, const char *what,
			 const char *path)
{
	struct digest_walk *w = ctx;
	char *where;

	if (!devtable_error(err)) {
		errctx_setf(&w->res->ec, err, what, "%s%s%s", w->o->source,
			    *path ? "/" : "", path);
		return;
	}
	where = image_path(w->o, path);
	errctx_set(&w->res->ec, err, what, where);
	free(where);
}

/* --kernel: the three names it took before it took releases keep their
 * old values (0, 1, 2), and so their images' UUIDs; a release is its
 * number, well above them. */
static uint64_t kernel_key(const struct populate_opts *o)
{
	/* from 6.2 on arm64 is the same model: the same image */
	int arm64 = o->arm64 && o->kver < KVER_UNSIGNED_CHAR;

	if (o->kver == KVER_REF_6_1)
		return arm64 ? 1 : 0;
	if (o->kver == KVER_REF_6_12)
		return 2;
	return o->kver | (uint64_t)arm64 << 32;
}

/*
 * With SOURCE_DATE_EPOCH, --create's UUID was the epoch's and the seed's
 * alone: every image of a build had the same.  It now also takes a digest
 * of the tree (names, metadata, data) and of every option that shapes the
 * image (mke2fs's, a label among them): the same inputs give the same
 * UUID, other ones another.  A UUID given to mke2fs (-U) wins, and then
 * nothing is read here.
 */
errcode_t tree_digest(const struct populate_opts *o,
		      struct populate_result *res, struct inputs *in)
{
	struct walk_opts wo = { .want_xattrs = o->xattrs, .want_data = 1 };
	struct walk_visitor v = {
		.enter_dir = digest_enter, .leave_dir = digest_leave,
		.leaf = digest_leaf, .error = digest_error,
	};
	/* the type made, not how it was asked for: --fs-type ext4 and the
	 * default make the same image, with the same UUID */
	const char *strs[] = { o->target, o->mkfs.size, mkfs_fs_type(&o->mkfs),
			       o->mkfs.block_size, o->mkfs.inodes,
			       o->mkfs.extra };
	struct digest_walk w;
	errcode_t err;
	size_t i;

	if (!o->meta.has_epoch ||
	    (o->mkfs.extra && strstr(o->mkfs.extra, "-U")))
		return 0;
	memset(&w, 0, sizeof(w));
	w.o = o;
	w.res = res;
	w.buf = malloc(65536);
	if (!w.buf)
		return ENOMEM;
	v.ctx = &w;
	digest_init(&w.d, 0);
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i])
			digest_str(&w.d, strs[i], strlen(strs[i]));
		else
			digest_u64(&w.d, UINT64_MAX);
	digest_u64(&w.d, o->policy);
	digest_u64(&w.d, o->topdir);
	digest_u64(&w.d, o->colour);
	digest_u64(&w.d, o->cpus);
	digest_u64(&w.d, kernel_key(o));
	digest_u64(&w.d, o->driver);
	digest_u64(&w.d, (uint64_t)o->delalloc << 3 | (uint64_t)o->xattrs << 2 |
			 (uint64_t)o->root_attrs << 1 | (uint64_t)o->root_owner);
	digest_u64(&w.d, (uint64_t)o->root_uid << 32 | o->root_gid);
	if (o->rotational != ROTATIONAL_YES)	/* (new: the others' UUIDs stay) */
		digest_u64(&w.d, o->rotational);
	if (o->mb_optimize_scan)	/* (as --rotational) */
		digest_u64(&w.d, 2 + (uint64_t)o->mb_optimize_scan);
	if (o->possible_cpus && o->possible_cpus != o->cpus)	/* (likewise) */
		digest_u64(&w.d, (uint64_t)o->possible_cpus << 32 | 1);
	err = source_walk(&in->src, &wo, &o->meta, in->dtp, &v);
	free(w.buf);
	links_free(&w.links);
	if (!err)
		in->digest = digest_final(&w.d) | 1;	/* 0 is none */
	return err;
}
