/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_SCAN_H
#define ORLOV_POPULATE_SCAN_H

#include "populate/ctx.h"

/* Walk the source once: check it, and that it fits (the figures into
 * c->res). */
errcode_t first_pass(struct pop_ctx *c);

#endif
