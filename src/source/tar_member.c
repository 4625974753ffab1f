// SPDX-License-Identifier: GPL-2.0-or-later
/* One archive member into the tree (tar_tree.h): its name, metadata,
 * attributes, ACLs and data (to the spool), from an archive (tar.c) or a
 * directory layer read through libarchive's disk reader (tar_disk.c). */
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

#include "source/tar_tree.h"
#include "source/layers.h"
#include "lib/util.h"
#include "lib/spill.h"
#include "lib/orlov_err.h"

#ifdef HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>

errcode_t tar_new_inode(struct tar_tree *t, uint32_t *out)
{
	if (grow_array(&t->in, &t->icap, t->ni + 1, sizeof(*t->in), 256))
		return ENOMEM;
	memset(&t->in[t->ni], 0, sizeof(*t->in));
	t->in[t->ni].t = t;
	*out = (uint32_t)t->ni++;
	return 0;
}

const struct stat *tar_node_st(const struct tar_tree *t, uint32_t node)
{
	return &t->in[t->ino[node]].st;
}

/* A directory no member names but one below it: as tar would make it. */
static void implicit_dir(struct stat *st, const struct stat *child)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0755;
	st->st_mtim = st->st_atim = st->st_ctim = child->st_mtim;
}

/* The node of normalized @p (n bytes), or NAME_NONE; a component at a
 * time from the root, so that no path is ever stored or hashed whole. */
static uint32_t find_path(const struct tar_tree *t, const char *p, size_t n)
{
	uint32_t node = 0;
	size_t i = 0;

	while (i < n && node != NAME_NONE) {
		const char *slash = memchr(p + i, '/', n - i);
		size_t c = slash ? (size_t)(slash - (p + i)) : n - i;

		node = name_find(&t->names, node, p + i, c);
		i += c + 1;
	}
	if (t->ly && node != NAME_NONE && layer_gone(t, node))
		return NAME_NONE;
	return node;
}

/* The node for normalized @p (n bytes), made with its parents as needed. */
static errcode_t node_at(struct tar_tree *t, const char *p, size_t n,
			 const struct stat *st, uint32_t *out)
{
	uint32_t node = 0, kid;
	size_t i = 0;
	errcode_t err;
	int back = 0;

	while (i < n) {
		const char *slash = memchr(p + i, '/', n - i);
		size_t c = slash ? (size_t)(slash - (p + i)) : n - i;

		kid = name_find(&t->names, node, p + i, c);
		back = 0;
		if (t->ly && kid != NAME_NONE) {
			err = layer_back(t, node, kid, !slash, &back);
			if (err)
				return err;
		}
		if (kid == NAME_NONE || back) {
			if (!S_ISDIR(tar_node_st(t, node)->st_mode))
				return ORLOV_ERR_NOT_DIR;
			err = back ? 0 : name_add(&t->names, node, p + i, c, &kid);
			if (!err && grow_array(&t->ino, &t->ino_cap, t->names.nn,
					       sizeof(*t->ino), 256))
				err = ENOMEM;
			if (!err)
				err = tar_new_inode(t, &t->ino[kid]);
			if (err)
				return err;
			/* until its member comes */
			implicit_dir(&t->in[t->ino[kid]].st, st);
		}
		if (t->ly) {
			err = layer_touch(t, kid);
			if (err)
				return err;
		}
		node = kid;
		i += c + 1;
	}
	*out = node;
	return 0;
}

/* "./a//b/" -> "a/b"; ".." refused (the archive would leave the tree). */
static errcode_t normalize(const char *in, char **out, size_t *len)
{
	size_t n = strlen(in), i = 0, o = 0;
	char *p = malloc(n + 1);

	if (!p)
		return ENOMEM;
	while (i < n) {
		size_t c;

		while (i < n && in[i] == '/')
			i++;
		c = strcspn(in + i, "/");
		if (c == 2 && in[i] == '.' && in[i + 1] == '.') {
			free(p);
			return ORLOV_ERR_ARCHIVE_PATH;
		}
		if (c && !(c == 1 && in[i] == '.')) {
			if (o)
				p[o++] = '/';
			memcpy(p + o, in + i, c);
			o += c;
		}
		i += c;
	}
	p[o] = 0;
	*out = p;
	*len = o;
	return 0;
}

