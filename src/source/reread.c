// SPDX-License-Identifier: GPL-2.0-or-later
/* A file's data read again by its note (reread.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "source/reread.h"
#include "source/source.h"
#include "source/tar.h"
#include "lib/orlov_err.h"

errcode_t src_note(const struct src_entry *e, struct strbuf *note)
{
	sb_truncate(note, 0);
	if (!e->data || !e->data->note)
		return ENOTSUP;
	return e->data->note(e, note);
}

void src_reread_init(struct src_reread *r, const struct source *src)
{
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->root = -1;
	r->dir = -1;
	r->fd = -1;
}

/* The directory @path's file @path + @dlen + 1 is in: opened below the
 * source root once for all of its files (a symlink on the way is no
 * matter: the file itself must be the one the walk saw). */
static errcode_t open_dir(struct src_reread *r, const char *path, size_t dlen)
{
	errcode_t err;

	if (r->dir >= 0 && r->dir_path.len == dlen &&
	    !memcmp(r->dir_path.s, path, dlen))
		return 0;
	if (r->dir >= 0)
		close(r->dir);
	r->dir = -1;
	sb_truncate(&r->dir_path, 0);
	err = sb_append(&r->dir_path, path, dlen);
	if (err)
		return err;
	r->dir = openat(r->root, r->dir_path.s,
			O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dir < 0)
		return errno == ENOENT || errno == ENOTDIR ?
		       ORLOV_ERR_SOURCE_CHANGED : (errcode_t)errno;
	return 0;
}

/* The host file @id names at @path below the source root, as the walk
 * saw it (walk_open_unchanged): a file written since then has another
 * ctime. */
static errcode_t open_host(struct src_reread *r, const struct src_note_id *id,
			   const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct stat st;
	errcode_t err;
	int at;

	memset(&st, 0, sizeof(st));
	st.st_dev = (dev_t)id->dev;
	st.st_ino = (ino_t)id->ino;
	st.st_mode = S_IFREG;
	st.st_size = (off_t)id->size;
	st.st_mtim.tv_sec = (time_t)id->mtime;
	st.st_mtim.tv_nsec = (long)id->mtime_ns;
	st.st_ctim.tv_sec = (time_t)id->ctime;
	st.st_ctim.tv_nsec = (long)id->ctime_ns;

	if (r->root < 0) {
		r->root = open(r->src->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->root < 0)
			return (errcode_t)errno;
	}
	at = r->root;
	if (slash) {
		err = open_dir(r, path, (size_t)(slash - path));
		if (err)
			return err;
		at = r->dir;
	}
	err = walk_open_unchanged(at, name, &st, &r->fd);
	/* gone since the walk saw it */
	return err == ENOENT ? ORLOV_ERR_SOURCE_CHANGED : err;
}

/* @note made current: its path kept for messages, its file opened. */
static errcode_t switch_to(struct src_reread *r, const void *note, size_t nlen,
			   struct src_note_id *id)
{
	const char *path = (const char *)note + sizeof(*id);
	size_t plen = nlen - sizeof(*id);
	errcode_t err;

	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	sb_truncate(&r->cur, 0);
	sb_truncate(&r->path, 0);
	err = sb_append(&r->path, path, plen);
	if (err)
		return err;
	if (memchr(path, 0, plen))
		return EINVAL;
	if (!r->src->tar)
		err = open_host(r, id, r->path.s);
	/* remembered only once open: a failure is retried, not taken for
	 * this file's descriptor */
	return err ? err : sb_append(&r->cur, note, nlen);
}

errcode_t src_reread(struct src_reread *r, const void *note, size_t nlen,
		     void *buf, size_t len, uint64_t off)
{
	struct src_note_id id;
	size_t have = len;
	errcode_t err;

	if (nlen <= sizeof(id))
		return EINVAL;
	memcpy(&id, note, sizeof(id));
	if (r->cur.len != nlen || memcmp(r->cur.s, note, nlen)) {
		err = switch_to(r, note, nlen, &id);
		if (err)
			return err;
	}
	if (off >= id.size)
		have = 0;
	else if (id.size - off < len)
		have = (size_t)(id.size - off);
	memset((unsigned char *)buf + have, 0, len - have);
	if (!have)
		return 0;
	if (r->src->tar)
		return tar_reread(r->src->tar, id.ino, buf, have, off);
	return pread_all(r->fd, buf, have, off, ORLOV_ERR_SOURCE_CHANGED);
}

void src_reread_end(struct src_reread *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->dir >= 0)
		close(r->dir);
	if (r->root >= 0)
		close(r->root);
	sb_free(&r->cur);
	sb_free(&r->path);
	sb_free(&r->dir_path);
	r->fd = r->root = r->dir = -1;
}
