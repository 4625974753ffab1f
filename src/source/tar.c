// SPDX-License-Identifier: GPL-2.0-or-later
/* An archive, a directory layer or a stack of OCI layers loaded into one
 * tree (tar_tree.h), its members by tar_member.c, for tar_walk.c to walk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "source/tar.h"
#include "source/tar_tree.h"
#include "source/layers.h"
#include "lib/util.h"
#include "lib/spill.h"
#include "lib/orlov_err.h"

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>

int tar_supported(void)
{
	return 1;
}

/* A tree with only its root, and its spool (*scratch "creating" when
 * that fails). */
static errcode_t tree_new(struct tar_tree **out, const char **scratch)
{
	struct tar_tree *t = calloc(1, sizeof(*t));
	struct stat root;
	char *tpl = NULL;
	errcode_t err = 0;

	*out = NULL;
	if (!t)
		return ENOMEM;
	t->spool = -1;
	/* the root: the target directory, whatever the archive says */
	memset(&root, 0, sizeof(root));
	root.st_mode = S_IFDIR | 0755;
	err = name_tree_init(&t->names);
	if (!err && grow_array(&t->ino, &t->ino_cap, 1, sizeof(*t->ino), 256))
		err = ENOMEM;
	if (!err)
		err = tar_new_inode(t, &t->ino[0]);
	if (err) {
		tar_free(t);
		return err;
	}
	t->in[0].st = root;
	if (asprintf(&tpl, "%s/orlov-spool.XXXXXX", spill_dir()) < 0)
		err = ENOMEM;
	if (!err) {
		t->spool = mkostemp(tpl, O_CLOEXEC);
		if (t->spool < 0) {
			err = (errcode_t)errno;
			*scratch = "creating";
		} else
			unlink(tpl);
	}
	free(tpl);
	if (err)
		tar_free(t);
	else
		*out = t;
	return err;
}

/* Every member of the archive at @path into @t. */
static errcode_t read_archive(struct tar_tree *t, const char *path,
			      char **msg, char **where)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	struct stat dir;
	errcode_t err = 0;
	int r;

	/* a directory layer, read as an archive of it would be */
	if (t->ly && !stat(path, &dir) && S_ISDIR(dir.st_mode)) {
		if (a)
			archive_read_free(a);
		return tar_read_dir(t, path, msg, where);
	}
	if (!a)
		err = ENOMEM;
	if (!err) {
		archive_read_support_filter_all(a);
		/* not format_all: mtree would take any text file for a
		 * description of files that are not there */
		archive_read_support_format_tar(a);
		archive_read_support_format_gnutar(a);
		archive_read_support_format_cpio(a);
		archive_read_support_format_zip(a);
		archive_read_support_format_7zip(a);
		archive_read_support_format_iso9660(a);
		archive_read_support_format_empty(a);
		if (archive_read_open_filename(a, strcmp(path, "-") ? path : NULL,
					       1 << 16) != ARCHIVE_OK)
			err = ORLOV_ERR_ARCHIVE;
	}
	while (!err && (r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			err = ORLOV_ERR_ARCHIVE;
			break;
		}
		err = tar_add_member(a, t, ae, where);
	}
	if (err == ORLOV_ERR_ARCHIVE && a && archive_error_string(a))
		*msg = strdup(archive_error_string(a));
	if (a)
		archive_read_free(a);
	return err;
}

/* Names in creation order; link counts of directories as ext2's. */
static void tree_finish(struct tar_tree *t)
{
	size_t i;

	name_tree_sort(&t->names);
	for (i = 0; i < t->names.nn; i++) {
		const struct name_node *x = &t->names.n[i];

		if (S_ISDIR(tar_node_st(t, (uint32_t)i)->st_mode)) {
			size_t k, sub = 0;

			for (k = 0; k < x->nkids; k++)
				sub += S_ISDIR(tar_node_st(t, x->kids[k])->st_mode);
			t->in[t->ino[i]].st.st_nlink = (nlink_t)(2 + sub);
		}
	}
	for (i = 0; i < t->ni; i++)
		t->in[i].st.st_ino = (ino_t)(i + 1);
}

errcode_t tar_load(const char *path, struct tar_tree **out, char **msg,
		   char **where, const char **scratch)
{
	struct tar_tree *t;
	errcode_t err;

	*out = NULL;
	*msg = *where = NULL;
	*scratch = NULL;
	err = tree_new(&t, scratch);
	if (err)
		return err;
	err = read_archive(t, path, msg, where);
	if (err) {
		*scratch = t->spool_failed;
		tar_free(t);
		return err;
	}
	tree_finish(t);
	*out = t;
	return 0;
}

errcode_t tar_load_layers(const char *const *paths, size_t n,
			  struct tar_tree **out, char **msg, char **where,
			  size_t *failed, const char **scratch)
{
	struct tar_tree *t;
	errcode_t err;
	size_t i;

	*out = NULL;
	*msg = *where = NULL;
	*failed = 0;
	*scratch = NULL;
	if (n > LAYERS_MAX)
		return EOVERFLOW;
	err = tree_new(&t, scratch);
	if (err)
		return err;
	t->ly = calloc(1, sizeof(*t->ly));
	if (!t->ly)
		err = ENOMEM;
	for (i = 0; !err && i < n; i++) {
		t->ly->cur = (uint16_t)(i + 1);
		*failed = i;
		err = read_archive(t, paths[i], msg, where);
	}
	if (err) {
		*scratch = t->spool_failed;
		tar_free(t);
		return err;
	}
	/* the walk needs the final tree only */
	layers_compact(t);
	layers_free(t->ly);
	t->ly = NULL;
	tree_finish(t);
	*out = t;
	return 0;
}

void tar_free(struct tar_tree *t)
{
	size_t i;

	if (!t)
		return;
	name_tree_free(&t->names);
	layers_free(t->ly);
	for (i = 0; i < t->ni; i++)
		tar_inode_release(&t->in[i]);
	free(t->ino);
	free(t->in);
	if (t->spool >= 0)
		close(t->spool);
	free(t);
}

#else /* !HAVE_LIBARCHIVE */

int tar_supported(void)
{
	return 0;
}

errcode_t tar_load(const char *path, struct tar_tree **out, char **msg,
		   char **where, const char **scratch)
{
	(void)path;
	*out = NULL;
	*msg = *where = NULL;
	*scratch = NULL;
	return ORLOV_ERR_SOURCE_IS_ARCHIVE;
}

errcode_t tar_load_layers(const char *const *paths, size_t n,
			  struct tar_tree **out, char **msg, char **where,
			  size_t *failed, const char **scratch)
{
	(void)paths;
	(void)n;
	*out = NULL;
	*msg = *where = NULL;
	*failed = 0;
	*scratch = NULL;
	return ORLOV_ERR_SOURCE_IS_ARCHIVE;
}

void tar_free(struct tar_tree *t)
{
	(void)t;
}

#endif
