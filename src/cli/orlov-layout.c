// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-layout: show, compare and check where an ext2/ext3 image keeps
 * its inodes and blocks, so that orlov-populate's placement can be
 * tested against images the kernel wrote.  Images are only ever opened
 * read-only.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include "image/image_read.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "source/walk.h"
#include "source/meta.h"

#define PROG "orlov-layout"

enum command { CMD_NONE, CMD_DUMP, CMD_DIFF, CMD_STATS, CMD_VERIFY };

struct options {
	enum command cmd;
	const char *image;	/* IMAGE, or EXPECTED for diff */
	const char *image2;	/* ACTUAL for diff */
	const char *source;	/* SOURCE for verify */
	char *path;		/* normalized PATH, "/" by default */
	struct meta_rules meta;	/* verify: what populate did to owners, times */
	int help, version;
};

static void usage(FILE *f)
{
	fputs(
"Usage: orlov-layout dump IMAGE [PATH]\n"
"       orlov-layout diff EXPECTED.img ACTUAL.img [PATH]\n"
"       orlov-layout stats IMAGE\n"
"       orlov-layout verify [--all-root] [--uid-map MAP] [--gid-map MAP]\n"
"                           [--clamp] IMAGE SOURCE [PATH]\n"
"       orlov-layout -h|--help\n"
"       orlov-layout -V|--version\n"
"\n"
"Show where an ext2/ext3 image keeps its inodes and blocks.  Images are\n"
"opened read-only and never mounted.\n"
"\n"
"Paths are walked from PATH (default /) depth first, a directory before its\n"
"entries, entries sorted bytewise by name, \".\" and \"..\" skipped; hard links\n"
"appear under each of their paths.  Paths are printed absolute, with bytes\n"
"below 0x21, above 0x7e and '%' written as %XX.\n"
"\n"
"  dump    one line per path:\n"
"            PATH ino=N group=G TYPE blocks=LIST[ xattr=BLOCK xrefs=R xcrc=C]\n"
"          TYPE is dir, file, symlink, fifo, sock, chr or blk; LIST is the\n"
"          inode's blocks in logical order, each indirect block right before\n"
"          the blocks it maps, holes skipped, as ranges a-b of consecutive\n"
"          numbers or single numbers, comma-separated; - when empty.  R is\n"
"          the attribute block's reference count, C the CRC32C of its bytes.\n"
"  diff    compare the dump lines (inode number, type, block list, xattr\n"
"          block and its contents) of every path present in either image;\n"
"          print the first differing path (\"first difference: PATH\",\n"
"          \"expected: LINE\", \"actual:   LINE\", LINE being a dump line or\n"
"          \"missing\"), then\n"
"          \"paths=N same_inode=N same_blocks=N\".\n"
"  stats   per group \"group=G inodes_used=N dirs=N blocks_used=N\" from the\n"
"          group descriptors, then \"groups=N dirs=N top_level_dirs=N\n"
"          top_level_groups=N\" (directories directly under /, and how many\n"
"          distinct groups hold them).\n"
"  verify  compare the image subtree at PATH with the host directory SOURCE:\n"
"          names, type, permission bits, uid, gid, size, file data, symlink\n"
"          targets, device numbers, mtime and ctime, link counts, extended\n"
"          attributes: those in the inode (after i_extra_isize in large\n"
"          inodes, where ext4 and mke2fs -d put them) and those in the\n"
"          attribute block, ACLs included; a name stored twice is a\n"
"          mismatch.  Each difference is printed as\n"
"          \"mismatch: PATH: what (expected X, got Y)\"; the last line is\n"
"          \"verified=N mismatches=M\".\n"
"          SOURCE's owners and times are first changed as orlov-populate\n"
"          changes them: --all-root, --uid-map, --gid-map as given to it;\n"
"          --clamp: times after SOURCE_DATE_EPOCH (which must be set in the\n"
"          environment) become SOURCE_DATE_EPOCH.\n"
"\n"
"Exit status: 0 when all is well (diff: identical, verify: no mismatch),\n"
"1 when the images differ or mismatches were found, 2 on errors.\n",
	      f);
}

