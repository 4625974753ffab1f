// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/spill.h"
#include "lib/util.h"

const char *spill_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

errcode_t spill_open(int *fd, const char *what)
{
	char *tpl;
	errcode_t err = 0;
	int f;

	if (asprintf(&tpl, "%s/orlov-%s-XXXXXX", spill_dir(), what) < 0)
		return ENOMEM;
	f = mkostemp(tpl, O_CLOEXEC);
	if (f < 0)
		err = (errcode_t)errno;
	else if (unlink(tpl)) {
		err = (errcode_t)errno;
		close(f);
	} else
		*fd = f;
	free(tpl);
	return err;
}

errcode_t spill_read(int fd, void *buf, size_t len, uint64_t off)
{
	return pread_all(fd, buf, len, off, EIO);
}

errcode_t spill_write(int fd, const void *buf, size_t len, uint64_t off)
{
	return pwrite_all(fd, buf, len, (off_t)off);
}

errcode_t spill_error(struct errctx *ec, errcode_t err, const char *doing)
{
	char what[64];

	if (!err || errctx_isset(ec))
		return err;	/* the first error is the one told */
	snprintf(what, sizeof(what), "%s the scratch file in", doing);
	errctx_set(ec, err, what, spill_dir());
	errctx_add(ec, " (TMPDIR)");
	return err;
}
