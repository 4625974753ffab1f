// SPDX-License-Identifier: GPL-2.0-or-later
/* --fs-config: Android's canned fs_config (fsconfig.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/capability.h>

#include "source/fsconfig.h"
#include "source/walk.h"
#include "lib/orlov_err.h"

static const char caps_name[] = "security.capability";

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next field of *s, cut at its end; NULL when none is left. */
static char *next_field(char **s)
{
	char *p = *s, *f;

	while (blank(*p))
		p++;
	if (!*p)
		return NULL;
	f = p;
	while (*p && !blank(*p))
		p++;
	if (*p)
		*p++ = 0;
	*s = p;
	return f;
}

/* The path of the line @s: the root for a line starting with a blank (the
 * historical form), a quoted one, or the first field; *rest after it. */
static int line_path(char *s, char **path, char **rest)
{
	char *end;

	if (blank(*s)) {
		*path = s + strlen(s);	/* "" */
		*rest = s;
		return 0;
	}
	if (*s == '\'' || *s == '"') {
		end = strchr(s + 1, *s);
		if (!end || (end[1] && !blank(end[1])))
			return -1;
		*end = 0;
		*path = s + 1;
		*rest = end + 1;
		return 0;
	}
	*path = next_field(&s);
	*rest = s;
	return 0;
}

static int parse_octal_mode(const char *s, mode_t *mode)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 8)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return -1;
		v = v * 8 + (unsigned long)(*s - '0');
	}
	if (v > 07777)
		return -1;	/* a file type too: not what fs_config gives */
	*mode = (mode_t)v;
	return 0;
}

/* "capabilities=N", N as strtoull base 0 reads it (0x... hex), whole. */
static int parse_caps(const char *s, uint64_t *caps)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*caps = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/* One line into @l: 1 when it holds an entry, 0 blank or a comment, -1
 * malformed. */
static int parse_line(char *s, struct fsconfig_line *l)
{
	char *path, *rest, *f[3], *t;
	uint64_t v;
	int i;

	s[strcspn(s, "\r\n")] = 0;
	if (*s == '#' || !s[strspn(s, " \t")])
		return 0;
	if (line_path(s, &path, &rest) || !path)
		return -1;
	for (i = 0; i < 3; i++)
		if (!(f[i] = next_field(&rest)))
			return -1;
	memset(l, 0, sizeof(*l));
	if (parse_u64(f[0], UINT32_MAX, &v))
		return -1;
	l->uid = (uint32_t)v;
	if (parse_u64(f[1], UINT32_MAX, &v))
		return -1;
	l->gid = (uint32_t)v;
	if (parse_octal_mode(f[2], &l->mode))
		return -1;
	while ((t = next_field(&rest))) {
		if (!strncmp(t, "capabilities=", 13)) {
			if (parse_caps(t + 13, &l->caps))
				return -1;
		} else if (!strchr(t, '=')) {
			return -1;	/* libcutils ignores KEY=VALUE only */
		}
	}
	if (*path == '/')
		path++;
	l->path = strdup(path);
	return l->path ? 1 : -2;
}

/* By path, then by line: the last line of a path ends its run. */
static int line_cmp(const void *a, const void *b)
{
	const struct fsconfig_line *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* Sorted, one line per path: the last given. */
static void keep_last(struct fsconfig *fc)
{
	size_t i, n = 0;

	qsort(fc->l, fc->n, sizeof(*fc->l), line_cmp);
	for (i = 0; i < fc->n; i++) {
		if (i + 1 < fc->n && !strcmp(fc->l[i].path, fc->l[i + 1].path)) {
			free(fc->l[i].path);
			continue;
		}
		fc->l[n++] = fc->l[i];
		if (fc->l[i].caps &&
		    (!fc->caps_line || fc->l[i].line < fc->caps_line))
			fc->caps_line = fc->l[i].line;
	}
	fc->n = n;
}

errcode_t fsconfig_read(const char *file, struct fsconfig *fc,
			unsigned int *line)
{
	FILE *f;
	char *buf = NULL;
	size_t bcap = 0;
	struct stat st;
	errcode_t err = 0;
	int r;

	memset(fc, 0, sizeof(*fc));
	*line = 0;
	f = fopen(file, "r");
	if (!f)
		return (errcode_t)errno;
	/* a directory opens, and then every read fails: said as what it is */
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		return EISDIR;
	}
	while (!err && getline(&buf, &bcap, f) >= 0) {
		struct fsconfig_line l;

		++*line;
		r = parse_line(buf, &l);
		if (r < 0) {
			err = r == -1 ? ORLOV_ERR_FSCONFIG_SYNTAX : ENOMEM;
			break;
		}
		if (!r)
			continue;
		l.line = *line;
		if (grow_array(&fc->l, &fc->cap, fc->n + 1, sizeof(*fc->l), 64)) {
			free(l.path);
			err = ENOMEM;
			break;
		}
		fc->l[fc->n++] = l;
	}
	if (!err && ferror(f))
		err = EIO;
	free(buf);
	fclose(f);
	if (err) {
		if (err != ORLOV_ERR_FSCONFIG_SYNTAX)
			*line = 0;
		fsconfig_free(fc);
		return err;
	}
	*line = 0;
	keep_last(fc);
	return 0;
}