static errcode_t parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const struct option verify_opts[] = {
		{ "all-root", no_argument, NULL, 'r' },
		{ "uid-map", required_argument, NULL, 'u' },
		{ "gid-map", required_argument, NULL, 'g' },
		{ "clamp", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = "/";
	const char *cmd;
	int c, nargs, maxargs;

	memset(o, 0, sizeof(*o));
	/* "+": options end at the command, so image names may start with -. */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			o->help = 1;
			return 0;
		case 'V':
			o->version = 1;
			return 0;
		default:
			return ORLOV_ERR_USAGE;
		}
	}
	if (optind >= argc)
		return ORLOV_ERR_USAGE;
	cmd = argv[optind++];
	nargs = argc - optind;
	if (!strcmp(cmd, "dump")) {
		o->cmd = CMD_DUMP;
		maxargs = 2;
	} else if (!strcmp(cmd, "diff")) {
		o->cmd = CMD_DIFF;
		maxargs = 3;
	} else if (!strcmp(cmd, "stats")) {
		o->cmd = CMD_STATS;
		maxargs = 1;
	} else if (!strcmp(cmd, "verify")) {
		o->cmd = CMD_VERIFY;
		maxargs = 3;
		/* its options, between the command and IMAGE */
		argv += optind - 1;
		argc -= optind - 1;
		optind = 0;
		while ((c = getopt_long(argc, argv, "+", verify_opts, NULL)) != -1) {
			if (c == 'r')
				o->meta.all_root = 1;
			else if (c == 'c') {
				/* SOURCE_DATE_EPOCH, as orlov-populate reads it */
				if (meta_epoch_from_env(&o->meta) ||
				    !o->meta.has_epoch)
					return ORLOV_ERR_USAGE;
			} else if ((c != 'u' && c != 'g') ||
				 id_map_parse(c == 'u' ? &o->meta.uid : &o->meta.gid, optarg))
				return ORLOV_ERR_USAGE;
		}
		nargs = argc - optind;
	} else {
		return ORLOV_ERR_USAGE;
	}
	/* Every command takes its images, then an optional PATH. */
	if (nargs < (o->cmd == CMD_STATS || o->cmd == CMD_DUMP ? 1 : 2) ||
	    nargs > maxargs)
		return ORLOV_ERR_USAGE;
	o->image = argv[optind];
	switch (o->cmd) {
	case CMD_DUMP:
		if (nargs == 2)
			path = argv[optind + 1];
		break;
	case CMD_DIFF:
		o->image2 = argv[optind + 1];
		if (nargs == 3)
			path = argv[optind + 2];
		break;
	case CMD_VERIFY:
		o->source = argv[optind + 1];
		if (nargs == 3)
			path = argv[optind + 2];
		break;
	default:
		break;
	}
	return ir_normalize_path(path, &o->path);
}

/* Where an error happened, for the one com_err line main() prints. */
struct errctx {
	struct strbuf msg;
};

static errcode_t ctx_set(struct errctx *ctx, errcode_t err, const char *doing,
			 const char *what)
{
	if (!err || ctx->msg.len)
		return err;
	if (!sb_printf(&ctx->msg, "while %s ", doing) && what)
		sb_escaped(&ctx->msg, what, strlen(what));
	return err;
}

static errcode_t open_image(const char *name, ext2_filsys *fs,
			    struct errctx *ctx)
{
	errcode_t err = ctx_set(ctx, ir_open(name, fs), "opening image", name);
	char kind[256];
	const char *is;

	if (err == ORLOV_ERR_NOT_EXT2 &&
	    (is = ir_probe(name, kind, sizeof(kind))) != NULL)
		sb_printf(&ctx->msg, ": %s", is);
	return err;
}

static errcode_t check_output(struct errctx *ctx)
{
	if (fflush(stdout) || ferror(stdout))
		return ctx_set(ctx, errno ? errno : EIO, "writing", "output");
	return 0;
}

/* ---- dump ---- */

struct dump {
	ext2_filsys fs;
	struct strbuf line;
};

