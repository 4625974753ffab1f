// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "source/meta.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

static errcode_t parse_id(const char **p, char stop, uint32_t *out)
{
	const char *s = *p, *end = strchr(s, stop);
	char buf[16];
	uint64_t v;
	size_t n;

	if (!end)
		end = s + strlen(s);
	n = (size_t)(end - s);
	if (n == 0 || n >= sizeof(buf))
		return ORLOV_ERR_USAGE;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (parse_u64(buf, UINT32_MAX, &v))
		return ORLOV_ERR_USAGE;
	*out = (uint32_t)v;
	*p = *end ? end + 1 : end;
	return 0;
}

errcode_t meta_owner_parse(const char *arg, uint32_t *uid, uint32_t *gid)
{
	const char *p = arg;

	if (strchr(arg, ',') || !strchr(arg, ':') || parse_id(&p, ':', uid) ||
	    parse_id(&p, ',', gid) || *p)
		return ORLOV_ERR_USAGE;
	return 0;
}

errcode_t id_map_parse(struct id_map *m, const char *arg)
{
	const char *p = arg;

	while (*p) {
		struct id_range r = { 0, 0, 1 };
		const char *comma = strchr(p, ','), *colon2;
		size_t cap = m->n;

		if (parse_id(&p, ':', &r.from))
			return ORLOV_ERR_USAGE;
		colon2 = strchr(p, ':');
		if (colon2 && (!comma || colon2 < comma)) {
			if (parse_id(&p, ':', &r.to) || parse_id(&p, ',', &r.count) ||
			    r.count == 0)
				return ORLOV_ERR_USAGE;
		} else if (parse_id(&p, ',', &r.to)) {
			return ORLOV_ERR_USAGE;
		}
		if ((uint64_t)r.from + r.count - 1 > UINT32_MAX ||
		    (uint64_t)r.to + r.count - 1 > UINT32_MAX)
			return ORLOV_ERR_USAGE;
		if (grow_array(&m->r, &cap, m->n + 1, sizeof(*m->r), 4))
			return ENOMEM;
		m->r[m->n++] = r;
		if (p > arg && p[-1] == ',' && !*p)
			return ORLOV_ERR_USAGE;	/* a trailing comma */
	}
	return m->n ? 0 : ORLOV_ERR_USAGE;
}

/* The first range that holds @id wins: a later, overlapping one is for
 * the IDs the earlier ones leave. */
uint32_t id_map_apply(const struct id_map *m, uint32_t id)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (id >= m->r[i].from && id - m->r[i].from < m->r[i].count)
			return m->r[i].to + (id - m->r[i].from);
	return id;
}

void id_map_free(struct id_map *m)
{
	free(m->r);
	m->r = NULL;
	m->n = 0;
}

errcode_t meta_epoch_from_env(struct meta_rules *r)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	uint64_t v;

	r->has_epoch = 0;
	if (!s)
		return 0;
	/* ext2 without extra inode fields stores 32-bit seconds */
	if (parse_u64(s, UINT32_MAX, &v))
		return ORLOV_ERR_USAGE;
	r->has_epoch = 1;
	r->epoch = (uint32_t)v;
	return 0;
}

void meta_clamp_time(const struct meta_rules *r, struct timespec *ts)
{
	if (r->has_epoch && (ts->tv_sec > (time_t)r->epoch ||
			     (ts->tv_sec == (time_t)r->epoch && ts->tv_nsec))) {
		ts->tv_sec = (time_t)r->epoch;
		ts->tv_nsec = 0;
	}
}

/* What chown(2) clears on a change of owner or group: the kernel's
 * setattr_should_drop_suidgid(), without which a mapping to 0 would make
 * another user's set-user-ID program a set-user-ID-root one. */
static mode_t setid_dropped(mode_t mode)
{
	mode_t drop = mode & S_ISUID;

	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		drop |= S_ISGID;
	return S_ISDIR(mode) ? 0 : drop;
}

mode_t meta_apply(const struct meta_rules *r, struct stat *st)
{
	uid_t uid = st->st_uid;
	gid_t gid = st->st_gid;
	mode_t drop = 0;

	if (r->all_root) {
		st->st_uid = 0;
		st->st_gid = 0;
	} else {
		st->st_uid = id_map_apply(&r->uid, st->st_uid);
		st->st_gid = id_map_apply(&r->gid, st->st_gid);
	}
	if (st->st_uid != uid || st->st_gid != gid) {
		drop = setid_dropped(st->st_mode);
		st->st_mode &= ~drop;
	}
	/* genext2fs -P: as if made under umask 077; a symlink keeps the
	 * 0777 every symlink the kernel makes has */
	if (r->squash_perms && !S_ISLNK(st->st_mode))
		st->st_mode &= ~(mode_t)(S_IRWXG | S_IRWXO);
	meta_clamp_time(r, &st->st_atim);
	meta_clamp_time(r, &st->st_mtim);
	meta_clamp_time(r, &st->st_ctim);
	return drop;
}

void meta_time_range(int extra, int64_t *min, int64_t *max)
{
	*min = INT32_MIN;
	*max = extra ? INT32_MIN + ((int64_t)1 << 34) - 1 : INT32_MAX;
}

void meta_fit_time(struct timespec *ts, int64_t min, int64_t max)
{
	/* a time beyond the fields would wrap: 2100 would read as 1963 */
	if ((int64_t)ts->tv_sec <= min || (int64_t)ts->tv_sec >= max) {
		ts->tv_sec = (time_t)((int64_t)ts->tv_sec <= min ? min : max);
		ts->tv_nsec = 0;
	}
}

errcode_t meta_epoch_fits(const struct meta_rules *r, int extra)
{
	int64_t min, max;

	meta_time_range(extra, &min, &max);
	return r->has_epoch && (int64_t)r->epoch > max ?
	       ORLOV_ERR_EPOCH_RANGE : 0;
}

void meta_rules_free(struct meta_rules *r)
{
	id_map_free(&r->uid);
	id_map_free(&r->gid);
}
