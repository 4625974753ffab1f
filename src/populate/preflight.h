/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_PREFLIGHT_H
#define ORLOV_POPULATE_PREFLIGHT_H

#include "populate/inputs.h"

/* Everything that can be refused before IMAGE is opened; SOURCE's
 * archive and the device table read. */
errcode_t before_open(const struct populate_opts *o, struct populate_result *res,
		      struct inputs *in);
void inputs_free(struct inputs *in);
/* The image's files, and with --create the IMAGE it replaces: an image
 * inside SOURCE is not copied into itself. */
void own_files(struct inputs *in, const struct image *img);

#endif
