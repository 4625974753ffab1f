// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One run of the engine: IMAGE opened, the allocator state loaded, the
 * first pass, the write pass, the commit (populate.c drives it).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "populate/quota.h"
#include "populate/run.h"
#include "populate/digest.h"
#include "populate/inode.h"
#include "populate/namei.h"
#include "populate/data.h"
#include "populate/preflight.h"
#include "populate/report.h"
#include "populate/scan.h"
#include "model/ext4/mballoc.h"
#include "model/kver.h"
#include "image/naming.h"
#include "lib/owner.h"
#include "lib/procstate.h"
#include "lib/spill.h"
#include "lib/orlov_err.h"

static errcode_t open_target(struct pop_ctx *c)
{
	struct ext2_inode_large in;
	errcode_t err;

	err = image_lookup_dir(c->img, c->o->target, &c->target.ino);
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = ORLOV_ERR_NO_TARGET;	/* not libext2fs's words */
	if (!err)
		err = image_read_inode(c->img, c->target.ino, &in);
	if (err)
		return pop_fail_at(c, err, "looking up target directory", c->o->target);
	c->target.links = in.i_links_count;
	c->target.d = calloc(1, sizeof(*c->target.d));
	if (!c->target.d)
		return ENOMEM;
	dirbuf_init(c->target.d, c->target.ino, c->fs.g.inodes_per_group,
		    image_has_filetype(c->img));
	err = load_dir(c, &in, c->target.d);
	if (!err)
		err = dir_names_load(&c->target.names, &c->fs, c->target.d);
	return err ? pop_fail_at(c, err, "reading target directory", c->o->target) : 0;
}

static errcode_t commit(struct pop_ctx *c)
{
	struct frame *t = &c->st.v[0];
	errcode_t err;
	size_t i;

	/* The target: new blocks, link count, size; ext2_add_link clears
	 * the (unused by ext2) index flag, ext4 keeps or sets it. */
	set_dir_blocks(c, &t->inode, &t->d, t->xblk);
	if (c->o->root_owner) {
		inode_set_uid(t->inode, c->o->root_uid);
		inode_set_gid(t->inode, c->o->root_gid);
	}
	if (!c->fs.dx.enabled)
		t->inode.i_flags &= ~(uint32_t)EXT2_INDEX_FL;
	else if (t->d.indexed)
		t->inode.i_flags |= EXT2_INDEX_FL;
	err = image_write_dir(c->img, &c->fs, &t->d);
	for (i = 0; !err && i < c->xa.xb.n; i++)
		if (c->xa.xb.b[i].blk)
			err = image_write_xattr_block(c->img, c->xa.xb.b[i].blk,
						      c->xa.xb.b[i].data);
	if (!err && c->xa.xb.allocated)
		image_set_ext_attr(c->img);
	if (!err)
		err = stage_inode(c, &t->d.map, &t->inode);
	if (err)
		return pop_fail_at(c, err, "writing target directory", c->o->target);
	err = quota_commit(c);
	if (err)
		return err;
	err = image_commit(c->img, &c->fs, &c->res->ec);
	c->img = NULL;
	return err;
}

/* IMAGE (or --create's new one) opened as @c->mode needs it. */
static errcode_t open_image(struct pop_ctx *c)
{
	const struct populate_opts *o = c->o;
	struct populate_result *res = c->res;
	struct inputs *in = c->in;
	struct image_opts io;

	io.name = o->image;
	io.dry = c->mode != RUN_WRITE;
	io.undo = io.dry ? NULL : o->undo;
	io.fault = o->fault;
	io.stage_budget = o->stage_budget;
	/* (a dry run: image_open writes no copy) */
	io.commit = in->tmp ? IMAGE_COMMIT_UNSEEN :
		    o->atomic ? IMAGE_COMMIT_COPY :
		    o->in_place ? IMAGE_COMMIT_IN_PLACE : IMAGE_COMMIT_AUTO;
	io.in_place_why = &res->in_place_why;
	io.mount_unknown = &res->mount_unknown;
	io.has_now = o->meta.has_epoch;
	io.now = o->meta.epoch;
	io.held_fd = in->tmp ? &in->tmp_fd : in->image_fd >= 0 ? &in->image_fd : NULL;
	io.stale = &res->stale_removed;
	io.restored = &res->rollback_applied;
	io.ext4_driver = o->driver == DRIVER_EXT4;
	io.region = &in->region;
	return image_open(in->path, &io, &c->img, &res->ec);
}

