// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "populate/quota.h"
#include "populate/ctx.h"
#include "populate/hardlinks.h"
#include "model/ext4/ialloc.h"
#include "model/ext4/mballoc.h"
#include "lib/util.h"

/* A new frame on the write pass's stack, for a directory entered. */
errcode_t frame_push(struct pop_ctx *c)
{
	struct frames *s = &c->st;

	if (grow_array(&s->v, &s->cap, s->depth + 1, sizeof(*s->v), 32))
		return ENOMEM;
	memset(&s->v[s->depth], 0, sizeof(s->v[0]));
	s->v[s->depth].last_alloc_group = EXT4_NO_LAST_ALLOC_GROUP;
	s->depth++;
	return 0;
}

static void xsets_free(struct xsets *xs)
{
	size_t i;

	for (i = 0; i < xs->n; i++)
		free(xs->v[i].data);
	free(xs->v);
	keymap_free(&xs->by_hash);
}

void ctx_free(struct pop_ctx *c)
{
	size_t i;

	if (c->img)
		image_abort(c->img);
	quota_free(c);
	while (c->st.depth > 0) {
		dirbuf_release(&c->fs, &pop_top(c)->d);
		dir_names_free(&pop_top(c)->old_names);
		c->st.depth--;
	}
	if (c->target.d)
		dirbuf_release(&c->fs, c->target.d);
	free(c->target.d);
	walk_names_free(&c->scan.root_names);
	xsets_free(&c->scan.xsets);
	free(c->scan.cf_seen);
	free(c->st.v);
	for (i = 0; i < c->scan.dirs.depth; i++)
		if (c->scan.dirs.v[i].owned)
			dir_names_free(&c->scan.dirs.v[i].old_names);
	dir_names_free(&c->target.names);
	free(c->scan.dirs.v);
	links_free(&c->links);
	xattr_blocks_free(&c->xa.xb);
	free(c->data.run);
	free(c->data.chunk);
	sb_free(&c->data.run_path);
	free(c->xblock);
	free(c->pr.group_used);
	if (c->fs.trace)
		fclose(c->fs.trace);
	delalloc_free(&c->fs, &c->data.da);
	dirspill_free(&c->dspill);
	sb_free(&c->data.note);
	src_reread_end(&c->data.rr);
	if (c->data.rec_open)
		close(c->data.rec_fd);
	free(c->data.rec_win);
	mb_state_free(&c->fs);
	fs_state_free(&c->fs);
}