static int key_cmp(const void *key, const void *elt)
{
	return strcmp(key, ((const struct fsconfig_line *)elt)->path);
}

const struct fsconfig_line *fsconfig_find(const struct fsconfig *fc,
					  const char *path)
{
	if (!fc->n)
		return NULL;
	return bsearch(path, fc->l, fc->n, sizeof(*fc->l), key_cmp);
}

void fsconfig_free(struct fsconfig *fc)
{
	size_t i;

	for (i = 0; i < fc->n; i++)
		free(fc->l[i].path);
	free(fc->l);
	memset(fc, 0, sizeof(*fc));
}

void fsconfig_walk_start(struct fsconfig_walk *w, const struct fsconfig *fc,
			 const char *root)
{
	memset(w, 0, sizeof(*w));
	w->fc = fc;
	/* the table's paths have no leading '/': nor has the key */
	while (root && *root == '/')
		root++;
	w->root = root ? root : "";
}

/* The key of @rel: the source root's path in the image, then @rel. */
static errcode_t walk_key(struct fsconfig_walk *w, const char *rel)
{
	size_t rlen = strlen(w->root);
	errcode_t err;

	sb_truncate(&w->key, 0);
	err = sb_append(&w->key, w->root, rlen);
	if (!err && rlen && *rel)
		err = sb_append(&w->key, "/", 1);
	if (!err)
		err = sb_append(&w->key, rel, strlen(rel));
	return err;
}

/* security.capability as e2fsdroid writes it, little-endian as the
 * kernel reads it: revision 2, effective, @caps permitted. */
static void caps_value(unsigned char *v, uint64_t caps)
{
	memset(v, 0, 20);
	put_le32(v, VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE);
	put_le32(v + 4, (uint32_t)caps);		/* data[0].permitted */
	put_le32(v + 12, (uint32_t)(caps >> 32));	/* data[1].permitted */
}

static errcode_t set_caps(struct fsconfig_walk *w, struct src_entry *e,
			  uint64_t caps)
{
	size_t i, n = 0;

	if (grow_array(&w->x, &w->cap, e->nxattrs + 1, sizeof(*w->x), 8))
		return ENOMEM;
	for (i = 0; i < e->nxattrs; i++)
		if (strcmp(e->xattrs[i].name, caps_name))
			w->x[n++] = e->xattrs[i];
	caps_value(w->caps, caps);
	w->x[n].name = (char *)caps_name;
	w->x[n].value = w->caps;
	w->x[n++].size = sizeof(w->caps);
	e->xattrs = w->x;
	e->nxattrs = n;
	return 0;
}

errcode_t fsconfig_walk_apply(struct fsconfig_walk *w, struct src_entry *e)
{
	const struct fsconfig_line *l;
	errcode_t err;

	if (!w->fc)
		return 0;
	err = walk_key(w, e->path);
	if (err)
		return err;
	/* e2fsdroid leaves the root's lost+found to mke2fs: no line read */
	if (!strcmp(w->key.s, "lost+found"))
		return 0;
	l = fsconfig_find(w->fc, w->key.s);
	if (!l)	/* the target is mke2fs's or the image's, not the table's */
		return *e->path ? ORLOV_ERR_FSCONFIG_MISSING : 0;
	e->st.st_uid = l->uid;
	e->st.st_gid = l->gid;
	/* a symlink keeps the 0777 the kernel gives every symlink */
	if (!S_ISLNK(e->st.st_mode))
		e->st.st_mode = (e->st.st_mode & S_IFMT) | l->mode;
	e->setid_cleared = 0;	/* the line's mode is meant */
	/* without a mask the source's own stays, as in e2fsdroid */
	return l->caps ? set_caps(w, e, l->caps) : 0;
}

void fsconfig_walk_end(struct fsconfig_walk *w)
{
	free(w->x);
	sb_free(&w->key);
	memset(w, 0, sizeof(*w));
}