/* --label, --uuid without --create: set as tune2fs would, committed with
 * the tree (mke2fs set them otherwise). */
static errcode_t name_image(struct pop_ctx *c)
{
	const struct mkfs_opts *m = &c->o->mkfs;
	errcode_t err;

	if (c->o->create || (!m->label && !m->uuid))
		return 0;
	err = image_set_naming(c->img, m->label, m->uuid);
	return err ? pop_fail_at(c, err, "setting the label or UUID of",
			     c->o->image) : 0;
}

/* The allocator state as a fresh mount has it, for the kernel modelled. */
static errcode_t load_state(struct pop_ctx *c)
{
	const struct populate_opts *o = c->o;
	errcode_t err = image_load_state(c->img, &c->fs);

	if (err)
		return pop_fail_at(c, err, "loading allocator state from", o->image);
	err = meta_epoch_fits(&o->meta, c->fs.g.inode_size >=
					EXT2_GOOD_OLD_INODE_SIZE + 32);
	if (err)
		return pop_fail_at(c, err, "checking SOURCE_DATE_EPOCH against",
			       o->image);
	if (o->fsck) {
		err = image_fsck(c->in->path, &c->in->region);
		if (err)
			return pop_fail_at(c, err, "checking with e2fsck -fn", o->image);
	}
	c->fs.colour = o->colour;
	c->fs.kver = o->kver;
	dirspill_init(&c->dspill, c, c->fs.g.block_size, o->dir_budget);
	c->fs.dspill = &c->dspill.ops;
	fs_state_set_cpus(&c->fs, o->cpus);
	image_hash_seed(c->img, c->ia.seed);
	c->data.delalloc = o->delalloc;
	c->fs.dx.encoding = image_encoding(c->img, &c->fs.dx.strict);
	if (!c->drv->mballoc)
		return 0;
	c->fs.dx.enabled = image_dir_hash(c->img, &c->fs.dx.def_version,
					  &c->fs.dx.unsigned_adj);
	memcpy(c->fs.dx.seed, c->ia.seed, sizeof(c->ia.seed));
	err = mb_state_init_opt(&c->fs, o->rotational == ROTATIONAL_YES,
				o->mb_optimize_scan);
	if (err)
		return pop_fail_at(c, err, "loading allocator state from", o->image);
	c->fs.mb->delalloc = o->delalloc;
	c->fs.mb->journal = image_has_journal(c->img);
	return 0;
}

/* The buffers of the passes, and the attribute state of the mount. */
static errcode_t setup(struct pop_ctx *c)
{
	const struct populate_opts *o = c->o;
	uint32_t bs = c->fs.g.block_size;

	/* ext4_fill_super's s_maxbytes: new files are extent-mapped there */
	c->max_size = c->fs.g.extents ?
		ext4_max_size((unsigned int)__builtin_ctz(bs),
			      image_has_huge_file(c->img)) :
		ext2_max_size((unsigned int)__builtin_ctz(bs));
	c->data.run = malloc((size_t)RUN_BLOCKS * bs);
	c->data.chunk = malloc((size_t)RUN_BLOCKS * bs);
	c->xblock = malloc(bs);
	if (xattr_blocks_init(&c->xa.xb, bs))
		c->xblock = (free(c->xblock), NULL);
	c->xa.xb.name_hash = o->kver < KVER_UNSIGNED_CHAR && !o->arm64 ?
			     NAME_HASH_SIGNED : NAME_HASH_UNSIGNED;
	c->xa.xb.noreserve = o->kver >= KVER_EXT2_XATTR_NORESERVE;
	if (c->drv->xattr_share_below)
		c->xa.xb.share_below = c->drv->xattr_share_below;
	c->xa.xs.posix_acl = image_posix_acl(c->img);
	c->xa.xs.fs = &c->fs;
	c->xa.xs.xb = &c->xa.xb;
	c->xa.xs.set = c->drv->xattr_set;
	c->xa.user_xattr = image_user_xattr(c->img);
	c->pr.group_used = calloc(c->fs.g.ngroups, 1);
	if (!c->data.run || !c->data.chunk || !c->xblock || !c->pr.group_used)
		return ENOMEM;
	return 0;
}

