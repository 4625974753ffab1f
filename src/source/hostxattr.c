// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "source/hostxattr.h"
#include "lib/util.h"

static ssize_t x_list(int fd, const char *path, char *buf, size_t n)
{
	return fd >= 0 ? flistxattr(fd, buf, n) : llistxattr(path, buf, n);
}

static ssize_t x_get(int fd, const char *path, const char *name, void *buf,
		     size_t n)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, n) :
			 lgetxattr(path, name, buf, n);
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct src_xattr *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The names, NUL-separated, in *list (*len bytes; 0 and NULL: none). */
static errcode_t read_names(int fd, const char *path, char **list,
			    ssize_t *len)
{
	*list = NULL;
	*len = 0;
	for (;;) {
		ssize_t n = x_list(fd, path, NULL, 0);

		if (n <= 0) {
			if (n < 0 && errno != ENOTSUP && errno != ENODATA)
				return (errcode_t)errno;
			return 0;
		}
		*list = malloc((size_t)n);
		if (!*list)
			return ENOMEM;
		*len = x_list(fd, path, *list, (size_t)n);
		if (*len >= 0)
			return 0;
		free(*list);
		*list = NULL;
		*len = 0;
		/* the list grew since the size was asked: again */
		if (errno != ERANGE)
			return (errcode_t)errno;
	}
}

static errcode_t read_value(int fd, const char *path, struct src_xattr *x)
{
	for (;;) {
		ssize_t n = x_get(fd, path, x->name, NULL, 0);

		if (n < 0)
			return (errcode_t)errno;
		x->value = malloc(n ? (size_t)n : 1);
		if (!x->value)
			return ENOMEM;
		n = x_get(fd, path, x->name, x->value, (size_t)n);
		if (n >= 0) {
			x->size = (size_t)n;
			return 0;
		}
		free(x->value);
		x->value = NULL;
		/* the value grew since its size was asked: again */
		if (errno != ERANGE)
			return (errcode_t)errno;
	}
}

errcode_t host_xattrs_read(int fd, const char *path, struct src_xattr **out,
			   size_t *n)
{
	struct src_xattr *a = NULL;
	size_t cap = 0, k = 0;
	char *list, *p;
	ssize_t len;
	errcode_t err = read_names(fd, path, &list, &len);

	for (p = list; !err && p < list + len; p += strlen(p) + 1) {
		if (grow_array(&a, &cap, k + 1, sizeof(*a), 8)) {
			err = ENOMEM;
			break;
		}
		memset(&a[k], 0, sizeof(*a));
		a[k].name = strdup(p);
		if (!a[k].name) {
			err = ENOMEM;
			break;
		}
		err = read_value(fd, path, &a[k++]);
	}
	free(list);
	if (err) {
		host_xattrs_free(a, k);
		return err;
	}
	if (k > 1)
		qsort(a, k, sizeof(*a), xattr_cmp);
	*out = a;
	*n = k;
	return 0;
}

void host_xattrs_free(struct src_xattr *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(x[i].name);
		free(x[i].value);
	}
	free(x);
}