static errcode_t entry_stat(struct archive_entry *ae, struct stat *st)
{
	la_int64_t uid = archive_entry_uid(ae), gid = archive_entry_gid(ae);

	/* pax and base-256 headers hold more than ext2's 32 bits: refused
	 * as GNU tar refuses them, not cut to another owner (2^32: root) */
	if (uid < 0 || uid > UINT32_MAX || gid < 0 || gid > UINT32_MAX)
		return ORLOV_ERR_ARCHIVE_ID;
	memset(st, 0, sizeof(*st));
	st->st_mode = (mode_t)archive_entry_mode(ae);
	st->st_uid = (uid_t)uid;
	st->st_gid = (gid_t)gid;
	st->st_rdev = makedev((unsigned int)archive_entry_rdevmajor(ae),
			      (unsigned int)archive_entry_rdevminor(ae));
	st->st_size = S_ISREG(st->st_mode) ? archive_entry_size(ae) : 0;
	st->st_mtim.tv_sec = archive_entry_mtime(ae);
	st->st_mtim.tv_nsec = archive_entry_mtime_nsec(ae);
	st->st_atim = st->st_ctim = st->st_mtim;
	if (archive_entry_atime_is_set(ae)) {
		st->st_atim.tv_sec = archive_entry_atime(ae);
		st->st_atim.tv_nsec = archive_entry_atime_nsec(ae);
	}
	if (archive_entry_ctime_is_set(ae)) {
		st->st_ctim.tv_sec = archive_entry_ctime(ae);
		st->st_ctim.tv_nsec = archive_entry_ctime_nsec(ae);
	}
	return 0;
}

static errcode_t add_xattr(struct tinode *in, const char *name,
			   const void *value, size_t size)
{
	struct src_xattr *x;
	size_t cap = in->nx;

	if (grow_array(&in->x, &cap, in->nx + 1, sizeof(*in->x), 1))
		return ENOMEM;
	x = &in->x[in->nx];
	x->name = strdup(name);
	x->value = malloc(size ? size : 1);
	x->size = size;
	if (!x->name || !x->value) {
		free(x->name);
		free(x->value);
		return ENOMEM;
	}
	memcpy(x->value, value, size);
	in->nx++;
	return 0;
}

static int acl_tag(int tag)
{
	switch (tag) {
	case ARCHIVE_ENTRY_ACL_USER_OBJ: return 0x01;
	case ARCHIVE_ENTRY_ACL_USER: return 0x02;
	case ARCHIVE_ENTRY_ACL_GROUP_OBJ: return 0x04;
	case ARCHIVE_ENTRY_ACL_GROUP: return 0x08;
	case ARCHIVE_ENTRY_ACL_MASK: return 0x10;
	case ARCHIVE_ENTRY_ACL_OTHER: return 0x20;
	default: return -1;
	}
}

static int acl_cmp(const void *a, const void *b)
{
	const unsigned char *x = a, *y = b;
	uint32_t tx = get_le16(x), ty = get_le16(y);

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return get_le32(x + 4) < get_le32(y + 4) ? -1 :
	       get_le32(x + 4) > get_le32(y + 4);
}

/* The uid or gid a named entry stands for.  GNU tar writes names only
 * (libarchive's id is then -1): tar resolves them on the host it
 * extracts on, and so does this. */
static errcode_t acl_qualifier(int lt, int id, const char *who, uint32_t *out)
{
	char small[1024], *buf = small;
	size_t size = sizeof(small);
	errcode_t err;
	int r;

	if (id >= 0) {
		*out = (uint32_t)id;
		return 0;
	}
	if (!who || !*who)
		return ORLOV_ERR_ARCHIVE_ACL_NAME;
	for (;;) {
		struct passwd pw, *pwp = NULL;
		struct group gr, *grp = NULL;

		if (lt == 0x02) {
			r = getpwnam_r(who, &pw, buf, size, &pwp);
			if (!r && pwp)
				*out = (uint32_t)pwp->pw_uid;
		} else {
			r = getgrnam_r(who, &gr, buf, size, &grp);
			if (!r && grp)
				*out = (uint32_t)grp->gr_gid;
		}
		if (r != ERANGE || size >= (1 << 20)) {
			err = r ? (errcode_t)r :
			      !pwp && !grp ? ORLOV_ERR_ARCHIVE_ACL_NAME : 0;
			break;
		}
		if (buf != small)
			free(buf);
		size *= 2;
		buf = malloc(size);
		if (!buf)
			return ENOMEM;
	}
	if (buf != small)
		free(buf);
	return err;
}

