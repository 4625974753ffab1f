// SPDX-License-Identifier: GPL-2.0-or-later
/* --file-contexts: the security.selinux label of each entry (selabel.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#ifdef HAVE_SELINUX
#include <pthread.h>
#include <stdarg.h>
#include <selinux/label.h>
#include <selinux/selinux.h>
#endif

#include "source/selabel.h"
#include "lib/orlov_err.h"

static const char label_name[] = "security.selinux";

errcode_t selabel_check_file(const char *file)
{
	struct stat st;
	errcode_t err = 0;
	/* O_NONBLOCK: a FIFO given by mistake must not hang the open */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return (errcode_t)errno;
	if (fstat(fd, &st))
		err = (errcode_t)errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = ORLOV_ERR_USAGE;
	close(fd);
	return err;
}

#ifdef HAVE_SELINUX
/* libselinux logs through one callback for the whole process, without a
 * cookie: while a file is read the callback is ours, collecting into
 * log_sink, and the caller's own is put back after.  The lock keeps two
 * threads of a library caller from swapping each other's.  The sink is
 * the reading thread's own (thread-local): a message another thread's
 * libselinux logs meanwhile reaches our callback too, and is dropped
 * rather than written into this run's message, or read through a sink
 * just set back to NULL. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct strbuf *log_sink;

static int __attribute__((format(printf, 2, 3)))
collect_log(int type, const char *fmt, ...)
{
	struct strbuf line = { 0 };
	va_list ap;

	if (!log_sink || (type != SELINUX_ERROR && type != SELINUX_WARNING))
		return 0;
	va_start(ap, fmt);
	sb_vprintf(&line, fmt, ap);
	va_end(ap);
	/* libselinux says some things twice in one open: kept once */
	if (line.s && (!log_sink->s || !strstr(log_sink->s, line.s)))
		sb_append(log_sink, line.s, line.len);
	sb_free(&line);
	return 0;
}

int selabel_supported(void)
{
	return 1;
}

errcode_t selabel_start(struct selabel *l, const char *file, const char *root)
{
	/* no SELABEL_OPT_VALIDATE: the host's policy, if any, is not the
	 * image's, as with setfiles -c absent */
	struct selinux_opt opt[] = { { SELABEL_OPT_PATH, file } };
	union selinux_callback old, cb;
	errcode_t err;

	memset(l, 0, sizeof(*l));
	l->root = root;
	err = selabel_check_file(file);
	if (err)
		return err == ORLOV_ERR_USAGE ? EINVAL : err;
	pthread_mutex_lock(&log_lock);
	old = selinux_get_callback(SELINUX_CB_LOG);
	cb.func_log = collect_log;
	log_sink = &l->log;
	selinux_set_callback(SELINUX_CB_LOG, cb);
	errno = 0;
	l->handle = selabel_open(SELABEL_CTX_FILE, opt, 1);
	err = l->handle ? 0 : errno ? (errcode_t)errno : EINVAL;
	selinux_set_callback(SELINUX_CB_LOG, old);
	log_sink = NULL;
	pthread_mutex_unlock(&log_lock);
	return err;
}

/* The context of @path, NULL where the file says <<none>> or nothing
 * matches (selabel_lookup's ENOENT).  Raw, as setfiles stores it: no
 * mcstrans translation. */
static errcode_t lookup(struct selabel *l, mode_t mode)
{
	free(l->ctx);
	l->ctx = NULL;
	if (!selabel_lookup_raw(l->handle, &l->ctx, l->path.s, (int)mode))
		return 0;
	l->ctx = NULL;
	return errno == ENOENT ? 0 : errno ? (errcode_t)errno : EINVAL;
}

void selabel_end(struct selabel *l)
{
	if (l->handle)
		selabel_close(l->handle);
	free(l->ctx);
	free(l->x);
	sb_free(&l->path);
	sb_free(&l->log);
	memset(l, 0, sizeof(*l));
}
#else
int selabel_supported(void)
{
	return 0;
}

errcode_t selabel_start(struct selabel *l, const char *file, const char *root)
{
	memset(l, 0, sizeof(*l));
	return ENOTSUP;
}

static errcode_t lookup(struct selabel *l, mode_t mode)
{
	return ENOTSUP;
}

void selabel_end(struct selabel *l)
{
	free(l->x);
	sb_free(&l->path);
	sb_free(&l->log);
	memset(l, 0, sizeof(*l));
}
#endif

errcode_t selabel_try(const char *file, struct strbuf *why)
{
	struct selabel l;
	errcode_t err = selabel_check_file(file);
	size_t flen = strlen(file), len;
	const char *s, *nl;

	if (err)
		return err;
	err = selabel_start(&l, file, "/");
	for (s = err ? l.log.s : NULL; s && *s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		len = nl ? (size_t)(nl - s) : strlen(s);
		/* libselinux starts its lines with the file's name: the
		 * caller's message names it, once */
		if (len > flen && !strncmp(s, file, flen) && s[flen] == ':') {
			s += flen + 1;
			len -= flen + 1;
		}
		while (len && (*s == ' ' || *s == '\t'))
			s++, len--;
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len && why->len)
			sb_append(why, " ", 1);
		sb_append(why, s, len);
	}
	selabel_end(&l);
	return err;
}

/* The image path of @rel: the root's path, then @rel below it. */
static errcode_t image_path(struct selabel *l, const char *rel)
{
	size_t rlen = strlen(l->root);
	errcode_t err;

	sb_truncate(&l->path, 0);
	err = sb_append(&l->path, l->root, rlen);
	if (!err && *rel && (!rlen || l->root[rlen - 1] != '/'))
		err = sb_append(&l->path, "/", 1);
	if (!err)
		err = sb_append(&l->path, rel, strlen(rel));
	return err;
}

errcode_t selabel_apply(struct selabel *l, const char *rel, mode_t mode,
			const struct src_xattr *in, size_t nin,
			struct src_xattr **out, size_t *nout)
{
	errcode_t err = image_path(l, rel);
	size_t i, n = 0;

	if (!err)
		err = lookup(l, mode);
	if (err)
		return err;
	if (grow_array(&l->x, &l->cap, nin + 1, sizeof(*l->x), 8))
		return ENOMEM;
	/* the source's own label is the host's, not the image's */
	for (i = 0; i < nin; i++)
		if (strcmp(in[i].name, label_name))
			l->x[n++] = in[i];
	if (l->ctx) {
		/* NUL included, as the kernel's security hooks store it */
		l->x[n].name = (char *)label_name;
		l->x[n].value = (unsigned char *)l->ctx;
		l->x[n++].size = strlen(l->ctx) + 1;
	}
	*out = l->x;
	*nout = n;
	return 0;
}
