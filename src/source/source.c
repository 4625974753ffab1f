// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "source/source.h"
#include "source/selabel.h"
#include "source/fsconfig.h"
#include "source/tar.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* ---- the table ---------------------------------------------------------- */

/* The node for absolute @path, made with its parents as needed. */
static errcode_t dt_path(struct devtable *dt, const char *path,
			 unsigned int line, uint32_t *out)
{
	uint32_t n = 0, kid;
	const char *p = path;
	errcode_t err;

	if (*p != '/')
		return ORLOV_ERR_DEVTABLE_SYNTAX;
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len)
			break;
		if ((len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return ORLOV_ERR_DEVTABLE_SYNTAX;
		if (len > 255)
			return ORLOV_ERR_NAME_TOO_LONG;
		/* hashed on (parent, name): a series of 100,000 devices in
		 * one directory is read in linear time */
		kid = name_find(&dt->names, n, p, len);
		if (kid == NAME_NONE) {
			err = name_add(&dt->names, n, p, len, &kid);
			if (!err && grow_array(&dt->e, &dt->ecap, dt->names.nn,
					       sizeof(*dt->e), 64))
				err = ENOMEM;
			if (err)
				return err;
			memset(&dt->e[kid], 0, sizeof(*dt->e));
			/* a parent's errors name its first line */
			dt->e[kid].line = line;
		}
		n = kid;
		p += len;
	}
	*out = n;	/* 0 for "/": the target directory itself */
	return 0;
}

/* A number, or "-" for none (0), in @base. */
static int field_num(const char *s, int base, unsigned long max,
		     unsigned long *v)
{
	char *end;

	if (!strcmp(s, "-")) {
		*v = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, base);
	return errno || *end || *v > max ? -1 : 0;
}

static errcode_t dt_set(struct dt_entry *n, char type, unsigned long mode,
			unsigned long uid, unsigned long gid,
			unsigned long major, unsigned long minor,
			unsigned int line)
{
	if (n->type && n->type != type)
		return ORLOV_ERR_DEVTABLE_SYNTAX;	/* twice, two types */
	n->type = type;
	n->mode = (mode_t)(mode & 07777);
	n->uid = (uid_t)uid;
	n->gid = (gid_t)gid;
	n->rdev = makedev((unsigned int)major, (unsigned int)minor);
	n->line = line;
	return 0;
}

static errcode_t dt_line(struct devtable *dt, char *s, unsigned int line)
{
	/* genext2fs and makedevs take a line cut short after the mode:
	 * the fields left out are "-" (0; no series) */
	char *f[11] = { NULL, NULL, NULL, "-", "-", "-", "-", "-", "-", "-" },
	     *save = NULL, *t;
	unsigned long mode, uid, gid, major, minor, start, inc, count, i;
	uint32_t n;
	errcode_t err;
	int k = 0;

	for (t = strtok_r(s, " \t\r\n", &save); t && *t != '#' && k < 11;
	     t = strtok_r(NULL, " \t\r\n", &save))
		f[k++] = t;
	if (k == 0)
		return 0;	/* blank, or a comment */
	if (k < 3 || k > 10 || f[1][1] || !strchr("dfcbp", f[1][0]) ||
	    field_num(f[2], 8, 07777, &mode) ||
	    field_num(f[3], 10, UINT32_MAX, &uid) ||
	    field_num(f[4], 10, UINT32_MAX, &gid) ||
	    field_num(f[5], 10, 4095, &major) ||
	    field_num(f[6], 10, 1048575, &minor) ||
	    field_num(f[7], 10, 1000000, &start) ||
	    field_num(f[8], 10, 1048575, &inc) ||
	    field_num(f[9], 10, 100000, &count))
		return ORLOV_ERR_DEVTABLE_SYNTAX;
	if (!count || (f[1][0] != 'c' && f[1][0] != 'b')) {
		err = dt_path(dt, f[0], line, &n);
		/* "/" sets the target's mode and owners, as genext2fs sets
		 * its root's: a directory, nothing else */
		if (!err && !n && f[1][0] != 'd')
			err = ORLOV_ERR_DEVTABLE_SYNTAX;
		if (!err)
			err = dt_set(&dt->e[n], f[1][0], mode, uid, gid, major,
				     minor, line);
		dt->entries += !err;
		return err;
	}
	/* makedevs: NAMEstart .. NAME(start+count-1), minors counting up
	 * by inc from minor */
	for (i = 0; i < count; i++) {
		struct strbuf b = { 0 };

		err = sb_printf(&b, "%s%lu", f[0], start + i);
		if (!err)
			err = dt_path(dt, b.s, line, &n);
		sb_free(&b);
		if (!err && minor + i * inc > 1048575)
			err = ORLOV_ERR_DEVTABLE_SYNTAX;
		if (!err)
			err = dt_set(&dt->e[n], f[1][0], mode, uid, gid, major,
				     minor + i * inc, line);
		if (err)
			return err;
		dt->entries++;
	}
	return 0;
}