static errcode_t dump_one(const char *path, ext2_ino_t ino,
			  struct ext2_inode_large *inode, void *priv)
{
	struct dump *d = priv;
	errcode_t err;

	sb_truncate(&d->line, 0);
	err = ir_describe(d->fs, ino, inode, &d->line);
	if (err)
		return err;
	fput_escaped(stdout, path, strlen(path));
	printf(" %s\n", d->line.s);
	return 0;
}

static errcode_t cmd_dump(const struct options *o, struct errctx *ctx)
{
	struct dump d;
	errcode_t err;

	memset(&d, 0, sizeof(d));
	err = open_image(o->image, &d.fs, ctx);
	if (err)
		return err;
	err = ir_walk(d.fs, o->path, dump_one, &d, &ctx->msg);
	if (!err)
		err = check_output(ctx);
	sb_free(&d.line);
	ext2fs_close_free(&d.fs);
	return err;
}

/* ---- diff ---- */

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
static errcode_t list_image(const char *name, const char *path,
			    struct listing *l, int *absent,
			    struct errctx *ctx)
{
	ext2_ino_t ino;
	errcode_t err;

	err = open_image(name, &l->fs, ctx);
	if (err)
		return err;
	err = ir_lookup(l->fs, path, &ino);
	if (err == EXT2_ET_FILE_NOT_FOUND) {
		*absent = 1;
		return 0;
	}
	*absent = 0;
	err = ir_walk(l->fs, path, collect_one, l, &ctx->msg);
	if (err && ctx->msg.len) {
		/* Say which image the walk failed in. */
		sb_append(&ctx->msg, " in ", 4);
		sb_escaped(&ctx->msg, name, strlen(name));
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

static errcode_t cmd_diff(const struct options *o, struct errctx *ctx)
{
	struct listing exp, act;
	size_t i = 0, j = 0, paths = 0, same_ino = 0, same_blocks = 0;
	int exp_absent = 0, act_absent = 0, differs = 0;
	errcode_t err;

	memset(&exp, 0, sizeof(exp));
	memset(&act, 0, sizeof(act));
	err = list_image(o->image, o->path, &exp, &exp_absent, ctx);
	if (!err)
		err = list_image(o->image2, o->path, &act, &act_absent, ctx);
	if (!err && exp_absent && act_absent)
		err = ctx_set(ctx, EXT2_ET_FILE_NOT_FOUND,
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

/* ---- stats ---- */

static errcode_t cmd_stats(const struct options *o, struct errctx *ctx)
{
	ext2_filsys fs;
	struct ir_dir root = { 0 };
	unsigned char *top = NULL;
	unsigned long long dirs = 0, top_dirs = 0, top_groups = 0;
	uint32_t ipg;
	dgrp_t g;
	size_t i;
	errcode_t err;

	err = open_image(o->image, &fs, ctx);
	if (err)
		return err;
	ipg = fs->super->s_inodes_per_group;
	/*
	 * The descriptors' counters are what the kernel's allocator reads,
	 * and the only place the per-group directory count lives.
	 */
	for (g = 0; g < fs->group_desc_count; g++) {
		printf("group=%lu inodes_used=%lu dirs=%lu blocks_used=%lu\n",
		       (unsigned long)g,
		       (unsigned long)(ipg - ext2fs_bg_free_inodes_count(fs, g)),
		       (unsigned long)ext2fs_bg_used_dirs_count(fs, g),
		       (unsigned long)(ext2fs_group_blocks_count(fs, g) -
				       ext2fs_bg_free_blocks_count(fs, g)));
		dirs += ext2fs_bg_used_dirs_count(fs, g);
	}
	err = ctx_set(ctx, ir_read_dir(fs, EXT2_ROOT_INO, &root),
		      "reading directory", "/");
	if (!err) {
		top = calloc(fs->group_desc_count, 1);
		if (!top)
			err = ENOMEM;
	}
	for (i = 0; !err && i < root.n; i++) {
		struct ext2_inode_large inode;
		ext2_ino_t ino = root.e[i].ino;
		dgrp_t grp;

		err = ir_read_inode(fs, ino, &inode);
		if (err) {
			struct strbuf p = { 0 };

			if (!path_join("/", root.e[i].name, root.e[i].len,
				       &p.s))
				ctx_set(ctx, err, "reading inode of", p.s);
			free(p.s);
			break;
		}
		if (!LINUX_S_ISDIR(inode.i_mode))
			continue;
		top_dirs++;
		grp = (ino - 1) / ipg;
		if (grp < fs->group_desc_count && !top[grp]) {
			top[grp] = 1;
			top_groups++;
		}
	}
	ir_dir_free(&root);
	if (!err) {
		printf("groups=%lu dirs=%llu top_level_dirs=%llu "
		       "top_level_groups=%llu\n",
		       (unsigned long)fs->group_desc_count, dirs, top_dirs,
		       top_groups);
		err = check_output(ctx);
	}
	free(top);
	ext2fs_close_free(&fs);
	return err;
}

/* ---- verify ---- */

/* One non-directory source path, for the hard link check at the end. */
struct vlink {
	dev_t dev;
	ino_t ino;
	ext2_ino_t img;
	unsigned int img_links;
	char *path;		/* image path */
};

struct verify {
	ext2_filsys fs;
	int path_is_root;	/* PATH is "/": lost+found may be extra */
	unsigned long long verified, mismatches;
	struct vlink *links;
	size_t nlinks, cap;
	struct strbuf ipath;	/* image path of the current entry */
	struct strbuf spath;	/* host path, for error messages */
	struct errctx *ctx;
	const struct meta_rules *meta;
	int have_proc;		/* /proc/self/fd names what is held open */
	unsigned char *sbuf, *ibuf;
};

#define VBUF_SIZE 65536

static void mismatch(struct verify *v, const char *what, const char *exp,
		     const char *got)
{
	v->mismatches++;
	fputs("mismatch: ", stdout);
	fput_escaped(stdout, v->ipath.s, v->ipath.len);
	printf(": %s (expected %s, got %s)\n", what, exp, got);
}

static void mismatch_u(struct verify *v, const char *what,
		       unsigned long long exp, unsigned long long got)
{
	char e[32], g[32];

	snprintf(e, sizeof(e), "%llu", exp);
	snprintf(g, sizeof(g), "%llu", got);
	mismatch(v, what, e, g);
}

static errcode_t vfail(struct verify *v, errcode_t err, const char *doing)
{
	return ctx_set(v->ctx, err, doing, v->spath.s);
}

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

static const char *host_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:	return "dir";
	case S_IFREG:	return "file";
	case S_IFLNK:	return "symlink";
	case S_IFIFO:	return "fifo";
	case S_IFSOCK:	return "sock";
	case S_IFCHR:	return "chr";
	case S_IFBLK:	return "blk";
	}
	return NULL;
}

/* Only the namespaces ext2 stores; others (e.g. system.nfs4_acl) can't be. */
static int xattr_wanted(const char *name)
{
	return !strncmp(name, "user.", 5) || !strncmp(name, "trusted.", 8) ||
	       !strncmp(name, "security.", 9) ||
	       !strcmp(name, "system.posix_acl_access") ||
	       !strcmp(name, "system.posix_acl_default");
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct ir_xattr *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * The source's attributes: through @fd when the entry was opened, else
 * through @path (a /proc/self/fd path below the parent directory, which
 * never follows a symlink in the last component; without /proc the host
 * path, l*xattr not following the last one either).
 */
static ssize_t src_list(int fd, const char *path, char *buf, size_t size)
{
	return fd >= 0 ? flistxattr(fd, buf, size) :
			 llistxattr(path, buf, size);
}

static ssize_t src_get(int fd, const char *path, const char *name, void *buf,
		       size_t size)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, size) :
			 lgetxattr(path, name, buf, size);
}

static errcode_t read_src_xattrs(int fd, const char *path,
				 struct ir_xattrs *out)
{
	char *names = NULL, *p;
	ssize_t len;
	size_t cap = 0;
	errcode_t err = 0;

