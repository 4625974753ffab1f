// SPDX-License-Identifier: GPL-2.0-or-later
/* For tests/t-layout-source.sh (LD_PRELOAD): the attribute XATTRGROW_NAME
 * grows to XATTRGROW_VALUE right after the first getxattr that asks for
 * its size (a NULL buffer), as another writer could make it do between
 * the size query and the read: the read with the size first given then
 * fails with ERANGE, and a reader must ask again. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>

static int done;

/* The first size query of our attribute: grow it now. */
static int ours(const char *name, size_t size)
{
	const char *n = getenv("XATTRGROW_NAME");

	if (done || size || !n || strcmp(name, n) || !getenv("XATTRGROW_VALUE"))
		return 0;
	done = 1;
	return 1;
}

static const char *grown(void)
{
	return getenv("XATTRGROW_VALUE");
}

ssize_t fgetxattr(int fd, const char *name, void *value, size_t size)
{
	ssize_t (*real)(int, const char *, void *, size_t) =
		(ssize_t (*)(int, const char *, void *, size_t))dlsym(RTLD_NEXT, "fgetxattr");
	ssize_t r = real(fd, name, value, size);

	if (r >= 0 && ours(name, size))
		fsetxattr(fd, name, grown(), strlen(grown()), XATTR_REPLACE);
	return r;
}

ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	ssize_t (*real)(const char *, const char *, void *, size_t) =
		(ssize_t (*)(const char *, const char *, void *, size_t))dlsym(RTLD_NEXT, "lgetxattr");
	ssize_t r = real(path, name, value, size);

	if (r >= 0 && ours(name, size))
		lsetxattr(path, name, grown(), strlen(grown()), XATTR_REPLACE);
	return r;
}

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	ssize_t (*real)(const char *, const char *, void *, size_t) =
		(ssize_t (*)(const char *, const char *, void *, size_t))dlsym(RTLD_NEXT, "getxattr");
	ssize_t r = real(path, name, value, size);

	if (r >= 0 && ours(name, size))
		setxattr(path, name, grown(), strlen(grown()), XATTR_REPLACE);
	return r;
}