errcode_t devtable_read(const char *path, struct devtable *dt,
			unsigned int *line)
{
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;
	struct stat st;
	errcode_t err;

	memset(dt, 0, sizeof(*dt));
	*line = 0;
	err = name_tree_init(&dt->names);
	if (!err && grow_array(&dt->e, &dt->ecap, 1, sizeof(*dt->e), 64))
		err = ENOMEM;
	if (err) {
		devtable_free(dt);
		return err;
	}
	memset(&dt->e[0], 0, sizeof(*dt->e));
	dt->e[0].type = 'd';
	f = fopen(path, "r");
	if (!f) {
		err = (errcode_t)errno;
		devtable_free(dt);
		return err;
	}
	if (fstat(fileno(f), &st)) {
		err = (errcode_t)errno;
		goto out;
	}
	/* a directory opens, and then every read fails: said as what it is */
	if (S_ISDIR(st.st_mode)) {
		err = EISDIR;
		goto out;
	}
	dt->time = st.st_mtim;
	while (!err && getline(&buf, &cap, f) >= 0) {
		++*line;
		err = dt_line(dt, buf, *line);
	}
	if (!err && ferror(f))
		err = EIO;
	if (!err) {
		*line = 0;
		name_tree_sort(&dt->names);
	}
out:
	free(buf);
	fclose(f);
	if (err)
		devtable_free(dt);
	return err;
}

void devtable_free(struct devtable *dt)
{
	name_tree_free(&dt->names);
	free(dt->e);
	memset(dt, 0, sizeof(*dt));
}

/* ---- the merged walk ----------------------------------------------------- */

struct sframe {
	uint32_t n;		/* this directory's table node, or NAME_NONE */
	uint32_t next;		/* its first kid not yet created */
	size_t path_len;	/* its path in sw.path */
};

/* A directory of the table being created, not in the source. */
struct synframe {
	uint32_t n, next;
	size_t parent_len;	/* sw.path before its name */
};

struct sw {
	const struct walk_visitor *in;
	const struct meta_rules *r;
	struct devtable *dt;
	struct sframe *st;
	size_t depth, cap;
	struct synframe *syn;
	size_t syn_cap;
	struct strbuf path;
	struct selabel lab;	/* --file-contexts, when labels is set */
	int labels;
	struct fsconfig_walk fcw;	/* --fs-config */
};

static errcode_t sw_fail(struct sw *w, errcode_t err, const char *what,
			 const char *path)
{
	if (w->in->error)
		w->in->error(w->in->ctx, err, what, path);
	return err;
}

/* Enter the source directory @e (table node @n): sw.path becomes its
 * path, copying only its name onto its parent's, so that a deep tree
 * costs time linear in its names. */
static errcode_t sw_push(struct sw *w, uint32_t n, const struct src_entry *e)
{
	size_t parent = w->depth ? w->st[w->depth - 1].path_len : 0, len;
	struct sframe *f;

	if (grow_array(&w->st, &w->cap, w->depth + 1, sizeof(*w->st), 16))
		return ENOMEM;
	len = !w->depth ? 0 : parent ? parent + 1 + e->name_len : e->name_len;
	f = &w->st[w->depth++];
	f->n = n;
	f->next = 0;
	f->path_len = len;
	sb_truncate(&w->path, parent);
	return sb_append(&w->path, e->path + parent, len - parent);
}

static mode_t dt_mode(char type)
{
	switch (type) {
	case 'd': return S_IFDIR;
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	case 'p': return S_IFIFO;
	default: return S_IFREG;
	}
}

/* What failed, for the visitor's error report: the table line. */
static const char *dt_what(struct sw *w, uint32_t n)
{
	snprintf(w->dt->what, sizeof(w->dt->what),
		 "applying device table line %u to", w->dt->e[n].line);
	return w->dt->what;
}

/* --fs-config's line (fsconfig.h: applied last), then --file-contexts:
 * @x's attributes with its label (selabel.h). */
static errcode_t sw_label(struct sw *w, struct src_entry *x)
{
	errcode_t err = fsconfig_walk_apply(&w->fcw, x);

	if (err)
		return sw_fail(w, err, "looking up the fs_config line of",
			       x->path);
	if (!w->labels)
		return 0;
	err = selabel_apply(&w->lab, x->path, x->st.st_mode, x->xattrs,
			    x->nxattrs, &x->xattrs, &x->nxattrs);
	return err ? sw_fail(w, err, "looking up the file context of",
			     x->path) : 0;
}

