// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The write pass.  Entries come from the walker in the creation order of
 * the kernel contract, and each is created with the same steps, in the
 * same order, as the ext2 driver's namei.c does them, one function each:
 *   do_mkdir:   new inode, its first block, then the entry in the parent
 *   do_create:  new inode, the entry in the parent, data front to back,
 *               close
 *   do_symlink: new inode, its block if slow, then the entry in the parent
 *   do_mknod:   new inode, the entry in the parent
 *   do_link:    the entry in the parent
 *   do_merge:   (--merge) into the directory the image has of that name
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/ftype.h"
#include "populate/quota.h"
#include "populate/namei.h"
#include "populate/attrs.h"
#include "populate/casefold.h"
#include "populate/check.h"
#include "populate/data.h"
#include "populate/hardlinks.h"
#include "populate/inode.h"
#include "populate/report.h"
#include "model/ext4/mballoc.h"
#include "model/ext4/inline.h"
#include "lib/orlov_err.h"

/* ext2_new_inode: choose the group by policy, take the inode.  The caller
 * then inherits ACLs (init_acl) and calls new_inode_done: the kernel's
 * trace record comes at the end of ext2_new_inode. */
static errcode_t new_inode(struct pop_ctx *c, const struct src_entry *e,
			   int is_dir, uint32_t *ino, struct orlov_figures *fig)
{
	struct frame *p = pop_top(c);
	struct ialloc_parent par = {
		.group = (int)p->d.map.group, .ino = p->d.map.ino,
		.topdir = p->d.map.ino == EXT2_ROOT_INO ||
			  (p->flags & FS_TOPDIR_FL),
		.last_alloc_group = p->last_alloc_group,
	};
	struct orlov_figures f;
	int group;
	/* inode_init_owner: root's, or a setgid parent's group, whose
	 * dquots come before the group is chosen */
	errcode_t err = quota_new_inode(c, e, (p->inode.i_mode & S_ISGID) ?
					      inode_gid(p->inode) : 0,
					quota_new_projid(c, p));

	if (err)
		return err;
	group = c->drv->find_group(&c->fs, &c->ia, &par, is_dir, e->name,
			      (int)e->name_len, &f);
	/* ext4_new_inode: the parent remembers the group chosen */
	p->last_alloc_group = group;
	err = orlov_take_inode(&c->fs, group, is_dir, ino);
	if (err)
		return pop_fail(c, err, "allocating an inode for", e->path);
	*fig = f;
	return 0;
}

static void new_inode_done(struct pop_ctx *c, const struct frame *parent,
			   const struct src_entry *e, int is_dir,
			   const struct orlov_figures *fig, uint32_t ino)
{
	trace_inode(c, parent, e, is_dir, fig, ino);
	report_entry(c, e, ino);
}

static errcode_t add_link(struct pop_ctx *c, const struct src_entry *e,
			  uint32_t ino)
{
	errcode_t err = dir_add_link(&c->fs, &pop_top(c)->d, e->name, e->name_len,
				     ino, ftype_of_mode(e->st.st_mode));

	pop_top(c)->added++;
	return err ? pop_fail(c, err, "adding a directory entry for", e->path) : 0;
}

/* A frame for a directory the image has (the target, or one merged
 * into; @in its inode as read): its flags, and the attributes its new
 * entries inherit. */
static errcode_t load_existing(struct pop_ctx *c, struct frame *n, uint32_t ino,
			       const struct ext2_inode_large *in)
{
	errcode_t err = 0;

	n->inode = *in;
	n->existing = 1;
	n->flags = n->inode.i_flags;
	n->xblk = inode_xattr_block(&n->inode);
	if (!err && n->xblk && !xattr_blocks_known(&c->xa.xb, n->xblk)) {
		/* Its default ACL is inherited, and its block can be shared
		 * once ext2 has read it. */
		err = image_read_block(c->img, n->xblk, c->xblock);
		if (!err && !xattr_block_valid(c->xblock, c->fs.g.block_size))
			err = ORLOV_ERR_CORRUPT;
		if (!err)
			err = xattr_blocks_adopt(&c->xa.xb, n->xblk,
						 c->xblock);
		n->acl_unread = 1;
	}
	/* ext4 reads attributes in the inode first (a default ACL there is
	 * inherited) */
	if (!err && c->drv->xattr_ibody && n->inode.i_extra_isize == 32)
		err = ibody_new(c, &n->d.map);
	if (!err && n->d.map.ibody) {
		err = image_read_inode_tail(c->img, ino, n->d.map.ibody);
		if (!err && !xattr_ibody_valid(n->d.map.ibody,
					       n->d.map.ibody_size))
			err = ORLOV_ERR_CORRUPT;
	}
	return err;
}

