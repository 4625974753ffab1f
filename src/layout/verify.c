// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-layout verify: the image subtree at PATH against the host
 * directory SOURCE, both walked in one name order side by side.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "layout/verify.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "source/walk.h"

/* Append "/name" to both paths; returns the old lengths to restore. */
static errcode_t push_name(struct verify *v, const char *name, size_t len,
			   size_t *ilen, size_t *slen)
{
	errcode_t err = 0;

	*ilen = v->ipath.len;
	*slen = v->spath.len;
	if (v->ipath.len > 1)
		err = sb_append(&v->ipath, "/", 1);
	if (!err)
		err = sb_append(&v->ipath, name, len);
	if (!err)
		err = sb_append(&v->spath, "/", 1);
	if (!err)
		err = sb_append(&v->spath, name, len);
	return err;
}

static void pop_name(struct verify *v, size_t ilen, size_t slen)
{
	sb_truncate(&v->ipath, ilen);
	sb_truncate(&v->spath, slen);
}

struct sent {
	char *name;
	size_t len;
	struct stat st;
};

static void free_sents(struct sent *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

/* The source directory's entries, lstat'ed, in the walker's name order. */
static errcode_t read_src_dir(struct verify *v, int dirfd, struct sent **out,
			      size_t *nout)
{
	struct walk_name *names = NULL;
	struct sent *s;
	size_t n = 0, i;
	errcode_t err;

	err = walk_read_names(dirfd, &names, &n);
	if (err)
		return vfail(v, err, "reading directory");
	s = calloc(n ? n : 1, sizeof(*s));
	if (!s) {
		walk_free_names(names, n);
		return ENOMEM;
	}
	for (i = 0; i < n; i++) {
		s[i].name = names[i].s;
		s[i].len = names[i].len;
	}
	free(names);
	for (i = 0; i < n; i++) {
		if (!fstatat(dirfd, s[i].name, &s[i].st, AT_SYMLINK_NOFOLLOW)) {
			meta_apply(v->meta, &s[i].st);
		} else {
			size_t il, sl;

			err = errno;
			if (!push_name(v, s[i].name, s[i].len, &il, &sl))
				vfail(v, err, "examining");
			pop_name(v, il, sl);
			free_sents(s, n);
			return err;
		}
	}
	*out = s;
	*nout = n;
	return 0;
}

/*
 * A directory being verified.  The walk keeps its own stack, so that no
 * depth of tree overflows the C one, and only the innermost VERIFY_OPEN
 * source directories stay open: one closed on the way down is opened
 * again on the way up as ".." of its child, checked to be the same.
 */
struct vframe {
	int fd;			/* the source directory, -1 while closed */
	struct stat st;
	struct sent *s;		/* its entries */
	size_t ns, i;
	struct ir_dir d;	/* the image directory's */
	size_t j;
	int lf_extra;		/* the image's lost+found, not in the source */
	size_t il, sl;		/* path lengths to go back to when done */
};

#define VERIFY_OPEN 64

/* Read both sides of a directory and check its link count. */
static errcode_t open_vframe(struct verify *v, struct vframe *f,
			     ext2_ino_t dino,
			     const struct ext2_inode_large *dinode, int is_root)
{
	unsigned long long want_links = 2;
	size_t i, j;
	errcode_t err;

	err = read_src_dir(v, f->fd, &f->s, &f->ns);
	if (err)
		return err;
	err = ir_read_dir(v->fs, dino, &f->d);
	if (err)
		return ctx_set(v->ctx, err, "reading image directory",
			       v->ipath.s);
	for (i = 0; i < f->ns; i++)
		want_links += S_ISDIR(f->s[i].st.st_mode);
	/*
	 * mke2fs made lost+found; it is no copy of anything, but it is a
	 * subdirectory all the same.
	 */
	if (is_root && v->path_is_root) {
		for (j = 0; j < f->d.n; j++) {
			struct ext2_inode_large lf;

			if (f->d.e[j].len != 10 ||
			    memcmp(f->d.e[j].name, "lost+found", 10))
				continue;
			for (i = 0; i < f->ns; i++)
				if (!strcmp(f->s[i].name, "lost+found"))
					break;
			if (i < f->ns)
				break;
			f->lf_extra = 1;
			if (!ir_read_inode(v->fs, f->d.e[j].ino, &lf) &&
			    LINUX_S_ISDIR(lf.i_mode))
				want_links++;
		}
	}
	if (want_links != dinode->i_links_count)
		mismatch_u(v, "links", want_links, dinode->i_links_count);
	return 0;
}

static void close_vframe(struct vframe *f)
{
	if (f->fd >= 0)
		close(f->fd);
	ir_dir_free(&f->d);
	free_sents(f->s, f->ns);
}

/* Push the directory open as @fd (the stack takes it over). */
static errcode_t push_vframe(struct verify *v, struct vframe **stack,
			     size_t *cap, size_t *depth, int fd,
			     const struct stat *st, ext2_ino_t dino,
			     const struct ext2_inode_large *dinode, int is_root,
			     size_t il, size_t sl)
{
	struct vframe *f;

	if (grow_array(stack, cap, *depth + 1, sizeof(**stack), 64)) {
		close(fd);
		return ENOMEM;
	}
	f = &(*stack)[(*depth)++];
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->st = *st;
	f->il = il;
	f->sl = sl;
	if (*depth > VERIFY_OPEN &&
	    (*stack)[*depth - 1 - VERIFY_OPEN].fd >= 0) {
		close((*stack)[*depth - 1 - VERIFY_OPEN].fd);
		(*stack)[*depth - 1 - VERIFY_OPEN].fd = -1;
	}
	return open_vframe(v, f, dino, dinode, is_root);
}

/* The top directory is done: pop it, reopening its parent if closed. */
static errcode_t pop_vframe(struct verify *v, struct vframe *stack,
			    size_t *depth)
{
	struct vframe *f = &stack[*depth - 1];
	errcode_t err = 0;

	if (*depth > 1 && stack[*depth - 2].fd < 0) {
		struct vframe *up = &stack[*depth - 2];

		pop_name(v, f->il, f->sl);
		err = open_entry(v, f->fd, "..", O_DIRECTORY, &up->st, &up->fd);
	}
	pop_name(v, f->il, f->sl);
	close_vframe(f);
	(*depth)--;
	return err;
}

/* Verify the tree under the source directory @rootfd (closed here). */
static errcode_t verify_tree(struct verify *v, int rootfd,
			     const struct stat *st, ext2_ino_t ino,
			     const struct ext2_inode_large *inode)
{
	struct vframe *stack = NULL;
	size_t cap = 0, depth = 0;
	errcode_t err;

	err = push_vframe(v, &stack, &cap, &depth, rootfd, st, ino, inode, 1,
			  v->ipath.len, v->spath.len);
	while (!err && depth > 0) {
		struct vframe *f = &stack[depth - 1];
		struct ext2_inode_large cinode;
		ext2_ino_t cino = 0;
		struct stat cst;
		size_t il, sl;
		int c, cfd = -1;
		const char *name;
		size_t len;

		if (f->i >= f->ns && f->j >= f->d.n) {
			err = pop_vframe(v, stack, &depth);
			continue;
		}
		c = f->i >= f->ns ? 1 : f->j >= f->d.n ? -1 :
			walk_name_cmp(f->s[f->i].name, f->s[f->i].len,
				      f->d.e[f->j].name, f->d.e[f->j].len);
		name = c <= 0 ? f->s[f->i].name : f->d.e[f->j].name;
		len = c <= 0 ? f->s[f->i].len : f->d.e[f->j].len;
		err = push_name(v, name, len, &il, &sl);
		if (err)
			break;
		if (c < 0) {
			v->verified++;
			mismatch(v, "entry", "present", "missing");
		} else if (c > 0) {
			if (!(f->lf_extra && len == 10 &&
			      !memcmp(name, "lost+found", 10)))
				mismatch(v, "entry", "absent", "present");
		} else {
			v->verified++;
			cst = f->s[f->i].st;
			cino = f->d.e[f->j].ino;
			err = verify_entry(v, f->fd, name, &cst, cino, &cfd,
					   &cinode);
		}
		f->i += c <= 0;
		f->j += c >= 0;
		if (!err && cfd >= 0) {
			/* its entries next; its name stays on the paths */
			err = push_vframe(v, &stack, &cap, &depth, cfd, &cst,
					  cino, &cinode, 0, il, sl);
			continue;
		}
		pop_name(v, il, sl);
	}
	while (depth > 0)
		close_vframe(&stack[--depth]);
	free(stack);
	return err;
}

static int vlink_cmp(const void *a, const void *b)
{
	const struct vlink *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return ir_path_cmp(x->path, y->path);
}

/*
 * Paths sharing a source inode must share one image inode whose link
 * count is the number of such paths under SOURCE (links from outside
 * SOURCE were never copied).
 */
static errcode_t check_links(struct verify *v)
{
	size_t i, j, k;

	if (v->nlinks > 1)
		qsort(v->links, v->nlinks, sizeof(*v->links), vlink_cmp);
	for (i = 0; i < v->nlinks; i = j) {
		for (j = i + 1; j < v->nlinks &&
		     v->links[j].dev == v->links[i].dev &&
		     v->links[j].ino == v->links[i].ino; j++)
			;
		for (k = i; k < j; k++) {
			sb_truncate(&v->ipath, 0);
			if (sb_append(&v->ipath, v->links[k].path,
				      strlen(v->links[k].path)))
				return ENOMEM;
			if (v->links[k].img != v->links[i].img)
				mismatch_u(v, "inode shared with hard links",
					   v->links[i].img, v->links[k].img);
			else if (v->links[k].img_links != j - i)
				mismatch_u(v, "links", j - i,
					   v->links[k].img_links);
		}
	}
	return 0;
}

errcode_t layout_verify(const struct layout_opts *o, struct errctx *ctx)
{
	struct verify v;
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	struct stat st;
	int fd = -1;
	size_t i;
	errcode_t err;

	memset(&v, 0, sizeof(v));
	v.ctx = ctx;
	v.meta = &o->meta;
	v.have_proc = access("/proc/self/fd", X_OK) == 0;
	v.path_is_root = !strcmp(o->path, "/");
	err = open_image(o->image, &v.fs, ctx);
	if (err)
		return err;
	err = ctx_set(ctx, ir_lookup(v.fs, o->path, &ino), "looking up",
		      o->path);
	if (!err)
		err = ctx_set(ctx, ir_read_inode(v.fs, ino, &inode),
			      "reading inode of", o->path);
	if (!err && !LINUX_S_ISDIR(inode.i_mode))
		err = ctx_set(ctx, ORLOV_ERR_NOT_DIR, "verifying", o->path);
	if (!err) {
		v.sbuf = malloc(VBUF_SIZE);
		v.ibuf = malloc(VBUF_SIZE);
		if (!v.sbuf || !v.ibuf)
			err = ENOMEM;
	}
	if (!err)
		err = sb_append(&v.ipath, o->path, strlen(o->path));
	if (!err)
		err = sb_append(&v.spath, o->source, strlen(o->source));
	if (!err) {
		/* SOURCE itself may be a symlink to a directory: follow that. */
		fd = open(o->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			err = ctx_set(ctx, errno, "opening", o->source);
	}
	if (!err) {
		/*
		 * The root's own mode, owner and times are the image's (as
		 * with mke2fs -d); its entries and link count are checked.
		 */
		v.verified++;
		err = verify_tree(&v, fd, &st, ino, &inode);
		fd = -1;	/* the walk closed it */
	}
	if (!err)
		err = check_links(&v);
	if (!err) {
		printf("verified=%llu mismatches=%llu\n", v.verified,
		       v.mismatches);
		err = check_output(ctx);
	}
	if (!err && v.mismatches)
		err = ORLOV_ERR_MISMATCH;
	if (fd >= 0)
		close(fd);
	for (i = 0; i < v.nlinks; i++)
		free(v.links[i].path);
	free(v.links);
	free(v.sbuf);
	free(v.ibuf);
	sb_free(&v.ipath);
	sb_free(&v.spath);
	ext2fs_close_free(&v.fs);
	return err;
}

