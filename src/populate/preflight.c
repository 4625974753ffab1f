// SPDX-License-Identifier: GPL-2.0-or-later
/* Before IMAGE is opened: what a mistaken command line most often means,
 * the outputs that must not clobber the inputs, SOURCE's archive and the
 * device table read. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "populate/preflight.h"
#include "populate/report.h"
#include "image/image_read.h"
#include "source/tar.h"
#include "lib/util.h"
#include "lib/spill.h"
#include "lib/orlov_err.h"

#ifndef SUPERBLOCK_OFFSET	/* ext2fs/ext2fs.h */
#define SUPERBLOCK_OFFSET 1024
#endif
/* where an image's superblock magic is */
#define SB_MAGIC (SUPERBLOCK_OFFSET + offsetof(struct ext2_super_block, s_magic))

/* IMAGE: one that does not exist points to --create; --create does not
 * overwrite data it does not recognise. */
static errcode_t check_image(const struct populate_opts *o)
{
	enum image_probe kind;
	struct stat ist;

	if (!o->create && stat(o->image, &ist) && errno == ENOENT)
		return ORLOV_ERR_NO_IMAGE;
	/* not "holds data": what it is (a partition's disk is a file) */
	if (o->create && !stat(o->image, &ist) && S_ISDIR(ist.st_mode))
		return EISDIR;
	if (o->create && !stat(o->image, &ist) && !S_ISREG(ist.st_mode) &&
	    !S_ISBLK(ist.st_mode))
		return ORLOV_ERR_IMAGE_KIND;
	/* mke2fs asks before it overwrites what it recognises; -F, which
	 * --create gives it, does not ask */
	if (o->create && !o->force && !o->where.partition && !o->where.offset &&
	    !image_probe(o->image, &kind) && kind == PROBE_OTHER)
		return ORLOV_ERR_CREATE_CLOBBER;
	return 0;
}

/* What a mistaken command line most often means, before anything is
 * written: the arguments swapped, an archive or a file given as SOURCE,
 * an image that does not exist (yet).  *missing is stat's errno for src
 * (a lone SOURCE's is the walker's to report, a layer's the caller's). */
static errcode_t check_args(const struct populate_opts *o, const char *src,
			    int *archive, int *missing)
{
	unsigned char head[SUPERBLOCK_OFFSET + 64];
	struct stat st, ist;
	enum image_probe kind;
	ssize_t n = 0;
	int fd;

	*archive = !strcmp(src, "-");
	*missing = !*archive && stat(src, &st) ? errno : 0;
	if (!*archive && !*missing && !S_ISDIR(st.st_mode)) {
		fd = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			n = pread(fd, head, sizeof(head), 0);
			close(fd);
		}
		if (n >= (ssize_t)(SB_MAGIC + 2) &&
		    get_le16(head + SB_MAGIC) == EXT2_SUPER_MAGIC &&
		    stat(o->image, &ist) == 0 && S_ISDIR(ist.st_mode))
			return ORLOV_ERR_SOURCE_IS_IMAGE;
		/* An image starts with 1 KiB of zeros, which libarchive
		 * reads as an empty tar: 0 entries, and with --create
		 * IMAGE (the real SOURCE) overwritten. */
		if (!image_probe(src, &kind)) {
			if (kind == PROBE_EXT)
				return ORLOV_ERR_SOURCE_IS_FS;
			if (kind == PROBE_EMPTY)
				return ORLOV_ERR_SOURCE_ZEROS;
		}
		/* anything else not a directory: libarchive says what it is */
		*archive = 1;
		if (tar_supported())
			return check_image(o);
		if ((n >= 262 && !memcmp(head + 257, "ustar", 5)) ||
		    (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) ||
		    (n >= 6 && !memcmp(head, "\xfd" "7zXZ", 5)) ||
		    (n >= 3 && !memcmp(head, "BZh", 3)) ||
		    (n >= 4 && !memcmp(head, "\x28\xb5\x2f\xfd", 4)) ||
		    (n >= 6 && !memcmp(head, "07070", 5)))
			return ORLOV_ERR_SOURCE_IS_ARCHIVE;
		return ORLOV_ERR_NOT_DIR;
	}
	return check_image(o);
}

/* Read SOURCE's archive, all of it, before IMAGE is touched. */
static errcode_t load_archive(const struct populate_opts *o,
			      struct populate_result *res, struct inputs *in)
{
	struct tar_tree *t;
	char *msg = NULL, *member = NULL;
	const char *scratch = NULL;
	size_t bad = 0;
	errcode_t err = o->whiteouts ?
		tar_load_layers(o->layers, o->nlayers, &t, &msg, &member, &bad,
				&scratch) :
		tar_load(o->source, &t, &msg, &member, &scratch);

