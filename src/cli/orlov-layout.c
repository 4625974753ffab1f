// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-layout: show, compare and check where an ext2/ext3/ext4 image keeps
 * its inodes and blocks, so that orlov-populate's placement can be
 * tested against images the kernel wrote.  Images are only ever opened
 * read-only.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "image/image_read.h"
#include "lib/orlov_err.h"
#include "lib/util.h"
#include "source/meta.h"
#include "source/selabel.h"

#define PROG "orlov-layout"

static void usage(FILE *f)
{
	fputs(
"Usage: orlov-layout dump IMAGE [PATH]\n"
"       orlov-layout diff EXPECTED.img ACTUAL.img [PATH]\n"
"       orlov-layout stats IMAGE\n"
"       orlov-layout verify [--all-root] [--uid-map MAP] [--gid-map MAP]\n"
"                           [--root-owner UID:GID] [--root-attrs]\n"
"                           [--devtable FILE] [--no-xattrs] [--clamp]\n"
"                           [--squash-perms] [--file-contexts FILE]\n"
"                           [--fs-config FILE]\n"
"                           IMAGE SOURCE [PATH]\n"
"       orlov-layout -h|--help\n"
"       orlov-layout -V|--version\n"
"\n"
"Show where an ext2/ext3/ext4 image keeps its inodes and blocks.  Images\n"
"are opened read-only and never mounted.\n"
"\n"
"Every command takes, right after its name, for a filesystem inside a disk\n"
"image (for diff, in both images):\n"
"  --partition P   in partition P of the GPT or MBR table: its number,\n"
"                  GPT name or PARTUUID; a filesystem larger than the\n"
"                  partition is refused\n"
"  --offset BYTES  at BYTES into the image\n"
"\n"
"Paths are walked from PATH (default /) depth first, a directory before its\n"
"entries, entries sorted bytewise by name, \".\" and \"..\" skipped; hard links\n"
"appear under each of their paths.  Paths are printed absolute, with bytes\n"
"below 0x21, above 0x7e and '%' written as %XX.\n"
"\n"
"  dump    one line per path:\n"
"            PATH ino=N group=G TYPE blocks=LIST[ unwritten=LIST][ inline=SIZE]\n"
"                 [ xattr=BLOCK xrefs=R xcrc=C]\n"
"          TYPE is dir, file, symlink, fifo, sock, chr or blk; LIST is the\n"
"          inode's blocks in logical order, each indirect block or extent\n"
"          tree block (index or leaf) right before the blocks it maps, holes\n"
"          skipped, as ranges a-b of consecutive numbers or single numbers,\n"
"          comma-separated; - when empty.  unwritten= lists again the blocks\n"
"          of unwritten extents; inline= is the size of inline data, kept in\n"
"          the inode.  R is the attribute block's reference count, C the\n"
"          CRC32C of its bytes.  A damaged extent tree is an error.\n"
"  diff    compare the dump lines (inode number, type, block list, xattr\n"
"          block and its contents) of every path present in either image;\n"
"          print the first differing path (\"first difference: PATH\",\n"
"          \"expected: LINE\", \"actual:   LINE\", LINE being a dump line or\n"
"          \"missing\"), then\n"
"          \"paths=N same_inode=N same_blocks=N\".\n"
"  stats   per group \"group=G inodes_used=N dirs=N blocks_used=N[ flex=F]\"\n"
"          from the group descriptors; with flex_bg, per flex group\n"
"          \"flex=F groups=A-B inodes_used=N dirs=N blocks_used=N\"; then\n"
"          \"groups=N dirs=N top_level_dirs=N top_level_groups=N[ flex_groups=N\n"
"          top_level_flex_groups=N]\" (directories directly under /, and how\n"
"          many distinct groups and flex groups hold them).\n"
"  verify  compare the image subtree at PATH with SOURCE as orlov-populate\n"
"          reads it: a directory, or an archive (tar, pax, cpio...; - reads\n"
"          standard input): names, type, permission bits, uid, gid, size,\n"
"          file data, symlink targets, device numbers, mtime and ctime, link\n"
"          counts, i_blocks against the block map (extent tree blocks\n"
"          counted), extended attributes: those in the inode (after\n"
"          i_extra_isize in large inodes, where ext4 and mke2fs -d put them)\n"
"          and those in the attribute block, ACLs included; a name stored\n"
"          twice is a mismatch.  Each difference is printed as\n"
"          \"mismatch: PATH: what (expected X, got Y)\"; the last line is\n"
"          \"verified=N mismatches=M\".  PATH's own mode, owner and times\n"
"          are the image's unless --root-owner or --root-attrs say.\n"
"          SOURCE is first changed as orlov-populate changes it, given the\n"
"          same options: --all-root, --uid-map, --gid-map; --devtable FILE\n"
"          (the entries it adds and the modes and owners it sets);\n"
"          --no-xattrs (no attributes compared); --root-owner UID:GID (PATH's\n"
"          owner); --root-attrs (PATH's mode, owner, times and attributes\n"
"          are SOURCE's); --clamp: times after SOURCE_DATE_EPOCH (which must\n"
"          be set in the environment) become SOURCE_DATE_EPOCH;\n"
"          --squash-perms; --file-contexts FILE (each entry's\n"
"          security.selinux is the file's label for its path in the image,\n"
"          below PATH, not SOURCE's); --fs-config FILE (Android's fs_config:\n"
"          owners, permissions and security.capability from its lines).\n"
"\n"
"Exit status: 0 when all is well (diff: identical, verify: no mismatch),\n"
"1 when the images differ or mismatches were found, 2 on errors.\n",
	      f);
}