	memset(out, 0, sizeof(*out));
	for (;;) {
		len = src_list(fd, path, NULL, 0);
		if (len < 0) {
			/* A filesystem without xattrs simply has none. */
			if (errno == ENOTSUP)
				return 0;
			return errno;
		}
		if (!len)
			return 0;
		free(names);
		names = malloc((size_t)len);
		if (!names)
			return ENOMEM;
		len = src_list(fd, path, names, (size_t)len);
		if (len >= 0)
			break;
		if (errno != ERANGE) {
			free(names);
			return errno;
		}
	}
	for (p = names; !err && p < names + len; p += strlen(p) + 1) {
		struct ir_xattr *x;
		ssize_t vl;

		if (!xattr_wanted(p))
			continue;
		if (grow_array(&out->a, &cap, out->n + 1, sizeof(*out->a), 8)) {
			err = ENOMEM;
			break;
		}
		x = &out->a[out->n];
		memset(x, 0, sizeof(*x));
		x->name = strdup(p);
		if (!x->name) {
			err = ENOMEM;
			break;
		}
		out->n++;
		for (;;) {
			vl = src_get(fd, path, p, NULL, 0);
			if (vl < 0) {
				err = errno;
				break;
			}
			free(x->value);
			x->value = malloc(vl ? (size_t)vl : 1);
			if (!x->value) {
				err = ENOMEM;
				break;
			}
			vl = src_get(fd, path, p, x->value, (size_t)vl);
			if (vl >= 0) {
				x->len = (size_t)vl;
				break;
			}
			if (errno != ERANGE) {
				err = errno;
				break;
			}
		}
	}
	free(names);
	if (err) {
		ir_xattrs_free(out);
		return err;
	}
	if (out->n > 1)
		qsort(out->a, out->n, sizeof(*out->a), xattr_cmp);
	return 0;
}

static errcode_t escaped(struct strbuf *b, const void *s, size_t n)
{
	sb_truncate(b, 0);
	if (!n)
		return sb_append(b, "\"\"", 2);
	return sb_escaped(b, s, n);
}

static errcode_t compare_xattrs(struct verify *v, int fd, const char *proc,
				ext2_ino_t ino, const struct ext2_inode_large *inode)
{
	struct ir_xattrs sx, ix;
	struct strbuf what = { 0 }, e = { 0 }, g = { 0 };
	size_t i = 0, j = 0;
	errcode_t err;

	err = read_src_xattrs(fd, proc, &sx);
	if (err)
		return vfail(v, err, "reading extended attributes of");
	err = ir_read_xattrs(v->fs, ino, inode, &ix);
	if (err == ORLOV_ERR_CORRUPT) {
		/* Corruption is what verify is for: report it, go on. */
		if (ix.corrupt & IR_XATTR_BAD_INODE)
			mismatch(v, "in-inode xattrs", "valid", "corrupt");
		if (ix.corrupt & IR_XATTR_BAD_BLOCK)
			mismatch(v, "xattr block", "valid", "corrupt");
		ir_xattrs_free(&sx);
		return 0;
	}
	if (err) {
		ir_xattrs_free(&sx);
		return ctx_set(v->ctx, err, "reading extended attributes of",
			       v->ipath.s);
	}
	while (!err && (i < sx.n || j < ix.n)) {
		int c = i >= sx.n ? 1 : j >= ix.n ? -1 :
			strcmp(sx.a[i].name, ix.a[j].name);
		const struct ir_xattr *x = c <= 0 ? &sx.a[i] : &ix.a[j];
		size_t copies = 0, in_inode = 0;

		/* The image's copies of this name: more than one (in the
		 * inode and the block, or twice in one) is corruption; the
		 * first is the one ext4 reads, compared below. */
		while (c >= 0 && j + copies < ix.n &&
		       !strcmp(ix.a[j + copies].name, ix.a[j].name))
			in_inode += ix.a[j + copies++].in_inode != 0;
		sb_truncate(&what, 0);
		err = sb_append(&what, "xattr ", 6);
		if (!err)
			err = sb_escaped(&what, x->name, strlen(x->name));
		if (err)
			break;
		if (copies > 1) {
			char got[64];

			if (in_inode && in_inode < copies)
				snprintf(got, sizeof(got),
					 "in the inode and the block");
			else
				snprintf(got, sizeof(got), "%zu copies in the %s",
					 copies, in_inode ? "inode" : "block");
			mismatch(v, what.s, "one copy", got);
		}
		if (c < 0) {
			mismatch(v, what.s, "present", "missing");
		} else if (c > 0) {
			mismatch(v, what.s, "absent", "present");
		} else if (sx.a[i].len != ix.a[j].len ||
			   memcmp(sx.a[i].value, ix.a[j].value,
				  sx.a[i].len)) {
			err = escaped(&e, sx.a[i].value, sx.a[i].len);
			if (!err)
				err = escaped(&g, ix.a[j].value, ix.a[j].len);
			if (!err)
				mismatch(v, what.s, e.s, g.s);
		}
		i += c <= 0;
		j += c >= 0 ? copies : 0;
	}
	sb_free(&what);
	sb_free(&e);
	sb_free(&g);
	ir_xattrs_free(&sx);
	ir_xattrs_free(&ix);
	return err;
}

static errcode_t compare_data(struct verify *v, int fd, ext2_ino_t ino,
			      struct ext2_inode_large *inode, off_t ssize)
{
	uint64_t isize = EXT2_I_SIZE(inode), off = 0;
	uint64_t n = (uint64_t)ssize < isize ? (uint64_t)ssize : isize;
	ext2_file_t f;
	errcode_t err, err2;

