// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "source.h"
#include "tar.h"
#include "util.h"
#include "orlov_err.h"

/* ---- the table ---------------------------------------------------------- */

static struct dt_node *dt_child(struct dt_node *p, const char *name,
				size_t len)
{
	size_t i;

	/* Tables are short (tens to a few thousand lines): a scan will do
	 * while reading; the walk uses the sorted order. */
	for (i = 0; i < p->nkids; i++)
		if (p->kids[i].len == len && !memcmp(p->kids[i].name, name, len))
			return &p->kids[i];
	if (grow_array(&p->kids, &p->cap, p->nkids + 1, sizeof(*p->kids), 4))
		return NULL;
	p = memset(&p->kids[p->nkids++], 0, sizeof(*p->kids));
	p->name = strndup(name, len);
	p->len = len;
	return p->name ? p : NULL;
}

/* The node for absolute @path, made with its parents as needed. */
static errcode_t dt_path(struct devtable *dt, const char *path,
			 unsigned int line, struct dt_node **out)
{
	struct dt_node *n = &dt->root;
	const char *p = path;

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
		n = dt_child(n, p, len);
		if (!n)
			return ENOMEM;
		if (!n->line)
			n->line = line;	/* a parent's errors name its first line */
		p += len;
	}
	if (n == &dt->root)
		return ORLOV_ERR_DEVTABLE_SYNTAX;	/* "/": --root-owner */
	*out = n;
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

static errcode_t dt_set(struct dt_node *n, char type, unsigned long mode,
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
	char *f[11], *save = NULL, *t;
	unsigned long mode, uid, gid, major, minor, start, inc, count, i;
	struct dt_node *n;
	errcode_t err;
	int k = 0;

	for (t = strtok_r(s, " \t\r\n", &save); t && k < 11;
	     t = strtok_r(NULL, " \t\r\n", &save))
		f[k++] = t;
	if (k == 0 || f[0][0] == '#')
		return 0;
	if (k != 10 || f[1][1] || !strchr("dfcbp", f[1][0]) ||
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
		if (!err)
			err = dt_set(n, f[1][0], mode, uid, gid, major, minor,
				     line);
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
			err = dt_set(n, f[1][0], mode, uid, gid, major,
				     minor + i * inc, line);
		if (err)
			return err;
		dt->entries++;
	}
	return 0;
}

static int dt_cmp(const void *a, const void *b)
{
	const struct dt_node *x = a, *y = b;

	return walk_name_cmp(x->name, x->len, y->name, y->len);
}

static void dt_sort(struct dt_node *n)
{
	size_t i;

	if (n->nkids > 1)
		qsort(n->kids, n->nkids, sizeof(*n->kids), dt_cmp);
	for (i = 0; i < n->nkids; i++)
		dt_sort(&n->kids[i]);
}

errcode_t devtable_read(const char *path, struct devtable *dt,
			unsigned int *line)
{
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;
	struct stat st;
	errcode_t err = 0;

	memset(dt, 0, sizeof(*dt));
	dt->root.type = 'd';
	*line = 0;
	f = fopen(path, "r");
	if (!f)
		return (errcode_t)errno;
	if (fstat(fileno(f), &st)) {
		err = (errcode_t)errno;
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
		dt_sort(&dt->root);
	}
out:
	free(buf);
	fclose(f);
	if (err)
		devtable_free(dt);
	return err;
}

static void dt_free(struct dt_node *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		dt_free(&n->kids[i]);
		free(n->kids[i].name);
	}
	free(n->kids);
}

void devtable_free(struct devtable *dt)
{
	dt_free(&dt->root);
	memset(dt, 0, sizeof(*dt));
}

/* ---- the merged walk ----------------------------------------------------- */

struct sframe {
	const struct dt_node *n;	/* this directory's table node, or NULL */
	size_t next;			/* its first kid not yet created */
	size_t path_len;		/* its path in sw.path */
};

struct sw {
	const struct walk_visitor *in;
	const struct meta_rules *r;
	struct devtable *dt;
	struct sframe *st;
	size_t depth, cap;
	struct strbuf path;
};

static errcode_t sw_fail(struct sw *w, errcode_t err, const char *what,
			 const char *path)
{
	if (w->in->error)
		w->in->error(w->in->ctx, err, what, path);
	return err;
}

