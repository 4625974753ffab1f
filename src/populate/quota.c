// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "populate/quota.h"
#include "populate/report.h"
#include "model/ext4/mballoc.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* The bytes the blocks @f maps from the file's start hold. */
static uint64_t mapped_room(const struct pop_ctx *c, const struct ifile *f)
{
	uint32_t lb = 0;
	fsblk_t phys;

	for (;; lb++) {
		bmap_lookup(&c->fs, f, lb, &phys);
		if (!phys)
			return (uint64_t)lb * c->fs.g.block_size;
	}
}

errcode_t quota_begin(struct pop_ctx *c, int write_pass)
{
	struct pop_quota *pq = &c->quota;
	errcode_t err = 0;
	int t;

	quota_free(c);
	pq->write_pass = write_pass;
	for (t = QT_USR; !err && t < QT_NTYPES; t++) {
		pq->on[t] = image_quota_on(c->img, t);
		if (!pq->on[t])
			continue;
		err = image_read_quota(c->img, &c->fs, t, &pq->t[t], &pq->f[t]);
		if (err)
			pq->on[t] = 0;	/* image_read_quota freed what it had */
		else
			pq->room[t] = mapped_room(c, &pq->f[t]);
		/* the first pass only counts the blocks the files grow by */
		if (!err && !write_pass)
			ifile_release(&c->fs, &pq->f[t]);
	}
	if (err) {
		quota_free(c);
		return pop_fail_at(c, err, "reading the quota files of",
				   c->o->image);
	}
	return 0;
}

/*
 * ext4_quota_write of the blocks the tree grew by (get_free_dqblk writes
 * each at the file's end at once): a block of the file not mapped yet is
 * mapped as a one-block write of a regular file (ext4_bread with
 * EXT4_GET_BLOCKS_CREATE: mballoc's data request, the locality group's
 * preallocation while the file is small), then and there, between the
 * data blocks of the files before and after the chown.
 */
static errcode_t grow(struct pop_ctx *c, int t)
{
	struct pop_quota *pq = &c->quota;
	uint64_t end = (uint64_t)qtree_blocks(&pq->t[t]) << QT_BLKSIZE_BITS;
	uint32_t bs = c->fs.g.block_size;
	fsblk_t phys;
	errcode_t err;

	for (; pq->room[t] < end; pq->room[t] += bs) {
		if (!pq->write_pass) {
			c->scan.need_blocks++;
			continue;
		}
		/* i_size where the writes before this one left it */
		pq->f[t].mb.i_size = pq->room[t];
		err = bmap_get_block(&c->fs, &pq->f[t], 1,
				     (uint32_t)(pq->room[t] / bs), &phys);
		if (err)
			return err;
	}
	return 0;
}

/* dqget of (@t, @id): the entry, made if the tree has none (and the
 * write pass remembers it, to be checked at the commit). */
static errcode_t dqget(struct pop_ctx *c, int t, uint32_t id, uint32_t *off)
{
	struct pop_quota *pq = &c->quota;
	errcode_t err = qtree_find(&pq->t[t], id, off);

	if (err || *off)
		return err;
	if (pq->write_pass) {
		if (grow_array(&pq->made, &pq->made_cap, pq->nmade + 1,
			       sizeof(*pq->made), 16))
			return ENOMEM;
		pq->made[pq->nmade].type = (uint32_t)t;
		pq->made[pq->nmade++].id = id;
	}
	err = qtree_insert(&pq->t[t], id, off);
	return err ? err : grow(c, t);
}

/* The dquots of the ids @id of the first @ntypes types, in the order
 * of the quota types (__dquot_initialize's and dquot_transfer's). */
static errcode_t dqget_owners(struct pop_ctx *c, const uint32_t *id,
			      int ntypes, const char *path)
{
	uint32_t off;
	errcode_t err = 0;
	int t;

	for (t = QT_USR; !err && t < ntypes; t++)
		if (c->quota.on[t])
			err = dqget(c, t, id[t], &off);
	return err ? pop_fail(c, err, "charging the owners of", path) : 0;
}