/* The entry of table node @n, absent from the source, at sw.path. */
static errcode_t synth_entry(struct sw *w, uint32_t n, struct src_entry *e)
{
	const struct dt_entry *d = &w->dt->e[n];

	memset(e, 0, sizeof(*e));
	e->path = w->path.s;
	e->name = name_of(&w->dt->names, n);
	e->name_len = w->dt->names.n[n].len;
	e->st.st_mode = dt_mode(d->type) | d->mode;
	e->st.st_nlink = d->type == 'd' ? 2 : 1;
	e->st.st_uid = d->uid;
	e->st.st_gid = d->gid;
	e->st.st_rdev = d->rdev;
	e->st.st_atim = e->st.st_mtim = e->st.st_ctim = w->dt->time;
	meta_clamp_time(w->r, &e->st.st_atim);
	meta_clamp_time(w->r, &e->st.st_mtim);
	meta_clamp_time(w->r, &e->st.st_ctim);
	return sw_label(w, e);
}

/* Create @n below sw.path: a leaf, or a directory entered (*entered;
 * sw.path is then its path, *parent_len its parent's). */
static errcode_t synth_start(struct sw *w, uint32_t n, size_t *parent_len,
			     int *entered)
{
	const struct dt_entry *d = &w->dt->e[n];
	struct src_entry e;
	errcode_t err = 0;

	*parent_len = w->path.len;
	*entered = 0;
	if (*parent_len)
		err = sb_append(&w->path, "/", 1);
	if (!err)
		err = sb_append(&w->path, name_of(&w->dt->names, n),
				w->dt->names.n[n].len);
	if (err)
		return err;
	if (!d->type || d->type == 'f') {
		/* a parent with no 'd' line, or a file to change: the
		 * source must have them */
		return sw_fail(w, ORLOV_ERR_DEVTABLE_MISSING, dt_what(w, n),
			       w->path.s);
	}
	err = synth_entry(w, n, &e);
	if (err)
		return err;
	if (d->type != 'd') {
		err = w->in->leaf(w->in->ctx, &e);
		sb_truncate(&w->path, *parent_len);
		return err;
	}
	err = w->in->enter_dir(w->in->ctx, &e);
	*entered = !err;
	return err;
}

/* Create @top, absent from the source, and (a directory) all below it;
 * the directories open are on the heap, however deep the table goes. */
static errcode_t sw_synth(struct sw *w, uint32_t top)
{
	size_t base = w->path.len, depth = 0, parent_len;
	struct src_entry e;
	int entered;
	errcode_t err = synth_start(w, top, &parent_len, &entered);

	if (!err && entered) {
		if (grow_array(&w->syn, &w->syn_cap, 1, sizeof(*w->syn), 16))
			err = ENOMEM;
		else
			w->syn[depth++] = (struct synframe){ top, 0, parent_len };
	}
	while (!err && depth) {
		struct synframe *f = &w->syn[depth - 1];
		const struct name_node *d = &w->dt->names.n[f->n];

		if (f->next < d->nkids) {
			uint32_t k = d->kids[f->next++];

			err = synth_start(w, k, &parent_len, &entered);
			if (err || !entered)
				continue;
			if (grow_array(&w->syn, &w->syn_cap, depth + 1,
				       sizeof(*w->syn), 16))
				err = ENOMEM;
			else
				w->syn[depth++] =
					(struct synframe){ k, 0, parent_len };
			continue;
		}
		err = synth_entry(w, f->n, &e);
		if (!err)
			err = w->in->leave_dir(w->in->ctx, &e);
		sb_truncate(&w->path, f->parent_len);
		depth--;
	}
	sb_truncate(&w->path, base);
	return err;
}

/* Create the current directory's table entries that sort before @name
 * (all of them if @name is NULL); return the one named @name, if any. */
static errcode_t sw_before(struct sw *w, const char *name, size_t len,
			   uint32_t *match)
{
	struct sframe *f = &w->st[w->depth - 1];
	const struct name_tree *t;
	errcode_t err;
	int cmp;

	*match = NAME_NONE;
	if (f->n == NAME_NONE)
		return 0;
	t = &w->dt->names;
	sb_truncate(&w->path, f->path_len);
	while (f->next < t->n[f->n].nkids) {
		uint32_t k = t->n[f->n].kids[f->next];

		cmp = name ? name_bytes_cmp(name_of(t, k), t->n[k].len, name,
					   len) : -1;
		if (cmp > 0)
			break;
		f->next++;
		if (cmp == 0) {
			*match = k;
			break;
		}
		err = sw_synth(w, k);
		f = &w->st[w->depth - 1];
		if (err)
			return err;
	}
	return 0;
}

