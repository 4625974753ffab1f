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
 * A COMMAND that fails stops the run there.  The shipped programs and
 * liborlov have no such hook to set: nothing in their environment can
 * make them run a command (tests/t-trust-lib.sh).
 */
#include "config.h"

#include <stdlib.h>

#include "cli/options.h"
#include "lib/orlov_err.h"

static errcode_t run_race(void *cookie)
{
	return system(cookie) == 0 ? 0 : ORLOV_ERR_USAGE;
}

/* options_parse(), and the hook set when ORLOV_RACE names a command */
static errcode_t race_options_parse(int argc, char **argv,
				    struct options *o, const char **msg)
{
	errcode_t err = options_parse(argc, argv, o, msg);
	const char *cmd = getenv("ORLOV_RACE");

	if (!err && cmd && *cmd) {
		o->p.between_passes = run_race;
		o->p.between_cookie = (void *)cmd;
	}
	return err;
}

/* orlov-populate's main(), its options_parse() the one above (options.h
 * is included already, so its declaration is not renamed) */
#define options_parse race_options_parse
#include "cli/orlov-populate.c"
