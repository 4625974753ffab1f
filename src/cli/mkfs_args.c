// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The mke2fs command line as orlov-mkfs needs it: parsed with mke2fs's
 * own option letters (so that what mke2fs takes, and only that, is
 * understood the same), rebuilt without -d for the installed mke2fs.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/mkfs_args.h"
#include "lib/util.h"

/* mke2fs 1.47's getopt string: every letter it takes, and which take an
 * argument. */
static const char mke2fs_opts[] =
	"b:cd:e:g:i:jl:m:no:qr:s:t:vC:DE:FG:I:J:KL:M:N:O:R:ST:U:Vz:";

errcode_t words_add(struct words *w, const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		return ENOMEM;
	if (grow_array(&w->v, &w->cap, w->n + 1, sizeof(*w->v), 16)) {
		free(d);
		return ENOMEM;
	}
	w->v[w->n++] = d;
	return 0;
}

void words_free(struct words *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

/* One word from *sp on: quotes and backslashes as sh(1) reads them, no
 * expansion.  *sp is left after it. */
static errcode_t one_word(const char **sp, struct strbuf *b)
{
	const char *s = *sp;
	errcode_t err = 0;
	char q = 0;

	for (; !err && *s && (q || !strchr(" \t\n", *s)); s++) {
		if (q == '\'' && *s != '\'')
			err = sb_append(b, s, 1);
		else if (*s == q)
			q = 0;
		else if (!q && (*s == '\'' || *s == '"'))
			q = *s;
		else if (*s == '\\' && s[1] &&
			 (!q || strchr("\"\\$`\n", s[1]))) {
			s++;
			if (*s != '\n')	/* else a line continued */
				err = sb_append(b, s, 1);
		} else
			err = sb_append(b, s, 1);
	}
	*sp = s;
	return err ? err : q ? EINVAL : 0;
}

errcode_t words_split(const char *s, struct words *w)
{
	errcode_t err = 0;

	while (!err && s && *s) {
		struct strbuf b = { 0 };

		s += strspn(s, " \t\n");
		if (!*s)
			break;
		err = one_word(&s, &b);
		if (!err)
			err = words_add(w, b.len ? b.s : "");
		sb_free(&b);
	}
	return err;
}

/* -E's offset=N, if this -E gives one (mke2fs reads N as strtoull does,
 * base 0). */
static void ext_offset(const char *arg, uint64_t *offset)
{
	const char *p;

	for (p = arg; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, "offset=", 7))
			*offset = strtoull(p + 7, NULL, 0);
	}
}

/* What orlov-mkfs itself acts on; everything goes to @out but -d. */
static errcode_t take_option(struct mkfs_call *c, int opt, const char *arg)
{
	char flag[3] = { '-', (char)opt, 0 };
	errcode_t err;

	switch (opt) {
	case 'd':
		c->root = arg;
		return 0;	/* the engine's, not mke2fs's */
	case 'q': c->quiet = 1; break;
	case 'v': c->verbose = 1; break;
	case 'F': c->force++; break;
	case 'n': c->noaction = 1; break;
	case 'S': c->super_only = 1; break;
	case 'V': c->version = 1; break;
	case 'E': case 'R': ext_offset(arg, &c->offset); break;
	}
	err = words_add(&c->out, flag);
	if (!err && arg)
		err = words_add(&c->out, arg);
	return err;
}

errcode_t mkfs_args_parse(int argc, char **argv, struct mkfs_call *c)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	const char *base = strrchr(argv[0], '/');
	errcode_t err = 0;
	int opt, i, dash = 0;

	memset(c, 0, sizeof(*c));
	if (!v)
		return ENOMEM;
	base = base ? base + 1 : argv[0];
	/* orlov-mkfs by its own name: as mke2fs, type from -t or the
	 * configuration */
	c->name = strncmp(base, "mkfs.", 5) && strcmp(base, "mke2fs") &&
		  strcmp(base, "mke3fs") ? "mke2fs" : base;
	memcpy(v, argv, (size_t)argc * sizeof(*v));
	err = words_add(&c->out, c->name);
	optind = 0;	/* glibc: start afresh (the permutation too) */
	opterr = 0;
	while (!err && (opt = getopt(argc, v, mke2fs_opts)) != -1) {
		if (opt == '?' || opt == ':') {
			c->usage_error = 1;
			break;
		}
		err = take_option(c, opt, optarg);
	}
	for (i = optind; !err && i < argc; i++)
		dash |= v[i][0] == '-';
	if (!err && dash)
		err = words_add(&c->out, "--");
	c->dev_at = c->out.n;
	for (i = optind; !err && i < argc; i++)
		err = words_add(&c->out, v[i]);
	if (optind < argc)
		c->device = v[optind];
	c->has_size = argc - optind > 1;
	/* NULL-terminated for exec, the NULL not counted as a word */
	if (!err && !(err = words_add(&c->out, NULL)))
		c->out.n--;
	free(v);
	return err;
}

void mkfs_args_free(struct mkfs_call *c)
{
	words_free(&c->out);
}

/* The file this program runs from: /proc/self/exe, else argv[0] as the
 * shell found it. */
static int self_stat(const char *argv0, struct stat *st)
{
	const char *path = getenv("PATH");
	struct strbuf b = { 0 };
	int r = -1;

	if (!stat("/proc/self/exe", st))
		return 0;
	if (strchr(argv0, '/'))
		return stat(argv0, st);
	while (path && r) {
		size_t n = strcspn(path, ":");

		sb_truncate(&b, 0);
		sb_printf(&b, "%.*s/%s", (int)n, n ? path : ".", argv0);
		r = b.s ? stat(b.s, st) : -1;
		path = path[n] ? path + n + 1 : NULL;
	}
	sb_free(&b);
	return r;
}

/* @path an executable mke2fs that is not this program. */
static int real_mke2fs(const char *path, const struct stat *self, int have_self)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK) &&
	       !(have_self && st.st_dev == self->st_dev &&
		 st.st_ino == self->st_ino);
}

errcode_t mkfs_find_mke2fs(const char *argv0, char **out)
{
	static const char *const fallback[] = { "/usr/sbin/mke2fs", "/sbin/mke2fs" };
	const char *path = getenv("PATH");
	struct strbuf b = { 0 };
	struct stat self;
	int have_self = !self_stat(argv0, &self);
	size_t i;

	*out = NULL;
	while (path && !*out) {
		size_t n = strcspn(path, ":");

		sb_truncate(&b, 0);
		sb_printf(&b, "%.*s/mke2fs", (int)n, n ? path : ".");
		if (b.s && real_mke2fs(b.s, &self, have_self))
			*out = strdup(b.s);
		path = path[n] ? path + n + 1 : NULL;
	}
	for (i = 0; !*out && i < 2; i++)
		if (real_mke2fs(fallback[i], &self, have_self))
			*out = strdup(fallback[i]);
	sb_free(&b);
	return *out ? 0 : ENOENT;
}