/* The source root maps onto the target directory. */
static errcode_t enter_target(struct pop_ctx *c, const struct src_entry *e)
{
	struct ext2_inode_large in;
	struct frame *n;
	errcode_t err = frame_push(c);

	if (err)
		return err;
	n = pop_top(c);
	/* The frame owns the target's blocks and names from now on. */
	n->d = *c->target.d;
	free(c->target.d);
	c->target.d = NULL;
	n->old_names = c->target.names;
	memset(&c->target.names, 0, sizeof(c->target.names));
	n->is_target = 1;
	err = image_read_inode(c->img, c->target.ino, &in);
	if (!err)
		err = load_existing(c, n, c->target.ino, &in);
	if (err)
		return pop_fail_at(c, err, "reading target directory", c->o->target);
	if (!c->o->root_attrs) {
		/* the image's own attributes stay, but for a device table
		 * line for "/": its mode and owners (--root-owner's, at
		 * commit, still have the last word) */
		if (e->table_attrs)
			take_mode_owner(e, &n->inode);
		return 0;
	}
	/* --root-attrs: SOURCE's own mode, owners, times and
	 * attributes, as cp -a SOURCE/. TARGET gives them */
	take_attrs(c, e, &n->inode);
	if (c->o->xattrs && e->nxattrs &&
	    (n->xblk || (n->d.map.ibody &&
	     !xattr_ibody_empty(n->d.map.ibody, n->d.map.ibody_size))))
		return pop_fail_at(c, ORLOV_ERR_TARGET_XATTRS,
			       "applying SOURCE's attributes to", c->o->target);
	return write_xattrs(c, e, &n->d.map, &n->xblk);
}

/* --merge: into the directory @ino that is there, as cp -a does after
 * mkdir's EEXIST. */
static errcode_t do_merge(struct pop_ctx *c, const struct src_entry *e,
			  uint32_t ino)
{
	struct ext2_inode_large in;
	struct frame *n;
	errcode_t err = image_read_inode(c->img, ino, &in);

	if (!err && (!merges(c, e, c->st.depth) || !S_ISDIR(in.i_mode)))
		err = ORLOV_ERR_EXISTS;
	if (!err)
		err = frame_push(c);
	if (err)
		return pop_fail(c, err, "merging", e->path);
	n = pop_top(c);
	dirbuf_init(&n->d, ino, c->fs.g.inodes_per_group,
		    image_has_filetype(c->img));
	err = load_dir(c, &in, &n->d);
	if (!err)
		err = dir_names_load(&n->old_names, &c->fs, &n->d);
	if (!err)
		err = load_existing(c, n, ino, &in);
	if (err)
		return pop_fail(c, err, "merging", e->path);
	/* cp -a then gives it the source's mode, owners and times
	 * (and so does mke2fs -d); its attributes stay */
	take_attrs(c, e, &n->inode);
	return quota_chown(c, e);
}

/* ext2_mkdir: a new inode and its first block, then the entry in the
 * parent; the new directory becomes the current frame. */