/* One of verify's options: those of orlov-populate that decide what the
 * image holds, and --clamp; or where the filesystem is, any command's. */
static errcode_t verify_option(int c, const char *arg, struct layout_opts *o)
{
	switch (c) {
	case 'P':
		o->where.partition = arg;
		return o->where.offset ? ORLOV_ERR_USAGE : 0;
	case 'O':
		return parse_u64(arg, INT64_MAX, &o->where.offset) ||
		       o->where.partition ? ORLOV_ERR_USAGE : 0;
	case 'r':
		o->meta.all_root = 1;
		return 0;
	case 'c':
		/* SOURCE_DATE_EPOCH, as orlov-populate reads it */
		if (meta_epoch_from_env(&o->meta) || !o->meta.has_epoch)
			return ORLOV_ERR_USAGE;
		return 0;
	case 'u':
	case 'g':
		return id_map_parse(c == 'u' ? &o->meta.uid : &o->meta.gid,
				    arg);
	case 'd':
		o->devtable = arg;
		return 0;
	case 'x':
		o->xattrs = 0;
		return 0;
	case 'o':
		o->root_owner = 1;
		return meta_owner_parse(arg, &o->root_uid, &o->root_gid);
	case 'a':
		o->root_attrs = 1;
		return 0;
	case 's':
		o->meta.squash_perms = 1;
		return 0;
	case 'L':
		o->meta.file_contexts = arg;
		return 0;
	case 'f':
		o->fs_config = arg;
		return 0;
	}
	return ORLOV_ERR_USAGE;
}

static errcode_t parse_options(int argc, char **argv, struct layout_opts *o)
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
		{ "devtable", required_argument, NULL, 'd' },
		{ "no-xattrs", no_argument, NULL, 'x' },
		{ "root-owner", required_argument, NULL, 'o' },
		{ "root-attrs", no_argument, NULL, 'a' },
		{ "squash-perms", no_argument, NULL, 's' },
		{ "file-contexts", required_argument, NULL, 'L' },
		{ "fs-config", required_argument, NULL, 'f' },
		{ "partition", required_argument, NULL, 'P' },
		{ "offset", required_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 }
	};
	/* the other commands: where the filesystem is, only */
	const struct option *disk_opts = verify_opts + 11;
	const char *path = "/";
	const char *cmd;
	int c, nargs, maxargs;

	memset(o, 0, sizeof(*o));
	o->xattrs = 1;
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
	} else {
		return ORLOV_ERR_USAGE;
	}
	/* its options, between the command and IMAGE */
	argv += optind - 1;
	argc -= optind - 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+", o->cmd == CMD_VERIFY ?
				verify_opts : disk_opts, NULL)) != -1)
		if (verify_option(c, optarg, o))
			return ORLOV_ERR_USAGE;
	nargs = argc - optind;
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

/* verify's --file-contexts, read before anything else as orlov-populate
 * reads it: a file libselinux refuses is named as given, with
 * libselinux's words (the walk's own error would name it below SOURCE). */
static errcode_t check_file_contexts(const char *file, struct errctx *ctx)
{
	struct strbuf why = { 0 };
	errcode_t err = selabel_try(file, &why);

	if (err == ORLOV_ERR_USAGE) {
		err = EINVAL;
		sb_free(&why);
		sb_append(&why, "not a regular file", 18);
	}
	errctx_set(ctx, err, "reading --file-contexts", file);
	if (err && why.len)
		errctx_detail(ctx, why.s, why.len);
	sb_free(&why);
	return err;
}

int main(int argc, char **argv)
{
	struct layout_opts o;
	struct errctx ctx = { 0 };
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
		err = layout_dump(&o, &ctx);
		break;
	case CMD_DIFF:
		err = layout_diff(&o, &ctx);
		break;
	case CMD_STATS:
		err = layout_stats(&o, &ctx);
		break;
	case CMD_VERIFY:
		err = o.meta.file_contexts ?
			check_file_contexts(o.meta.file_contexts, &ctx) : 0;
		if (!err)
			err = layout_verify(&o, &ctx);
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
		if (errctx_isset(&ctx))
			com_err(PROG, err, "while %s %s%s%s", ctx.what,
				ctx.where ? ctx.where : "",
				ctx.detail ? ": " : "",
				ctx.detail ? ctx.detail : "");
		else
			com_err(PROG, err, "%s", "");
		status = 2;
	}
	errctx_clear(&ctx);
	free(o.path);
	meta_rules_free(&o.meta);
	remove_error_table(&et_ext2_error_table);
	remove_error_table(&et_orlv_error_table);
	return status;
}
