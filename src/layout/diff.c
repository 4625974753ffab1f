// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-layout diff: two images' dump lines, path by path. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "image/image_read.h"
#include "lib/orlov_err.h"

struct rec {
	char *path;
	char *desc;		/* dump line after the path */
	const char *blocks;	/* " blocks=..." inside desc */
	ext2_ino_t ino;
};

struct listing {
	ext2_filsys fs;
	struct rec *r;
	size_t n, cap;
	struct strbuf line;
};

static errcode_t collect_one(const char *path, ext2_ino_t ino,
			     struct ext2_inode_large *inode, void *priv)
{
	struct listing *l = priv;
	struct rec *r;
	errcode_t err;

	sb_truncate(&l->line, 0);
	err = ir_describe(l->fs, ino, inode, &l->line);
	if (err)
		return err;
	if (grow_array(&l->r, &l->cap, l->n + 1, sizeof(*l->r), 256))
		return ENOMEM;
	r = &l->r[l->n];
	r->path = strdup(path);
	r->desc = strdup(l->line.s);
	if (!r->path || !r->desc) {
		free(r->path);
		free(r->desc);
		return ENOMEM;
	}
	r->blocks = strstr(r->desc, " blocks=");
	r->ino = ino;
	l->n++;
	return 0;
}

static void listing_free(struct listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->r[i].path);
		free(l->r[i].desc);
	}
	free(l->r);
	sb_free(&l->line);
	if (l->fs)
		ext2fs_close_free(&l->fs);
}

/* A PATH absent from one image makes that side empty, not an error. */
static errcode_t list_image(const struct layout_opts *o, const char *name,
			    const char *path,
			    struct listing *l, int *absent,
			    struct errctx *ctx)
{
	ext2_ino_t ino;
	errcode_t err;

	err = open_image(o, name, &l->fs, ctx);
	if (err)
		return err;
	err = ir_lookup(l->fs, path, &ino);
	if (err == EXT2_ET_FILE_NOT_FOUND) {
		*absent = 1;
		return 0;
	}
	*absent = 0;
	err = ir_walk(l->fs, path, collect_one, l, ctx);
	if (err && errctx_isset(ctx)) {
		/* Say which image the walk failed in. */
		errctx_add(ctx, " in ");
		errctx_add_escaped(ctx, name);
	}
	return err;
}

static void print_side(const char *label, const struct rec *r)
{
	fputs(label, stdout);
	if (!r) {
		puts("missing");
		return;
	}
	fput_escaped(stdout, r->path, strlen(r->path));
	printf(" %s\n", r->desc);
}

errcode_t layout_diff(const struct layout_opts *o, struct errctx *ctx)
{
	struct listing exp, act;
	size_t i = 0, j = 0, paths = 0, same_ino = 0, same_blocks = 0;
	int exp_absent = 0, act_absent = 0, differs = 0;
	errcode_t err;

	memset(&exp, 0, sizeof(exp));
	memset(&act, 0, sizeof(act));
	err = list_image(o, o->image, o->path, &exp, &exp_absent, ctx);
	if (!err)
		err = list_image(o, o->image2, o->path, &act, &act_absent, ctx);
	if (!err && exp_absent && act_absent)
		err = errctx_set_path(ctx, EXT2_ET_FILE_NOT_FOUND,
				      "looking up in both images", o->path);
	while (!err && (i < exp.n || j < act.n)) {
		const struct rec *e = i < exp.n ? &exp.r[i] : NULL;
		const struct rec *a = j < act.n ? &act.r[j] : NULL;
		int c = !e ? 1 : !a ? -1 : ir_path_cmp(e->path, a->path);
		int same = 0;

		if (c > 0)
			e = NULL;
		else if (c < 0)
			a = NULL;
		paths++;
		if (e && a) {
			same_ino += e->ino == a->ino;
			same_blocks += !strcmp(e->blocks, a->blocks);
			same = !strcmp(e->desc, a->desc);
		}
		if (!same && !differs) {
			const char *p = e ? e->path : a->path;

			differs = 1;
			fputs("first difference: ", stdout);
			fput_escaped(stdout, p, strlen(p));
			putchar('\n');
			print_side("expected: ", e);
			print_side("actual:   ", a);
		}
		i += e != NULL;
		j += a != NULL;
	}
	if (!err) {
		printf("paths=%zu same_inode=%zu same_blocks=%zu\n", paths,
		       same_ino, same_blocks);
		err = check_output(ctx);
	}
	if (!err && differs)
		err = ORLOV_ERR_DIFFERENT;
	listing_free(&exp);
	listing_free(&act);
	return err;
}