/* libarchive's POSIX.1e ACL of one kind, as Linux's system.posix_acl_*
 * value (version 2, entries sorted by tag and id); *mask: its mask
 * entry's permissions, -1 without one. */
static errcode_t add_acl(struct archive_entry *ae, struct tinode *in,
			 int type, const char *name, int *mask)
{
	int n = archive_entry_acl_reset(ae, type), t, perm, tag, id, k = 0;
	const char *who;
	unsigned char *v;
	uint32_t q;
	size_t size;
	errcode_t err;

	*mask = -1;
	if (n <= 0)
		return 0;
	/* the access kind comes with the three entries of the mode */
	size = 4 + 8 * (size_t)(n + 3);
	v = calloc(1, size);
	if (!v)
		return ENOMEM;
	put_le32(v, 2);
	while (archive_entry_acl_next(ae, type, &t, &perm, &tag, &id, &who) ==
	       ARCHIVE_OK && k < n + 3) {
		unsigned char *e = v + 4 + 8 * k;
		int lt = acl_tag(tag);

		if (lt < 0) {
			free(v);
			return ORLOV_ERR_BAD_XATTR;
		}
		q = UINT32_MAX;
		if (lt == 0x02 || lt == 0x08) {
			err = acl_qualifier(lt, id, who, &q);
			if (err) {
				free(v);
				return err;
			}
		}
		if (lt == 0x10)
			*mask = perm & 7;
		put_le16(e, (uint32_t)lt);
		put_le16(e + 2, (uint32_t)perm & 7);
		put_le32(e + 4, q);
		k++;
	}
	qsort(v + 4, (size_t)k, 8, acl_cmp);
	err = add_xattr(in, name, v, 4 + 8 * (size_t)k);
	free(v);
	return err;
}

static errcode_t read_meta(struct archive_entry *ae, struct tinode *in)
{
	const char *name;
	const void *value;
	size_t size;
	errcode_t err = 0;
	int mask, unused;

	archive_entry_xattr_reset(ae);
	while (!err && archive_entry_xattr_next(ae, &name, &value, &size) ==
		       ARCHIVE_OK)
		err = add_xattr(in, name, value, size);
	if (!err)
		err = add_acl(ae, in, ARCHIVE_ENTRY_ACL_TYPE_ACCESS,
			      "system.posix_acl_access", &mask);
	/* libarchive gives the group entry's bits as the mode's; with a
	 * mask the kernel shows (and chmod sets) the mask there */
	if (!err && mask >= 0)
		in->st.st_mode = (in->st.st_mode & ~(mode_t)070) |
				 (mode_t)mask << 3;
	if (!err && S_ISDIR(in->st.st_mode))
		err = add_acl(ae, in, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT,
			      "system.posix_acl_default", &unused);
	return err;
}

void tar_inode_release(struct tinode *in)
{
	size_t i;

	for (i = 0; i < in->nx; i++) {
		free(in->x[i].name);
		free(in->x[i].value);
	}
	free(in->x);
	free(in->link);
	free(in->ext);
	in->x = NULL;
	in->nx = 0;
	in->link = NULL;
	in->ext = NULL;
	in->next = in->ecap = 0;
}

/* The member's data, to the spool: its stretches, holes left out. */
static errcode_t read_data(struct archive *a, struct tar_tree *t,
			   struct tinode *in)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	errcode_t err;
	int r;

	while ((r = archive_read_data_block(a, &buf, &size, &off)) ==
	       ARCHIVE_OK) {
		struct text *last = in->next ? &in->ext[in->next - 1] : NULL;

		if (!size)
			continue;
		err = pwrite_all(t->spool, buf, size, (off_t)t->spool_len);
		if (err) {
			t->spool_failed = "writing";	/* not the archive */
			return err;
		}
		if (last && last->loff + last->len == (uint64_t)off &&
		    last->soff + last->len == t->spool_len) {
			last->len += size;
		} else {
			if (grow_array(&in->ext, &in->ecap, in->next + 1,
				       sizeof(*in->ext), 4))
				return ENOMEM;
			in->ext[in->next].loff = (uint64_t)off;
			in->ext[in->next].len = size;
			in->ext[in->next].soff = t->spool_len;
			in->next++;
		}
		t->spool_len += size;
	}
	return r == ARCHIVE_EOF ? 0 : ORLOV_ERR_ARCHIVE;
}

