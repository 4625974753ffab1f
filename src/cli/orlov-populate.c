// SPDX-License-Identifier: GPL-2.0-or-later
/* orlov-populate: options in, exit code out. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "cli/options.h"
#include "cli/summary.h"
#include "populate/populate.h"
#include "lib/orlov_err.h"

int main(int argc, char **argv)
{
	const char *prog = "orlov-populate", *msg = "";
	struct options o;
	struct populate_result res;
	struct populate_events events;
	errcode_t err;

	add_error_table(&et_orlv_error_table);
	add_error_table(&et_ext2_error_table);
	err = options_parse(argc, argv, &o, &msg);
	if (err) {
		/* a file an option names that could not be read: not usage */
		com_err(prog, err, err == ORLOV_ERR_USAGE ? "(%s); try --help" :
			"while %s", msg);
		if (o.p.json)
			populate_json_error(&o.p, err, NULL, msg);
		options_free(&o);
		return 2;
	}
	if (o.help || o.version) {
		if (o.help)
			options_usage(stdout, prog, o.help);
		else
			printf("%s %s\n", prog, PACKAGE_VERSION);
		options_free(&o);
		return 0;
	}
	memset(&res, 0, sizeof(res));
	summary_events(&o.p, &events);
	o.p.events = &events;
	err = populate(&o.p, &res);
	/* done before anything else the run did, failed or not */
	if (res.rollback_applied)
		fprintf(stderr, "%s: put back the old bytes a killed run's copy "
			"into %s had overwritten (its rollback file)\n", prog,
			o.p.image);
	if (err) {
		struct strbuf words = { 0 };

		/* with the failing program's own words, if any, once */
		failure_words(&o.p, &res, &words);
		com_err(prog, err, "while %s", words.s ? words.s : "populating");
		sb_free(&words);
		/* a failure of a run that went in place: why it did */
		if (res.in_place_why)
			fprintf(stderr, "%s: note: %s was being written in place, "
				"as %s\n", prog, o.p.image, res.in_place_why);
		if (o.p.json)
			populate_json_error(&o.p, err, &res, NULL);
		populate_result_free(&res);
		options_free(&o);
		return 1;
	}
	print_summary(&o.p, &res);
	if (o.p.verbosity > 0) {
		char chosen[160];

		/* what the options left to the image, and the defaults */
		populate_choice_text(&res.chosen, chosen, sizeof(chosen));
		fprintf(stderr, "%s: %s\n", prog, chosen);
	}
	if (res.mount_unknown)
		fprintf(stderr, "%s: warning: no /proc/mounts or /etc/mtab: "
			"could not check whether %s is mounted\n", prog, o.p.image);
	if (res.stale_removed && o.p.verbosity >= 0)
		fprintf(stderr, "%s: removed %u stale cop%s of %s (.NAME.orlov-INODE) "
			"that killed runs had left\n", prog, res.stale_removed,
			res.stale_removed == 1 ? "y" : "ies", o.p.image);
	if (res.in_place_why)
		fprintf(stderr, "%s: warning: %s written in place, as %s: "
			"killed while it commits, it needs e2fsck -fy (--undo "
			"FILE makes the run undoable)\n", prog, o.p.image,
			res.in_place_why);
	if (res.setid_cleared)
		fprintf(stderr, "%s: warning: cleared the set-user-ID and "
			"set-group-ID bits of %u file%s whose owner --all-root, "
			"--uid-map or --gid-map changed, as chown(2) does (the "
			"first: %s); a --devtable or --fs-config line giving the "
			"mode keeps them\n", prog, res.setid_cleared,
			res.setid_cleared == 1 ? "" : "s",
			res.setid_first ? res.setid_first : "?");
	if (res.unwritten_at)
		fprintf(stderr, "%s: warning: delayed data of %s was written back "
			"while the file was being written, and the rest written "
			"without delay: ext4 maps that to unwritten extents at "
			"write time, which orlov-populate does not model; the "
			"layout from there on is not necessarily the kernel's\n",
			prog, res.unwritten_at);
	populate_result_free(&res);
	options_free(&o);
	return 0;
}