	err = ext2fs_file_open2(v->fs, ino, (struct ext2_inode *)inode, 0, &f);
	if (err)
		return ctx_set(v->ctx, err, "opening image file", v->ipath.s);
	while (!err && off < n) {
		size_t want = n - off < VBUF_SIZE ? (size_t)(n - off) :
						    VBUF_SIZE;
		unsigned int got;
		ssize_t r;
		size_t k;

		r = pread(fd, v->sbuf, want, (off_t)off);
		if (r < 0) {
			err = vfail(v, errno, "reading");
			break;
		}
		if (!r)
			break;	/* source shrank: the size check said so */
		err = ext2fs_file_read(f, v->ibuf, (unsigned int)r, &got);
		if (err) {
			err = ctx_set(v->ctx, err, "reading image file",
				      v->ipath.s);
			break;
		}
		if (memcmp(v->sbuf, v->ibuf, got) || got < (size_t)r) {
			char what[64], e[8], g[16];

			for (k = 0; k < got && v->sbuf[k] == v->ibuf[k]; k++)
				;
			snprintf(what, sizeof(what), "data at offset %llu",
				 (unsigned long long)(off + k));
			snprintf(e, sizeof(e), "0x%02x", v->sbuf[k]);
			if (k < got)
				snprintf(g, sizeof(g), "0x%02x", v->ibuf[k]);
			else
				snprintf(g, sizeof(g), "end of file");
			mismatch(v, what, e, g);
			break;
		}
		off += (size_t)r;
	}
	err2 = ext2fs_file_close(f);
	return err ? err : err2;
}

static void compare_time(struct verify *v, const char *what,
			 const struct ext2_inode_large *inode,
			 enum ir_time which, const struct timespec *ts)
{
	int64_t sec, tmin, tmax;
	uint32_t nsec;
	int has_nsec;
	char e[48], g[48];
	struct timespec want = *ts;