/* The source entry @e with the rules and its table line @n applied. */
static errcode_t sw_entry(struct sw *w, const struct src_entry *e,
			  uint32_t node, struct src_entry *x)
{
	const struct dt_entry *n;

	*x = *e;
	x->setid_cleared = meta_apply(w->r, &x->st);
	x->table_attrs = 0;
	if (node == NAME_NONE)
		return sw_label(w, x);
	n = &w->dt->e[node];
	if (n->type ? dt_mode(n->type) != (e->st.st_mode & S_IFMT) :
		      !S_ISDIR(e->st.st_mode))
		return sw_fail(w, ORLOV_ERR_DEVTABLE_TYPE, dt_what(w, node),
			       e->path);
	if (!n->type)
		return sw_label(w, x);
	/* the table's mode is meant, set-ID bits included */
	x->st.st_mode = (e->st.st_mode & S_IFMT) | n->mode;
	x->setid_cleared = 0;
	x->table_attrs = 1;
	x->st.st_uid = n->uid;
	x->st.st_gid = n->gid;
	if (n->type == 'c' || n->type == 'b')
		x->st.st_rdev = n->rdev;
	return sw_label(w, x);
}

static errcode_t sw_enter(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	uint32_t n = NAME_NONE;
	struct src_entry x;
	errcode_t err;

	if (!w->depth) {
		/* a line for "/" (its line number set) is the target's */
		err = sw_entry(w, e, w->dt && w->dt->e[0].line ? 0 : NAME_NONE,
			       &x);
		if (!err)
			err = sw_push(w, w->dt ? 0 : NAME_NONE, e);
		return err ? err : w->in->enter_dir(w->in->ctx, &x);
	}
	err = sw_before(w, e->name, e->name_len, &n);
	if (!err)
		err = sw_entry(w, e, n, &x);
	if (!err)
		err = w->in->enter_dir(w->in->ctx, &x);
	return err ? err : sw_push(w, n, e);
}

static errcode_t sw_leave(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	uint32_t n;
	struct src_entry x;
	errcode_t err = sw_before(w, NULL, 0, &n);

	if (err)
		return err;
	w->depth--;
	x = *e;
	x.setid_cleared = meta_apply(w->r, &x.st);
	err = sw_label(w, &x);
	return err ? err : w->in->leave_dir(w->in->ctx, &x);
}

static errcode_t sw_leaf(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	uint32_t n;
	struct src_entry x;
	errcode_t err = sw_before(w, e->name, e->name_len, &n);

	if (!err)
		err = sw_entry(w, e, n, &x);
	return err ? err : w->in->leaf(w->in->ctx, &x);
}

static void sw_error(void *ctx, errcode_t err, const char *what,
		     const char *path)
{
	struct sw *w = ctx;

	if (w->in->error)
		w->in->error(w->in->ctx, err, what, path);
}

static void sw_scratch_error(void *ctx, errcode_t err, const char *doing)
{
	struct sw *w = ctx;

	if (w->in->scratch_error)
		w->in->scratch_error(w->in->ctx, err, doing);
	else if (w->in->error)
		w->in->error(w->in->ctx, err, "reading directory", "");
}

errcode_t source_walk(const struct source *src, const struct walk_opts *wo,
		      const struct meta_rules *r, struct devtable *dt,
		      const struct walk_visitor *v)
{
	struct sw w = { .in = v, .r = r, .dt = dt };
	struct walk_visitor wv = {
		.enter_dir = sw_enter, .leave_dir = sw_leave, .leaf = sw_leaf,
		.error = sw_error, .scratch_error = sw_scratch_error, .ctx = &w,
	};
	errcode_t err = 0;

	fsconfig_walk_start(&w.fcw, r->fs_config, r->label_root);
	if (r->file_contexts) {
		err = selabel_start(&w.lab, r->file_contexts, r->label_root);
		w.labels = !err;
		if (err && v->error)
			v->error(v->ctx, err, "reading the file contexts",
				 r->file_contexts);
	}
	if (!err)
		err = src->tar ? tar_walk(src->tar, wo, &wv) :
				 walk_tree(src->dir, wo, &wv);
	selabel_end(&w.lab);
	fsconfig_walk_end(&w.fcw);
	free(w.st);
	free(w.syn);
	sb_free(&w.path);
	return err;
}
