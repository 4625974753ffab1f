// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <string.h>

#include "populate/quota.h"
#include "populate/report.h"
#include "lib/orlov_err.h"

errcode_t quota_begin(struct pop_ctx *c)
{
	errcode_t err = 0;
	int t;

	quota_free(&c->quota);
	for (t = QT_USR; !err && t <= QT_GRP; t++) {
		c->quota.on[t] = image_quota_on(c->img, t);
		if (c->quota.on[t])
			err = image_read_quota(c->img, t, &c->quota.t[t],
					       &c->quota.room[t]);
	}
	if (err) {
		quota_free(&c->quota);
		return pop_fail_at(c, err, "reading the quota files of",
				   c->o->image);
	}
	return 0;
}

/* dqget of (@t, @id): the entry, made if the tree has none. */
static errcode_t dqget(struct pop_ctx *c, int t, uint32_t id, uint32_t *off)
{
	struct qtree *q = &c->quota.t[t];
	errcode_t err = qtree_find(q, id, off);

	if (err || *off)
		return err;
	err = qtree_insert(q, id, off);
	/* ext4_quota_write would map a new block of the quota file here,
	 * in the middle of the data's allocation: not modelled */
	if (!err && (uint64_t)qtree_blocks(q) << QT_BLKSIZE_BITS >
		    c->quota.room[t])
		err = ORLOV_ERR_QUOTA_GROWS;
	return err;
}

errcode_t quota_chown(struct pop_ctx *c, const struct src_entry *e)
{
	uint32_t id[2] = { (uint32_t)e->st.st_uid, (uint32_t)e->st.st_gid };
	uint32_t off;
	errcode_t err = 0;
	int t;

	/* user first, then group, as dquot_transfer takes them */
	for (t = QT_USR; !err && t <= QT_GRP; t++)
		if (c->quota.on[t])
			err = dqget(c, t, id[t], &off);
	return err ? pop_fail(c, err, "charging the owners of", e->path) : 0;
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
		/* an owner only the staged inodes' old selves had: the
		 * tree has it already, as its usage did */
		err = dqget(c, (int)ch[i].type, ch[i].id, &off);
		if (err)
			break;
		qtree_usage(q, off, &inodes, &space);
		qtree_set_usage(q, off, ch[i].id,
				inodes + (uint64_t)ch[i].inodes,
				space + (uint64_t)ch[i].space);
	}
	for (t = QT_USR; !err && t <= QT_GRP; t++)
		if (c->quota.on[t])
			err = image_write_quota(c->img, t, &c->quota.t[t]);
	return err ? pop_fail_at(c, err, "writing the quota files of",
				 c->o->image) : 0;
}

void quota_free(struct pop_quota *q)
{
	int t;

	for (t = 0; t < QT_NTYPES; t++)
		qtree_free(&q->t[t]);
	memset(q, 0, sizeof(*q));
}