static errcode_t do_mkdir(struct pop_ctx *c, const struct src_entry *e)
{
	struct frame *p, *n;
	struct orlov_figures fig;
	uint32_t ino, flags;
	int inl = 0;
	errcode_t err;

	if (dir_links_full(c, pop_top(c)->inode.i_links_count, pop_top(c)->d.indexed))
		return pop_fail(c, ORLOV_ERR_TOO_MANY_LINKS, "creating directory",
			    e->path);
	err = new_inode(c, e, 1, &ino, &fig);
	if (err)
		return err;
	p = pop_top(c);
	/* ext4 passes PROJINHERIT on to directories (EXT4_FL_INHERITED;
	 * not to files: EXT4_REG_FLMASK, EXT4_OTHER_FLMASK) */
	flags = mask_flags(e->st.st_mode, p->flags & FL_INHERITED) |
		(e->fsflags & FS_TOPDIR_FL) | casefold_flag(c, e) |
		(c->o->driver == DRIVER_EXT4 ? p->flags & FS_PROJINHERIT_FL : 0);
	err = frame_push(c);
	if (err)
		return err;
	p = &c->st.v[c->st.depth - 2];
	n = pop_top(c);
	dirbuf_init(&n->d, ino, c->fs.g.inodes_per_group, image_has_filetype(c->img));
	err = ibody_new(c, &n->d.map);
	if (err)
		return pop_fail(c, err, "creating directory", e->path);
	n->flags = flags;
	/* chattr +F on the empty directory, before anything goes in */
	n->d.cf = (flags & FS_CASEFOLD_FL) ? c->fs.dx.encoding : NULL;
	fill_inode(c, e, flags, &n->inode);
	if (n->inode.i_extra_isize)
		n->inode.i_projid = quota_new_projid(c, p);
	n->inode.i_links_count = 2;
	err = init_acl(c, p, &n->d.map, e, &n->xblk);
	if (err)
		return err;
	/* after the ACL, as __ext4_new_inode sets EXTENTS_FL: an inherited
	 * ACL's block is allocated as for an inode without extents (below
	 * 2^32, and off the optimize_scan lists before their backport) */
	if (c->fs.g.extents)
		ifile_use_extents(&c->fs, &n->d.map, 0);
	new_inode_done(c, p, e, 1, &fig, ino);
	/* ext4_init_new_dir: inline while the inode has room */
	if (c->fs.g.inline_data && n->d.map.ibody)
		err = ext4_try_create_inline_dir(&n->d, p->d.map.ino, &inl);
	if (!err && !inl)
		err = dir_make_empty(&c->fs, &n->d, p->d.map.ino);
	if (err)
		return pop_fail(c, err, "creating directory", e->path);
	err = dir_add_link(&c->fs, &p->d, e->name, e->name_len, ino, EXT2_FT_DIR);
	p->added++;
	if (err)
		return pop_fail(c, err, "adding a directory entry for", e->path);
	p->inode.i_links_count = dir_links_inc(c, p->inode.i_links_count,
					       p->d.indexed);
	return set_attrs(c, e, &n->d.map, &n->xblk);
}

static errcode_t enter_dir(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	uint32_t ino;
	int found = 0;
	errcode_t err;

	if (!c->st.depth)
		return enter_target(c, e);
	err = recheck(c, e);
	if (!err && pop_top(c)->existing)
		err = dir_names_lookup(&pop_top(c)->old_names, &c->fs,
				       &pop_top(c)->d, e->name, e->name_len,
				       &found, &ino);
	if (err)
		return pop_fail(c, err, "copying", e->path);
	return found ? do_merge(c, e, ino) : do_mkdir(c, e);
}

static errcode_t leave_dir(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	struct frame *n = pop_top(c);
	errcode_t err;

	if (n->is_target)
		return 0;	/* written back at commit */
	if (n->existing && !n->added) {
		/* merged into, nothing added: its blocks stay as they are */
		err = stage_inode(c, &n->d.map, &n->inode);
		dirbuf_release(&c->fs, &n->d);
		dir_names_free(&n->old_names);
		c->st.depth--;
		return err ? pop_fail(c, err, "writing directory", e->path) : 0;
	}
	/* ext2_add_link clears the index flag ext2 does not use */
	if (n->existing && !c->fs.dx.enabled)
		n->inode.i_flags &= ~(uint32_t)EXT2_INDEX_FL;
	set_dir_blocks(c, &n->inode, &n->d, n->xblk);
	if (n->d.indexed)
		n->inode.i_flags |= EXT2_INDEX_FL;
	err = image_write_dir(c->img, &c->fs, &n->d);
	if (!err)
		err = stage_inode(c, &n->d.map, &n->inode);
	dirbuf_release(&c->fs, &n->d);
	dir_names_free(&n->old_names);
	c->st.depth--;
	return err ? pop_fail(c, err, "writing directory", e->path) : 0;
}


/* ext2_link: one more entry for the inode @ino made for an earlier link
 * of the same source inode. */
static errcode_t do_link(struct pop_ctx *c, const struct src_entry *e,
			 uint32_t ino)
{
	struct ext2_inode_large old;
	int staged = !image_read_staged(c->img, ino, &old);
	errcode_t err;

	/* ext4_link: into a PROJINHERIT directory only of the same project
	 * (a file made in a directory merged into, without the flag) */
	if (staged && (pop_top(c)->flags & FS_PROJINHERIT_FL) &&
	    image_inode_projid(c->img, &old) != quota_new_projid(c, pop_top(c)))
		return pop_fail(c, ORLOV_ERR_PROJECT_LINK, "linking", e->path);
	err = add_link(c, e, ino);
	if (err)
		return err;
	if (!staged || old.i_links_count >= c->drv->link_max)
		return pop_fail(c, ORLOV_ERR_TOO_MANY_LINKS, "linking", e->path);
	old.i_links_count++;
	err = image_stage_inode(c->img, ino, &old);
	if (err)
		return pop_fail(c, err, "linking", e->path);
	report_entry(c, e, ino);
	return 0;
}