	if (!err) {
		in->src.tar = t;
		return 0;
	}
	/* TMPDIR full (or failing) while the archive's data is spooled:
	 * told as the scratch file's error, not the archive's */
	if (scratch) {
		free(msg);
		free(member);
		return spill_error(&res->ec, err, scratch);
	}
	/* the archive is the path; its member and libarchive's words
	 * follow it (--json's path is the archive alone) */
	errctx_set(&res->ec, err, o->whiteouts ? "reading layer" :
		   "reading archive", o->whiteouts ? o->layers[bad] : o->source);
	if (member)
		errctx_add(&res->ec, " member %s", member);
	if (msg)
		errctx_add(&res->ec, " (%s)", msg);
	free(msg);
	free(member);
	return err;
}

/* Everything that can be refused before IMAGE is opened; SOURCE's
 * archive and the device table read. */
errcode_t before_open(const struct populate_opts *o,
		      struct populate_result *res, struct inputs *in)
{
	unsigned int line;
	int archive, missing;
	const char *src = o->source;
	size_t i, n = o->whiteouts && o->nlayers ? o->nlayers : 1;
	/* first: every look at IMAGE below would hang on a FIFO */
	errcode_t err = image_check_kind(o->image);

	if (err)
		return errctx_set(&res->ec, err, "checking", o->image);

	in->src.dir = o->source;
	/* layers: archives or directories, all read before IMAGE opens;
	 * the first is SOURCE, checked once */
	for (i = 0; i < n; i++) {
		src = i ? o->layers[i] : o->source;
		err = check_args(o, src, &archive, &missing);
		if (!err && o->whiteouts && !archive && missing)
			err = (errcode_t)missing;
		if (err)
			break;
	}
	archive |= o->whiteouts;
	if (err) {
		int img = err == ORLOV_ERR_NO_IMAGE ||
			  err == ORLOV_ERR_CREATE_CLOBBER || err == EISDIR ||
			  err == ORLOV_ERR_IMAGE_KIND;	/* check_image's */

		return errctx_set(&res->ec, err,
				  err == ORLOV_ERR_NO_IMAGE ? "opening" :
				  img ? "checking" : "reading",
				  img ? o->image : src);
	}
	/* --trace truncates its file, --undo writes one: never the image,
	 * never in the source. */
	if (o->trace) {
		err = output_clobbers(o->trace, o->image, o->source);
		if (err)
			return errctx_set(&res->ec, err, "checking trace file",
					  o->trace);
	}
	if (o->undo) {
		/* an existing one may be the undo of an earlier run: kept */
		err = output_clobbers(o->undo, o->image, o->source);
		if (!err && access(o->undo, F_OK) == 0)
			err = EEXIST;
		if (err)
			return errctx_set(&res->ec, err, "checking undo file",
					  o->undo);
	}
	if (archive) {
		/* the archive is read into TMPDIR: a missing one is not the
		 * archive's fault */
		const char *tmp = spill_dir();
		struct stat st;
		int bad = stat(tmp, &st) ? errno :
			  !S_ISDIR(st.st_mode) ? ENOTDIR : 0;

		if (bad)
			return errctx_set(&res->ec, (errcode_t)bad,
					  "checking TMPDIR, where the archive is read into:",
					  tmp);
		/* the copy's progress starts only once the archive is in:
		 * say what the time before it goes to */
		if (o->events && o->events->archive)
			o->events->archive(o->events->cookie, o->source,
					   tmp && *tmp ? tmp : "/tmp", 0);
		err = load_archive(o, res, in);
		if (o->events && o->events->archive)
			o->events->archive(o->events->cookie, o->source,
					   tmp && *tmp ? tmp : "/tmp", 1);
		if (err)
			return err;
	}
	if (o->devtable) {
		err = devtable_read(o->devtable, &in->dt, &line);
		if (err)
			errctx_set(&res->ec, err, "reading device table",
				   o->devtable);
		if (err && line)
			errctx_add(&res->ec, " line %u", line);
		if (err)
			return err;
		in->dtp = &in->dt;
	}
	return 0;
}

void inputs_free(struct inputs *in)
{
	if (in->dtp)
		devtable_free(&in->dt);
	tar_free((struct tar_tree *)in->src.tar);
}

/* The image's files, and with --create the IMAGE it replaces: an image
 * inside SOURCE is not copied into itself. */
void own_files(struct inputs *in, const struct image *img)
{
	struct stat st;

	in->nskip = image_files(img, in->skip, 2);
	if (in->image_fd >= 0 && !fstat(in->image_fd, &st)) {
		in->skip[in->nskip].dev = st.st_dev;
		in->skip[in->nskip++].ino = st.st_ino;
	}
}