	/* what orlov-populate stored: the time the inode can hold */
	meta_time_range(EXT2_INODE_SIZE(v->fs->super) >=
			EXT2_GOOD_OLD_INODE_SIZE + 32, &tmin, &tmax);
	meta_fit_time(&want, tmin, tmax);
	ts = &want;
	ir_inode_time(v->fs, inode, which, &sec, &nsec, &has_nsec);
	if (sec == (int64_t)ts->tv_sec &&
	    (!has_nsec || nsec == (uint32_t)ts->tv_nsec))
		return;
	if (has_nsec) {
		snprintf(e, sizeof(e), "%lld.%09ld", (long long)ts->tv_sec,
			 (long)ts->tv_nsec);
		snprintf(g, sizeof(g), "%lld.%09lu", (long long)sec,
			 (unsigned long)nsec);
	} else {
		snprintf(e, sizeof(e), "%lld", (long long)ts->tv_sec);
		snprintf(g, sizeof(g), "%lld", (long long)sec);
	}
	mismatch(v, what, e, g);
}

static errcode_t record_link(struct verify *v, const struct stat *st,
			     ext2_ino_t ino,
			     const struct ext2_inode_large *inode)
{
	struct vlink *l;

	if (grow_array(&v->links, &v->cap, v->nlinks + 1, sizeof(*v->links), 256))
		return ENOMEM;
	l = &v->links[v->nlinks];
	l->path = strdup(v->ipath.s);
	if (!l->path)
		return ENOMEM;
	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->img = ino;
	l->img_links = inode->i_links_count;
	v->nlinks++;
	return 0;
}

/* Open a source entry without following it and make sure it is @st's. */
static errcode_t open_entry(struct verify *v, int parent, const char *name,
			    int flags, const struct stat *st, int *fd)
{
	errcode_t err = walk_open_same(parent, name, st, flags, fd);

	if (err)
		*fd = -1;
	return err ? vfail(v, err, "opening") : 0;
}

/* One source entry against its image namesake (paths already pushed).
 * A directory's own entries are the caller's: it gets the directory open
 * in *dirfd (else -1) and its inode in *dinode. */
static errcode_t verify_entry(struct verify *v, int parent, const char *name,
			      const struct stat *st, ext2_ino_t ino,
			      int *dirfd, struct ext2_inode_large *dinode)
{
	struct ext2_inode_large inode;
	const char *stype, *itype;
	char e[64], g[64];
	char proc[64];
	int fd = -1;
	errcode_t err;

	err = ir_read_inode(v->fs, ino, &inode);
	if (err)
		return ctx_set(v->ctx, err, "reading inode of", v->ipath.s);
	stype = host_type(st->st_mode);
	itype = ir_type_name(inode.i_mode);
	if (!stype)
		return vfail(v, ORLOV_ERR_UNSUPP_FILETYPE, "examining");
	if (!itype || strcmp(stype, itype)) {
		/* Nothing else is comparable across types. */
		mismatch(v, "type", stype, itype ? itype : "invalid");
		return 0;
	}
	if ((st->st_mode & 07777) != (inode.i_mode & 07777)) {
		snprintf(e, sizeof(e), "%04o", (unsigned)(st->st_mode & 07777));
		snprintf(g, sizeof(g), "%04o", (unsigned)(inode.i_mode & 07777));
		mismatch(v, "mode", e, g);
	}
	if (st->st_uid != inode_uid(inode))
		mismatch_u(v, "uid", st->st_uid, inode_uid(inode));
	if (st->st_gid != inode_gid(inode))
		mismatch_u(v, "gid", st->st_gid, inode_gid(inode));
	/* A directory's size depends on the host filesystem: not compared. */
	if ((S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) &&
	    (uint64_t)st->st_size != EXT2_I_SIZE(&inode))
		mismatch_u(v, "size", (unsigned long long)st->st_size,
			   EXT2_I_SIZE(&inode));
	compare_time(v, "mtime", &inode, IR_MTIME, &st->st_mtim);
	compare_time(v, "ctime", &inode, IR_CTIME, &st->st_ctim);
	if (!S_ISDIR(st->st_mode)) {
		err = record_link(v, st, ino, &inode);
		if (err)
			return err;
	}

	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode)) {
		err = open_entry(v, parent, name,
				 S_ISDIR(st->st_mode) ? O_DIRECTORY : 0, st,
				 &fd);
		if (err)
			return err;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d/", parent);
	{
		struct strbuf pp = { 0 };

		/* without /proc (a chroot), by the host path instead */
		err = v->have_proc ? sb_append(&pp, proc, strlen(proc)) :
				     sb_append(&pp, v->spath.s, v->spath.len);
		if (!err && v->have_proc)
			err = sb_append(&pp, name, strlen(name));
		if (!err)
			err = compare_xattrs(v, fd, pp.s, ino, &inode);
		sb_free(&pp);
	}
	if (!err && S_ISREG(st->st_mode))
		err = compare_data(v, fd, ino, &inode, st->st_size);
	if (!err && S_ISLNK(st->st_mode)) {
		struct strbuf it = { 0 }, a = { 0 }, b = { 0 };
		char *target = malloc((size_t)st->st_size + 1);
		ssize_t r = -1;

		if (!target)
			err = ENOMEM;
		else
			r = readlinkat(parent, name, target,
				       (size_t)st->st_size + 1);
		if (!err && r < 0)
			err = vfail(v, errno, "reading symlink");
		else if (!err && r > st->st_size)
			err = vfail(v, ORLOV_ERR_SOURCE_CHANGED,
				    "reading symlink");
		if (!err) {
			err = ir_symlink_target(v->fs, ino, &inode, &it);
			if (err == ORLOV_ERR_CORRUPT) {
				mismatch(v, "symlink target", "readable",
					 "corrupt");
				err = 0;
			} else if (err) {
				err = ctx_set(v->ctx, err, "reading symlink",
					      v->ipath.s);
			} else if ((size_t)r != it.len ||
				   memcmp(target, it.s, it.len)) {
				err = escaped(&a, target, (size_t)r);
				if (!err)
					err = escaped(&b, it.s, it.len);
				if (!err)
					mismatch(v, "symlink target", a.s,
						 b.s);
			}
		}
		free(target);
		sb_free(&it);
		sb_free(&a);
		sb_free(&b);
	}
	if (!err && (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))) {
		unsigned int ma, mi;

		ir_rdev(&inode, &ma, &mi);
		if (ma != major(st->st_rdev) || mi != minor(st->st_rdev)) {
			snprintf(e, sizeof(e), "%u:%u", major(st->st_rdev),
				 minor(st->st_rdev));
			snprintf(g, sizeof(g), "%u:%u", ma, mi);
			mismatch(v, "rdev", e, g);
		}
	}
	*dirfd = -1;
	if (!err && S_ISDIR(st->st_mode)) {
		*dirfd = fd;
		*dinode = inode;
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return err;
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

static errcode_t cmd_verify(const struct options *o, struct errctx *ctx)
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

int main(int argc, char **argv)
{
	struct options o;
	struct errctx ctx = { { 0 } };
	errcode_t err;
	int status;

	add_error_table(&et_orlv_error_table);
	add_error_table(&et_ext2_error_table);
	err = parse_options(argc, argv, &o);
	if (err == ORLOV_ERR_USAGE) {
		usage(stderr);
		return 2;
	}
	if (err) {
		com_err(PROG, err, "while parsing arguments");
		return 2;
	}
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (o.version) {
		printf("%s %s\n", PROG, PACKAGE_VERSION);
		return 0;
	}
	switch (o.cmd) {
	case CMD_DUMP:
		err = cmd_dump(&o, &ctx);
		break;
	case CMD_DIFF:
		err = cmd_diff(&o, &ctx);
		break;
	case CMD_STATS:
		err = cmd_stats(&o, &ctx);
		break;
	case CMD_VERIFY:
		err = cmd_verify(&o, &ctx);
		break;
	default:
		err = ORLOV_ERR_USAGE;
		break;
	}
	/* A difference is the answer, not a failure: the summary says it. */
	if (!err)
		status = 0;
	else if (err == ORLOV_ERR_DIFFERENT || err == ORLOV_ERR_MISMATCH)
		status = 1;
	else {
		com_err(PROG, err, "%s", ctx.msg.len ? ctx.msg.s : "");
		status = 2;
	}
	sb_free(&ctx.msg);
	free(o.path);
	meta_rules_free(&o.meta);
	remove_error_table(&et_ext2_error_table);
	remove_error_table(&et_orlv_error_table);
	return status;
}