/* A whiteout member (*wh = 1) applied to what lower layers gave. */
static errcode_t layer_member(struct tar_tree *t, const char *path,
			      size_t len, int *wh)
{
	const char *slash = memrchr(path, '/', len);
	size_t at = slash ? (size_t)(slash - path) + 1 : 0;
	uint32_t dir;
	size_t i = 0;

	*wh = 0;
	/* a whiteout is a name, never a directory of entries */
	while (i < at) {
		size_t c = strcspn(path + i, "/");

		if (layer_is_whiteout(path + i, c))
			return ORLOV_ERR_LAYER_WH_DIR;
		i += c + 1;
	}
	*wh = layer_is_whiteout(path + at, len - at);
	if (!*wh)
		return 0;
	dir = at ? find_path(t, path, at - 1) : 0;
	return layer_whiteout(t, dir, path + at, len - at);
}

/* One member: its name into the tree, its inode filled. */
errcode_t tar_add_member(struct archive *a, struct tar_tree *t,
			 struct archive_entry *ae, char **where)
{
	struct stat st;
	char *path = NULL, *lpath = NULL;
	size_t len, llen;
	const char *hl = archive_entry_hardlink(ae), *sl;
	uint32_t idx, ino = 0;
	struct tinode *in;
	errcode_t err;

	err = entry_stat(ae, &st);
	if (!err)
		err = normalize(archive_entry_pathname(ae) ?
				archive_entry_pathname(ae) : "", &path, &len);
	if (err)
		goto out;
	if (t->ly) {
		int wh;

		err = layer_member(t, path, len, &wh);
		if (err || wh)
			goto out;
	}
	if (hl) {
		err = normalize(hl, &lpath, &llen);
		if (err)
			goto out;
		idx = find_path(t, lpath, llen);
		if (idx == NAME_NONE || S_ISDIR(tar_node_st(t, idx)->st_mode)) {
			err = ORLOV_ERR_ARCHIVE_LINK;
			goto out;
		}
		ino = t->ino[idx];
	}
	if (!len && (hl || !S_ISDIR(st.st_mode))) {
		err = ORLOV_ERR_ARCHIVE_PATH;	/* the root, not a directory */
		goto out;
	}
	if (t->ly) {
		idx = find_path(t, path, len);
		err = idx == NAME_NONE ? 0 : layer_replace(t, idx, &st, !!hl);
		if (err)
			goto out;
	}
	err = node_at(t, path, len, &st, &idx);
	if (err)
		goto out;
	in = &t->in[t->ino[idx]];
	if (S_ISDIR(in->st.st_mode) && t->names.n[idx].nkids &&
	    (hl || !S_ISDIR(st.st_mode))) {
		err = ORLOV_ERR_ARCHIVE_DUP;	/* a file over a full directory */
		goto out;
	}
	if (hl) {
		/* a second name; with cpio's newc the data comes with the last */
		if (t->ino[idx] != ino) {
			if (in->st.st_nlink)
				in->st.st_nlink--;
			t->ino[idx] = ino;
			t->in[ino].st.st_nlink++;
		}
		if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > 0) {
			in = &t->in[ino];
			free(in->ext);
			in->ext = NULL;
			in->next = in->ecap = 0;
			in->st.st_size = archive_entry_size(ae);
			err = read_data(a, t, in);
		}
		goto out;
	}
	/* A later member of a name replaces the earlier one (a directory
	 * keeps its entries); an inode other names share is left to them. */
	if (in->st.st_nlink > 1 && !S_ISDIR(in->st.st_mode)) {
		in->st.st_nlink--;
		err = tar_new_inode(t, &t->ino[idx]);
		if (err)
			goto out;
	}
	in = &t->in[t->ino[idx]];
	tar_inode_release(in);
	in->st = st;
	in->st.st_nlink = 1;
	if (S_ISLNK(st.st_mode)) {
		sl = archive_entry_symlink(ae);
		in->link = strdup(sl ? sl : "");
		if (!in->link) {
			err = ENOMEM;
			goto out;
		}
		in->st.st_size = (off_t)strlen(in->link);
	}
	err = read_meta(ae, in);
	if (!err && S_ISREG(st.st_mode))
		err = read_data(a, t, in);
out:
	if (err && where && !*where)
		*where = strdup(archive_entry_pathname(ae) ?
				archive_entry_pathname(ae) : "");
	free(path);
	free(lpath);
	return err;
}

#endif
