/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a source entry's metadata becomes in the image: owners (--all-root,
 * --uid-map, --gid-map) and times (SOURCE_DATE_EPOCH clamps them).  Both
 * programs apply the same rules, so orlov-layout verify compares an image
 * with the source as the writer saw it.
 */
#ifndef ORLOV_META_H
#define ORLOV_META_H

#include <stdint.h>
#include <sys/stat.h>
#include <et/com_err.h>

struct fsconfig;

/* One range of IDs: [from, from + count) becomes [to, to + count). */
struct id_range {
	uint32_t from, to, count;
};

struct id_map {
	struct id_range *r;
	size_t n;
};

struct meta_rules {
	int all_root;		/* every owner and group 0 */
	struct id_map uid, gid;
	int has_epoch;		/* SOURCE_DATE_EPOCH was set */
	uint32_t epoch;
	int squash_perms;	/* --squash-perms: group and other bits off */
	const char *file_contexts;	/* --file-contexts FILE (selabel.h), */
	const char *label_root;		/* looked up below this image path */
	const struct fsconfig *fs_config;	/* --fs-config (fsconfig.h) */
};

/* Add "FROM:TO[:COUNT][,FROM:TO[:COUNT]...]" to @m. */
errcode_t id_map_parse(struct id_map *m, const char *arg);
uint32_t id_map_apply(const struct id_map *m, uint32_t id);
/* "UID:GID" (--root-owner): decimal numbers. */
errcode_t meta_owner_parse(const char *arg, uint32_t *uid, uint32_t *gid);
void id_map_free(struct id_map *m);

/* SOURCE_DATE_EPOCH from the environment: none, or seconds since 1970
 * that ext2's 32-bit times can hold.  ORLOV_ERR_USAGE when malformed. */
errcode_t meta_epoch_from_env(struct meta_rules *r);

/* A time of @st later than the epoch becomes the epoch (nanoseconds 0);
 * owners are mapped.  Where the mapping changes the owner or the group of
 * anything but a directory, the set-ID bits go as chown(2) takes them:
 * set-user-ID, and set-group-ID with group exec; returns those cleared
 * (0: none), for the caller to tell. */
mode_t meta_apply(const struct meta_rules *r, struct stat *st);
void meta_clamp_time(const struct meta_rules *r, struct timespec *ts);

/*
 * The seconds an inode holds, as the kernel sets s_time_min and
 * s_time_max: 32-bit signed seconds (1901 to 2038) without the extra time
 * fields (@extra 0: 128-byte inodes), 34 bits from 1901 (to 2446) with
 * them.
 */
void meta_time_range(int extra, int64_t *min, int64_t *max);
/* @ts brought into [@min, @max] as the kernel's timestamp_truncate does:
 * clamped, its nanoseconds 0 at either end. */
void meta_fit_time(struct timespec *ts, int64_t min, int64_t max);
/* 0 when the epoch (if any) is a time inodes with(out) @extra fields
 * hold, else ORLOV_ERR_EPOCH_RANGE. */
errcode_t meta_epoch_fits(const struct meta_rules *r, int extra);

void meta_rules_free(struct meta_rules *r);

#endif
