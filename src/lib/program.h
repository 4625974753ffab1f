/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_LIB_PROGRAM_H
#define ORLOV_LIB_PROGRAM_H

#include <stddef.h>
#include <et/com_err.h>

#include "lib/util.h"

/* Run the first of @progs that exists (PATH is searched for a bare name)
 * with @argv and @envp, stdin and stdout on /dev/null, stderr too if
 * @quiet; *status is its exit code, 256 if a signal killed it.  ENOENT:
 * none of them exists.  With @msgs, its stderr is appended there instead
 * (the first 4 KiB): a library prints nothing, it hands the words back. */
errcode_t run_program(const char *const *progs, size_t nprogs,
		      char *const argv[], char *const envp[], int quiet,
		      struct strbuf *msgs, int *status);

#endif