/* An inode do_create, do_symlink or do_mknod is making. */
struct new_file {
	struct ifile f;
	struct ext2_inode_large in;
	fsblk_t xblk;		/* its attribute block */
};

/* ext2_new_inode for anything but a directory, with the ACLs it
 * inherits.  @n is released by ifile_release whatever happens. */
static errcode_t inode_begin(struct pop_ctx *c, const struct src_entry *e,
			     struct new_file *n)
{
	struct orlov_figures fig;
	uint32_t ino, flags;
	errcode_t err;

	memset(n, 0, sizeof(*n));
	err = new_inode(c, e, 0, &ino, &fig);
	if (err)
		return err;
	flags = mask_flags(e->st.st_mode, pop_top(c)->flags & FL_INHERITED);
	fill_inode(c, e, flags, &n->in);
	if (n->in.i_extra_isize)
		n->in.i_projid = quota_new_projid(c, pop_top(c));
	ifile_init(&n->f, ino, c->fs.g.inodes_per_group);
	err = ibody_new(c, &n->f);
	if (err)
		return pop_fail(c, err, "creating", e->path);
	err = init_acl(c, pop_top(c), &n->f, e, &n->xblk);
	if (err)
		return err;
	/* EXTENTS_FL after the ACL, as in __ext4_new_inode (the ACL's
	 * block goes where an inode without extents gets one); and
	 * ext4_symlink takes the flag off a fast symlink again */
	if (c->fs.g.extents && (S_ISREG(e->st.st_mode) ||
				(S_ISLNK(e->st.st_mode) &&
				 e->link_len + 1 > sizeof(n->in.i_block))))
		ifile_use_extents(&c->fs, &n->f, S_ISREG(e->st.st_mode));
	new_inode_done(c, pop_top(c), e, 0, &fig, ino);
	return 0;
}

/* The inode staged for the commit, and remembered for the other links
 * of its source. */
static errcode_t inode_finish(struct pop_ctx *c, const struct src_entry *e,
			      struct new_file *n)
{
	errcode_t err;

	inode_set_xattr_block(&n->in, n->xblk);
	err = stage_inode(c, &n->f, &n->in);
	if (!err && e->st.st_nlink > 1)
		err = link_add(&c->links, e->st.st_dev, e->st.st_ino, n->f.ino);
	if (err)
		pop_fail(c, err, "recording", e->path);
	return err;
}

/* --delalloc: the block map waits for the writeback (the inode's tail is
 * staged already), the file's allocation with it; a file with nothing
 * delayed leaves no record. */
static errcode_t keep_delayed(struct pop_ctx *c, const struct src_entry *e,
			      struct ifile *f)
{
	errcode_t err = delay_keep(c, f);

	return err ? pop_fail(c, err, "recording", e->path) : 0;
}

/* ext2_create, the entry in the parent, then the data front to back and
 * the last close. */
static errcode_t do_create(struct pop_ctx *c, const struct src_entry *e)
{
	struct new_file n;
	int inl = 0;
	errcode_t err = inode_begin(c, e, &n);

	if (!err)
		err = add_link(c, e, n.f.ino);
	if (err)
		goto out;
	/* Attributes are set on the open file (fsetxattr, as cp -a
	 * does), so their block may use its window too. */
	/* inline_data: the bytes in the inode when the first write fits
	 * there; then no block, nothing delayed, and delalloc_cur is still
	 * the last file that had some */
	err = write_inline(c, e, &n.f, &n.in, &inl);
	if (!err && !inl)
		err = copy_data(c, e, &n.f);
	if (!err)
		err = set_attrs(c, e, &n.f, &n.xblk);
	c->drv->release(&c->fs, &n.f, !inl && c->data.delalloc &&
			delalloc_cur(&c->data.da)->n);
	if (err)
		goto out;
	c->res->bytes += (uint64_t)e->st.st_size;
	if ((uint64_t)e->st.st_size > 0x7fffffffULL)
		image_set_large_file(c->img);
	n.in.i_size = (uint32_t)e->st.st_size;
	n.in.i_size_high = (uint32_t)((uint64_t)e->st.st_size >> 32);
	if (inl)
		set_inline_blocks(c, &n.in, n.xblk);
	else
		set_blocks(c, &n.in, &n.f, n.xblk);
	err = inode_finish(c, e, &n);
	if (!err && c->data.delalloc && !inl)
		err = keep_delayed(c, e, &n.f);
out:
	ifile_release(&c->fs, &n.f);
	return err;
}