static errcode_t sw_push(struct sw *w, const struct dt_node *n,
			 const char *path, size_t len)
{
	struct sframe *f;

	if (grow_array(&w->st, &w->cap, w->depth + 1, sizeof(*w->st), 16))
		return ENOMEM;
	f = &w->st[w->depth++];
	f->n = n;
	f->next = 0;
	sb_truncate(&w->path, 0);
	f->path_len = len;
	return sb_append(&w->path, path, len);
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
static const char *dt_what(struct sw *w, const struct dt_node *n)
{
	snprintf(w->dt->what, sizeof(w->dt->what),
		 "applying device table line %u to", n->line);
	return w->dt->what;
}

/* Create @n, absent from the source, and (a directory) all below it. */
static errcode_t sw_synth(struct sw *w, const struct dt_node *n)
{
	struct src_entry e;
	size_t parent_len = w->path.len, i;
	errcode_t err;

	if (parent_len)
		err = sb_append(&w->path, "/", 1);
	else
		err = 0;
	if (!err)
		err = sb_append(&w->path, n->name, n->len);
	if (err)
		return err;
	if (!n->type || n->type == 'f') {
		/* a parent with no 'd' line, or a file to change: the
		 * source must have them */
		err = sw_fail(w, ORLOV_ERR_DEVTABLE_MISSING, dt_what(w, n),
			      w->path.s);
		sb_truncate(&w->path, parent_len);
		return err;
	}
	memset(&e, 0, sizeof(e));
	e.path = w->path.s;
	e.name = n->name;
	e.name_len = n->len;
	e.st.st_mode = dt_mode(n->type) | n->mode;
	e.st.st_nlink = n->type == 'd' ? 2 : 1;
	e.st.st_uid = n->uid;
	e.st.st_gid = n->gid;
	e.st.st_rdev = n->rdev;
	e.st.st_atim = e.st.st_mtim = e.st.st_ctim = w->dt->time;
	meta_clamp_time(w->r, &e.st.st_atim);
	meta_clamp_time(w->r, &e.st.st_mtim);
	meta_clamp_time(w->r, &e.st.st_ctim);
	if (n->type != 'd') {
		err = w->in->leaf(w->in->ctx, &e);
	} else {
		err = w->in->enter_dir(w->in->ctx, &e);
		for (i = 0; !err && i < n->nkids; i++)
			err = sw_synth(w, &n->kids[i]);
		if (!err) {
			e.path = w->path.s;	/* the buffer may have moved */
			err = w->in->leave_dir(w->in->ctx, &e);
		}
	}
	sb_truncate(&w->path, parent_len);
	return err;
}

/* Create the current directory's table entries that sort before @name
 * (all of them if @name is NULL); return the one named @name, if any. */
static errcode_t sw_before(struct sw *w, const char *name, size_t len,
			   const struct dt_node **match)
{
	struct sframe *f = &w->st[w->depth - 1];
	errcode_t err;
	int cmp;

	*match = NULL;
	if (!f->n)
		return 0;
	sb_truncate(&w->path, f->path_len);
	while (f->next < f->n->nkids) {
		const struct dt_node *k = &f->n->kids[f->next];

		cmp = name ? walk_name_cmp(k->name, k->len, name, len) : -1;
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
			  const struct dt_node *n, struct src_entry *x)
{
	*x = *e;
	meta_apply(w->r, &x->st);
	if (!n)
		return 0;
	if (n->type ? dt_mode(n->type) != (e->st.st_mode & S_IFMT) :
		      !S_ISDIR(e->st.st_mode))
		return sw_fail(w, ORLOV_ERR_DEVTABLE_TYPE, dt_what(w, n), e->path);
	if (!n->type)
		return 0;
	x->st.st_mode = (e->st.st_mode & S_IFMT) | n->mode;
	x->st.st_uid = n->uid;
	x->st.st_gid = n->gid;
	if (n->type == 'c' || n->type == 'b')
		x->st.st_rdev = n->rdev;
	return 0;
}

static errcode_t sw_enter(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	const struct dt_node *n = NULL;
	struct src_entry x;
	errcode_t err;

	if (!w->depth) {
		err = sw_entry(w, e, NULL, &x);
		if (!err)
			err = sw_push(w, w->dt ? &w->dt->root : NULL, "", 0);
		return err ? err : w->in->enter_dir(w->in->ctx, &x);
	}
	err = sw_before(w, e->name, e->name_len, &n);
	if (!err)
		err = sw_entry(w, e, n, &x);
	if (!err)
		err = w->in->enter_dir(w->in->ctx, &x);
	return err ? err : sw_push(w, n, e->path, strlen(e->path));
}

static errcode_t sw_leave(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	const struct dt_node *n;
	struct src_entry x;
	errcode_t err = sw_before(w, NULL, 0, &n);

	if (err)
		return err;
	w->depth--;
	x = *e;
	meta_apply(w->r, &x.st);
	return w->in->leave_dir(w->in->ctx, &x);
}

static errcode_t sw_leaf(void *ctx, const struct src_entry *e)
{
	struct sw *w = ctx;
	const struct dt_node *n;
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

errcode_t source_walk(const struct source *src, const struct walk_opts *wo,
		      const struct meta_rules *r, struct devtable *dt,
		      const struct walk_visitor *v)
{
	struct sw w = { .in = v, .r = r, .dt = dt };
	struct walk_visitor wv = {
		.enter_dir = sw_enter, .leave_dir = sw_leave, .leaf = sw_leaf,
		.error = sw_error, .ctx = &w,
	};
	errcode_t err = src->tar ? tar_walk(src->tar, wo, &wv) :
				   walk_tree(src->dir, wo, &wv);

	free(w.st);
	sb_free(&w.path);
	return err;
}
