/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_NAMEI_H
#define ORLOV_POPULATE_NAMEI_H

#include "populate/ctx.h"

/* The write pass's visitor of the source walk, on @c. */
void write_visitor(struct pop_ctx *c, struct walk_visitor *v);

#endif