/* ext2_symlink: a new inode, its block if the target does not fit in
 * i_block (a slow symlink), then the entry in the parent. */
static errcode_t do_symlink(struct pop_ctx *c, const struct src_entry *e)
{
	struct new_file n;
	uint32_t bs = c->fs.g.block_size;
	fsblk_t phys;
	int slow = e->link_len + 1 > sizeof(n.in.i_block);
	errcode_t err = inode_begin(c, e, &n);

	if (err)
		goto out;
	if (slow) {
		err = bmap_get_block(&c->fs, &n.f, 0, 0, &phys);
		if (!err) {
			memset(c->xblock, 0, bs);
			memcpy(c->xblock, e->link_target, e->link_len);
			err = image_write_blocks(c->img, phys, 1, c->xblock);
		}
		if (err) {
			err = pop_fail(c, err, "writing symlink", e->path);
			goto out;
		}
	} else {
		memcpy(n.in.i_block, e->link_target, e->link_len);
	}
	err = add_link(c, e, n.f.ino);
	if (!err)
		err = set_attrs(c, e, &n.f, &n.xblk);
	if (err)
		goto out;
	n.in.i_size = (uint32_t)e->link_len;
	if (slow)
		set_blocks(c, &n.in, &n.f, n.xblk);
	else
		n.in.i_blocks = n.xblk ? bs / 512 : 0;
	err = inode_finish(c, e, &n);
out:
	ifile_release(&c->fs, &n.f);
	return err;
}

/* ext2_mknod: a device, fifo or socket: a new inode, then the entry in
 * the parent. */
static errcode_t do_mknod(struct pop_ctx *c, const struct src_entry *e)
{
	struct new_file n;
	mode_t m = e->st.st_mode;
	errcode_t err = inode_begin(c, e, &n);

	if (!err)
		err = add_link(c, e, n.f.ino);
	if (!err)
		err = set_attrs(c, e, &n.f, &n.xblk);
	if (err)
		goto out;
	n.in.i_blocks = n.xblk ? c->fs.g.block_size / 512 : 0;
	if (S_ISCHR(m) || S_ISBLK(m))
		inode_set_rdev(&n.in, e->st.st_rdev);
	err = inode_finish(c, e, &n);
out:
	ifile_release(&c->fs, &n.f);
	return err;
}

static errcode_t leaf(void *ctx, const struct src_entry *e)
{
	struct pop_ctx *c = ctx;
	struct link_ent *l = NULL;
	mode_t m = e->st.st_mode;
	int found = 0;
	errcode_t err = recheck(c, e);

	/* a name a directory merged into has (the first pass saw none) */
	if (!err && pop_top(c)->existing)
		err = dir_names_lookup(&pop_top(c)->old_names, &c->fs,
				       &pop_top(c)->d, e->name, e->name_len,
				       &found, NULL);
	if (!err && found)
		err = ORLOV_ERR_EXISTS;
	if (err)
		return pop_fail(c, err, "copying", e->path);
	if (e->st.st_nlink > 1)
		l = link_find(&c->links, e->st.st_dev, e->st.st_ino);
	if (l)
		return do_link(c, e, l->ino);
	/* an inode that lost set-ID bits to an owner mapping: told once */
	if (e->setid_cleared && !c->res->setid_cleared++)
		c->res->setid_first = source_path(c, e->path);
	if (S_ISREG(m))
		return do_create(c, e);
	if (S_ISLNK(m))
		return do_symlink(c, e);
	return do_mknod(c, e);
}

void write_visitor(struct pop_ctx *c, struct walk_visitor *v)
{
	memset(v, 0, sizeof(*v));
	v->enter_dir = enter_dir;
	v->leave_dir = leave_dir;
	v->leaf = leaf;
	v->error = walk_error;
	v->scratch_error = walk_scratch_error;
	v->ctx = c;
}