errcode_t quota_new_inode(struct pop_ctx *c, const struct src_entry *e,
			  uint32_t gid, uint32_t projid)
{
	/* i_projid is set before dquot_initialize */
	uint32_t id[QT_NTYPES] = { 0, gid, projid };

	return dqget_owners(c, id, QT_NTYPES, e->path);
}

errcode_t quota_chown(struct pop_ctx *c, const struct src_entry *e)
{
	/* as dquot_transfer takes them: a chown moves no project */
	uint32_t id[QT_NTYPES] = { (uint32_t)e->st.st_uid,
				   (uint32_t)e->st.st_gid, 0 };

	return dqget_owners(c, id, QT_PRJ, e->path);
}

uint32_t quota_new_projid(const struct pop_ctx *c, const struct frame *p)
{
	/* __ext4_new_inode: the parent's under PROJINHERIT on a project
	 * image, else EXT4_DEF_PROJID */
	if (!(p->flags & EXT4_PROJINHERIT_FL))
		return 0;
	return image_inode_projid(c->img, &p->inode);
}

static errcode_t released(struct pop_ctx *c, int t, uint32_t id)
{
	char what[64];

	snprintf(what, sizeof(what), "charging %s %u in",
		 t == QT_USR ? "user" : t == QT_GRP ? "group" : "project", id);
	return pop_fail_at(c, ORLOV_ERR_QUOTA_RELEASE, what, c->o->image);
}

errcode_t quota_commit(struct pop_ctx *c)
{
	size_t n, i;
	const struct quota_charge *ch = image_quota_charges(c->img, &n);
	uint64_t inodes, space;
	uint32_t off;
	errcode_t err = 0;
	int t;

	for (i = 0; !err && i < n; i++) {
		struct qtree *q = &c->quota.t[ch[i].type];

		if (!c->quota.on[ch[i].type] ||
		    (!ch[i].inodes && !ch[i].space))
			continue;
		/* every owner got its entry at its chown; one only an old
		 * inode had is in the tree already */
		err = dqget(c, (int)ch[i].type, ch[i].id, &off);
		if (err)
			break;
		qtree_usage(q, off, &inodes, &space);
		inodes += (uint64_t)ch[i].inodes;
		space += (uint64_t)ch[i].space;
		/* a directory merged into, chowned away from an owner that
		 * had only it: the released dquot's entry goes (at once on
		 * 6.1, from a work item on 6.12), which is not modelled */
		if (!inodes && !space && !qtree_has_limits(q, off))
			return released(c, (int)ch[i].type, ch[i].id);
		qtree_set_usage(q, off, ch[i].id, inodes, space);
	}
	/* an entry made for an id only a new inode had at its creation (a
	 * setgid directory's group it was chowned away from) goes too */
	for (i = 0; !err && i < c->quota.nmade; i++) {
		struct qtree *q = &c->quota.t[c->quota.made[i].type];

		err = qtree_find(q, c->quota.made[i].id, &off);
		if (err)
			break;
		qtree_usage(q, off, &inodes, &space);
		if (!inodes && !space && !qtree_has_limits(q, off))
			return released(c, (int)c->quota.made[i].type,
					c->quota.made[i].id);
	}
	for (t = QT_USR; !err && t < QT_NTYPES; t++) {
		if (!c->quota.on[t])
			continue;
		/* the quota inode's preallocation goes at the unmount
		 * (ext4_discard_preallocations at its eviction) */
		ext4_discard_preallocations(&c->fs, &c->quota.f[t].mb);
		err = image_write_quota(c->img, &c->fs, t, &c->quota.t[t],
					&c->quota.f[t]);
	}
	return err ? pop_fail_at(c, err, "writing the quota files of",
				 c->o->image) : 0;
}

void quota_free(struct pop_ctx *c)
{
	int t;

	for (t = 0; t < QT_NTYPES; t++) {
		qtree_free(&c->quota.t[t]);
		if (c->quota.on[t] && c->quota.write_pass)
			ifile_release(&c->fs, &c->quota.f[t]);
	}
	free(c->quota.made);
	memset(&c->quota, 0, sizeof(c->quota));
}