/* The second walk, which writes (or with --dry-run only allocates), the
 * writeback, and with RUN_WRITE the commit. */
static errcode_t write_pass(struct pop_ctx *c)
{
	const struct populate_opts *o = c->o;
	struct populate_result *res = c->res;
	struct walk_opts wo = { .want_xattrs = o->xattrs, .want_data = 1,
				.ahead = o->jobs > 1,
				.skip = c->in->skip, .nskip = c->in->nskip };
	struct walk_visitor v;
	errcode_t err;
	uint32_t i;

	if (o->trace) {
		c->fs.trace = fopen(o->trace, "w");
		if (!c->fs.trace)
			return pop_fail_at(c, (errcode_t)errno, "opening trace file",
				       o->trace);
	}
	/* a test program's hook: the source changes between passes */
	if (o->between_passes) {
		err = o->between_passes(o->between_cookie);
		if (err)
			return pop_fail_at(c, err, "running the hook between the passes over",
				       o->source);
	}
	c->pr.on = o->events && o->events->progress;
	clock_gettime(CLOCK_MONOTONIC, &c->pr.t0);	/* the pace of the copy */
	write_visitor(c, &v);
	err = source_walk(&c->in->src, &wo, &o->meta, c->in->dtp, &v);
	if (c->pr.on)
		report_progress(c, 1);
	if (!err)
		err = writeback(c);
	if (err)
		return err;
	/* what this run takes: the same in a dry run as in the real one */
	res->inodes_used = res->free_inodes -
			   (uint64_t)percpu_counter_sum(&c->fs.freei);
	res->blocks_used = res->free_blocks -
			   (uint64_t)percpu_counter_sum(&c->fs.freeb);
	if (c->mode == RUN_WRITE) {
		err = commit(c);
		if (err)
			return err;
	}
	for (i = 0; i < c->fs.g.ngroups; i++)
		res->groups_used += c->pr.group_used[i];
	return 0;
}

/* The driver and delayed allocation not given: what mounting the image
 * (as it is now: --create made it) without options gives. */
static void mount_defaults(struct populate_opts *o, struct populate_result *res,
			   const struct inputs *in)
{
	int ext4, delalloc;

	image_mount_defaults(in->path, &in->region, &ext4, &delalloc);
	populate_resolve_mount(o, ext4, delalloc, &res->chosen);
}

errcode_t populate_run(const struct populate_opts *given, struct populate_result *res,
	      struct inputs *in, enum run_mode mode)
{
	struct populate_opts opts = *given, *o = &opts;
	struct pop_ctx c;
	errcode_t err;

	mount_defaults(o, res, in);
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.res = res;
	c.in = in;
	c.mode = mode;
	src_reread_init(&c.data.rr, &in->src);
	c.drv = o->driver == DRIVER_EXT4 ? &ext4_driver : &ext2_driver;
	c.ia.rng = o->seed;
	c.ia.oldalloc = o->policy == POLICY_OLDALLOC;
	c.ia.topdir_hash = o->topdir == TOPDIR_HASH;
	err = open_image(&c);
	if (err)
		return err;
	own_files(in, c.img);
	err = name_image(&c);
	if (!err)
		err = load_state(&c);
	if (!err)
		err = setup(&c);
	if (!err)
		err = open_target(&c);
	if (!err)
		err = quota_begin(&c, 0);
	if (!err)
		err = first_pass(&c);
	if (!err && mode == RUN_WRITE) {
		err = image_plan_commit(c.img, &c.fs, c.scan.need_inodes);
		if (err)
			err = pop_fail_at(&c, err, "copying for the commit",
					  o->image);
	}
	/* the trees again as the image has them: the first pass's grew */
	if (!err && mode != RUN_CHECK)
		err = quota_begin(&c, 1);
	if (!err && mode != RUN_CHECK)
		err = write_pass(&c);
	/* the staged inodes' spill file in TMPDIR failed, not the entry */
	if (err && c.img && image_scratch_failed(c.img)) {
		errctx_clear(&res->ec);
		err = spill_error(&res->ec, err, image_scratch_failed(c.img));
	}
	ctx_free(&c);
	return err;
}

void populate_result_free(struct populate_result *res)
{
	free(res->unwritten_at);
	res->unwritten_at = NULL;
	free(res->setid_first);
	res->setid_first = NULL;
	errctx_clear(&res->ec);
}
