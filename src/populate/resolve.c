// SPDX-License-Identifier: GPL-2.0-or-later
/* The options checked and their defaults filled, once, with what was
 * chosen recorded (resolve.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "populate/resolve.h"
#include "populate/conflict.h"
#include "model/kver.h"
#include "lib/orlov_err.h"

errcode_t populate_resolve(struct populate_opts *o, const char **msg)
{
	const char *bad;

	/* the release first: which driver can be modelled depends on it */
	if (!o->kver) {
		o->kver = KVER_REF_6_1;
		o->kver_default = 1;
	}
	bad = options_conflict(o);
	if (bad) {
		*msg = bad;
		return ORLOV_ERR_USAGE;
	}
	/* --create's mke2fs: the run's clock and seed (the UUID's digest) */
	o->mkfs.has_epoch = o->meta.has_epoch;
	o->mkfs.epoch = o->meta.epoch;
	o->mkfs.seed = o->seed;
	return 0;
}

void populate_resolve_mount(struct populate_opts *o, int ext4, int delalloc,
			    struct populate_choice *ch)
{
	/* an option only the ext2 driver has keeps it */
	if (!o->driver_set)
		o->driver = (ext4 || (o->delalloc_set && o->delalloc)) &&
			    o->policy != POLICY_OLDALLOC &&
			    o->topdir != TOPDIR_RANDOM &&
			    kver_ext4_modelled(o->kver) ? DRIVER_EXT4 :
							  DRIVER_EXT2;
	if (!o->delalloc_set)
		o->delalloc = o->driver == DRIVER_EXT4 && delalloc;
	ch->known = 1;
	ch->driver = o->driver;
	ch->driver_given = o->driver_set;
	ch->delalloc = o->delalloc;
	ch->delalloc_given = o->delalloc_set;
	ch->kver = o->kver;
	ch->arm64 = o->arm64;
	ch->kver_given = !o->kver_default;
}

void populate_choice_text(const struct populate_choice *ch, char *buf,
			  size_t len)
{
	int ext4 = ch->driver == DRIVER_EXT4;

	snprintf(buf, len, "%s driver (%s), %s delayed allocation (%s), "
		 "Linux %u.%u.%u%s (%s)", ext4 ? "ext4" : "ext2",
		 ch->driver_given ? "given" : "the image's mount",
		 ch->delalloc ? "with" : "without",
		 ch->delalloc_given ? "given" : ext4 ? "the image's mount" :
		 "the ext2 driver has none",
		 (unsigned int)KVER_MAJOR(ch->kver),
		 (unsigned int)KVER_MINOR(ch->kver),
		 (unsigned int)KVER_PATCH(ch->kver), ch->arm64 ? "-arm64" : "",
		 ch->kver_given ? "given" : "the default");
}
