/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What orlov-populate and orlov-mkfs print of a run once it is over. */
#ifndef ORLOV_CLI_SUMMARY_H
#define ORLOV_CLI_SUMMARY_H

#include "populate/populate.h"

/* @ev for @o's run: -v's lines, the progress line on a terminal. */
void summary_events(const struct populate_opts *o, struct populate_events *ev);
/* What a failed run was doing, where, and the failing program's words
 * ("writing data of SOURCE/a: ..."), for "PROGRAM: ERROR while WORDS". */
errcode_t failure_words(const struct populate_opts *o,
			const struct populate_result *res, struct strbuf *b);
/* The summary (-q: none), the dry run's figures, or --json's object. */
void print_summary(const struct populate_opts *o,
		   const struct populate_result *res);
/* --json: the error as one JSON object on standard output, for a caller
 * that reads only that; @res NULL and @usage the message for a usage
 * error. */
void populate_json_error(const struct populate_opts *o, errcode_t err,
			 const struct populate_result *res, const char *usage);

#endif
