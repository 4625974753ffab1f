// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A caller of liborlov for tests/t-libapi.sh, built as a program outside
 * the project would be: only <orlov/orlov.h> (and, built against an
 * installed copy, <orlov/orlov_err.h>), linked with the shared library.
 *
 *   libapi [-o NAME=VALUE]... [-f FLAG]... [-a WORD]... [-e EPOCH] [-s]
 *          IMAGE SOURCE
 *
 * -o sets a string member, -f a flag, -a appends a word to args, -e sets
 * source_date_epoch; -s prints the result's figures; -r makes the call
 * twice, the first with copies of the -a words freed after it (what it
 * left behind must not reach them, nor change the second).  An error is printed
 * as orlov-populate prints it ("orlov-populate: MESSAGE while WHAT PATH"),
 * then "code N" and, for a usage error, "usage: WHY"; exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <orlov/orlov.h>
#ifdef LIBAPI_INSTALLED
#include <orlov/orlov_err.h>
#endif

static int set_string(struct orlov_options *o, char *arg)
{
	static const struct {
		const char *name;
		size_t off;
	} m[] = {
		{ "target", offsetof(struct orlov_options, target) },
		{ "create", offsetof(struct orlov_options, create) },
		{ "fs_type", offsetof(struct orlov_options, fs_type) },
		{ "block_size", offsetof(struct orlov_options, block_size) },
		{ "kernel", offsetof(struct orlov_options, kernel) },
		{ "driver", offsetof(struct orlov_options, driver) },
		{ "uid_map", offsetof(struct orlov_options, uid_map) },
		{ "policy", offsetof(struct orlov_options, policy) },
		{ "inodes", offsetof(struct orlov_options, inodes) },
	};
	char *eq = strchr(arg, '=');
	size_t i;

	if (!eq)
		return -1;
	*eq = 0;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(arg, m[i].name)) {
			*(const char **)((char *)o + m[i].off) = eq + 1;
			return 0;
		}
	return -1;
}

static int set_flag(struct orlov_options *o, const char *name)
{
	static const struct {
		const char *name;
		unsigned int flag;
	} f[] = {
		{ "atomic", ORLOV_ATOMIC }, { "in_place", ORLOV_IN_PLACE },
		{ "no_fsck", ORLOV_NO_FSCK }, { "dry_run", ORLOV_DRY_RUN },
		{ "all_root", ORLOV_ALL_ROOT }, { "merge", ORLOV_MERGE },
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(name, f[i].name)) {
			o->flags |= f[i].flag;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	struct orlov_options o;
	struct orlov_result r;
	const char *args[32];
	char *copies[32];
	int nargs = 0, stats = 0, repeat = 0, c;
	long err;

	orlov_options_init(&o);
	while ((c = getopt(argc, argv, "o:f:a:e:sr")) != -1) {
		if ((c == 'o' && set_string(&o, optarg)) ||
		    (c == 'f' && set_flag(&o, optarg)) ||
		    (c == 'a' && nargs == 31) || c == '?') {
			fprintf(stderr, "libapi: bad -%c %s\n", c,
				optarg ? optarg : "");
			return 2;
		}
		if (c == 'a')
			args[nargs++] = optarg;
		if (c == 'e') {
			o.has_source_date_epoch = 1;
			o.source_date_epoch = strtoull(optarg, NULL, 10);
		}
		stats |= c == 's';
		repeat |= c == 'r';
	}
	args[nargs] = NULL;
	if (nargs)
		o.args = args;
	if (argc - optind != 2) {
		fprintf(stderr, "libapi: IMAGE SOURCE\n");
		return 2;
	}
	c = optind;
	do {
		int i;

		if (repeat && nargs) {
			for (i = 0; i < nargs; i++)
				copies[i] = strdup(args[i]);
			copies[nargs] = NULL;
			o.args = (const char *const *)copies;
		}
		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		err = orlov_populate(argv[c], argv[c + 1], &o, &r);
		if (optind != c) {
			printf("orlov_populate changed optind\n");
			return 1;
		}
		if (repeat)
			orlov_result_free(&r);
		for (i = 0; repeat && i < nargs; i++)
			free(copies[i]);
		o.args = nargs ? args : NULL;
	} while (repeat--);
	if (err) {
		printf("orlov-populate: %s while %s %s%s%s\ncode %ld\n",
		       orlov_strerror(err), r.what,
		       r.path ? r.path : argv[optind], r.detail ? ": " : "",
		       r.detail ? r.detail : "", err);
		if (r.usage)
			printf("usage: %s\n", r.usage);
#ifdef LIBAPI_INSTALLED
		if (r.usage && err != ORLOV_ERR_USAGE)
			printf("not ORLOV_ERR_USAGE\n");
#endif
	} else if (stats) {
		printf("%llu entries, %llu bytes, %u groups used\n", r.entries,
		       r.bytes, r.groups_used);
	}
	orlov_result_free(&r);
	if (r.what || r.path || r.usage || r.in_place || r.racy_at ||
	    r.detail) {
		printf("orlov_result_free left a string\n");
		return 1;
	}
	return err ? 1 : 0;
}
