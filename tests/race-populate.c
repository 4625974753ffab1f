// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-populate with a race, for tests only (never installed):
 *
 *   ORLOV_RACE='COMMAND' race-populate [OPTIONS] IMAGE SOURCE...
 *
 * The same program as src/cli/orlov-populate.c, compiled in here, with
 * one difference: COMMAND runs through /bin/sh between the check pass and
 * the write pass (the engine's between_passes hook), so that a test can
 * change the source or the image there and the race happens every time.
 * A COMMAND that fails stops the run there.
 *
 * With ORLOV_RACE_ENTRY=PATH, COMMAND runs instead once the write pass
 * has written the entry PATH (as -v names it): after a file's data was
 * reserved, before ext4's writeback reads it again (--delalloc).
 *
 * The shipped programs and
 * liborlov have no such hook to set: nothing in their environment can
 * make them run a command (tests/t-trust-lib.sh).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "cli/summary.h"
#include "lib/orlov_err.h"

static errcode_t run_race(void *cookie)
{
	return system(cookie) == 0 ? 0 : ORLOV_ERR_USAGE;
}

/* The program's own events, and the race run on one entry's. */
struct entry_race {
	struct populate_events own;
	const char *cmd, *path;
	int ran;
};

static void race_entry(void *cookie, const char *path, uint32_t ino,
		       uint32_t group)
{
	struct entry_race *r = cookie;

	if (r->own.entry)
		r->own.entry(r->own.cookie, path, ino, group);
	/* -v's "/d/f" is the engine's "d/f" */
	if (!r->ran && !strcmp(path, r->path + (r->path[0] == '/'))) {
		r->ran = 1;
		if (system(r->cmd))
			fprintf(stderr, "race-populate: %s failed\n", r->cmd);
	}
}

static void race_progress(void *cookie, const struct populate_progress *p)
{
	struct entry_race *r = cookie;

	if (r->own.progress)
		r->own.progress(r->own.cookie, p);
}

static void race_archive(void *cookie, const char *source, const char *tmpdir,
			 int done)
{
	struct entry_race *r = cookie;

	if (r->own.archive)
		r->own.archive(r->own.cookie, source, tmpdir, done);
}

/* summary_events(), then the entry race wrapped around them: the events
 * live as long as main()'s run, so one race per process is all needed */
static void race_summary_events(const struct populate_opts *o,
				struct populate_events *ev)
{
	static struct entry_race r;
	const char *path = getenv("ORLOV_RACE_ENTRY");

	summary_events(o, ev);
	if (!path || !*path || !getenv("ORLOV_RACE"))
		return;
	r.own = *ev;
	r.cmd = getenv("ORLOV_RACE");
	r.path = path;
	ev->entry = race_entry;
	ev->progress = race_progress;
	ev->archive = race_archive;
	ev->cookie = &r;
}

/* options_parse(), and the hook set when ORLOV_RACE names a command */
static errcode_t race_options_parse(int argc, char **argv,
				    struct options *o, const char **msg)
{
	errcode_t err = options_parse(argc, argv, o, msg);
	const char *cmd = getenv("ORLOV_RACE");

	if (!err && cmd && *cmd && !getenv("ORLOV_RACE_ENTRY")) {
		o->p.between_passes = run_race;
		o->p.between_cookie = (void *)cmd;
	}
	return err;
}

/* orlov-populate's main(), its options_parse() the one above (options.h
 * is included already, so its declaration is not renamed) */
#define options_parse race_options_parse
#define summary_events race_summary_events
#include "cli/orlov-populate.c"
