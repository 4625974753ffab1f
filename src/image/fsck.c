// SPDX-License-Identifier: GPL-2.0-or-later
/* The installed e2fsck, run on IMAGE before anything is written. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "image/image.h"
#include "lib/program.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/*
 * e2fsck -fn, before anything is written: the judge of what is damage.
 * Writing on top of damage e2fsck would repair makes the repair lose more
 * (a block a wrong bitmap shows free is handed to a new file).  PATH may
 * lack /usr/sbin for a user who is not root.
 */
errcode_t image_fsck(const char *path, const struct image_region *region)
{
	static const char *const progs[] = { "e2fsck", "/usr/sbin/e2fsck",
					      "/sbin/e2fsck" };
	/* at an offset: PATH?offset=N, which e2fsck hands to libext2fs */
	char *name = image_region_name(path, region);
	char *argv[] = { (char *)"e2fsck", (char *)"-fn", name, NULL };
	extern char **environ;
	errcode_t err;
	int status;

	if (!name)
		return ENOMEM;
	err = run_program(progs, 3, argv, environ, 1, NULL, &status);
	free(name);
	if (err == ENOENT)
		return ORLOV_ERR_NO_FSCK;
	if (err)
		return err;
	if (status == 0)
		return 0;
	/* 4: errors left uncorrected (all -n does); 8 and up: it could not
	 * check, or it crashed on what it read */
	return status < 8 ? ORLOV_ERR_DAMAGED : ORLOV_ERR_FSCK_FAILED;
}
